"""Task-augmented tool calls (MCP tasks, 2025-11-25): for tools that can only run as one.

A tool whose ``execution.taskSupport`` is ``"required"`` answers ``tools/call`` with a
task handle instead of a result; the client polls ``tasks/get`` at the server's
``pollInterval`` until the task ends, then fetches the result with ``tasks/result``.
Cancelling the caller sends ``tasks/cancel``. Status messages become ``tool.progress``
events without numbers.

The SDK's client checks every ``tools/call`` answer against ``CallToolResult``, so the
first request goes through the session's dispatcher, which returns the raw answer.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import mcp.types as types

if TYPE_CHECKING:
    from mcp.client.session import ClientSession

    from agentkit.core.runtime.context import RunContext

__all__ = ["call_as_task"]

_TTL_MS = 10 * 60 * 1000
"""How long the server should keep a task's result (it may keep it for less)."""
_DEFAULT_POLL_MS = 1000
_MAX_POLL_S = 5.0
_ENDED = frozenset({"completed", "failed", "cancelled", "input_required"})


async def call_as_task(
    session: ClientSession,
    name: str,
    arguments: Mapping[str, Any],
    meta: Mapping[str, Any] | None,
    timeout: float,
    ctx: RunContext | None,
    server: str,
) -> types.CallToolResult:
    """Run tool ``name`` as a task and return its result (``isError`` included)."""
    dispatcher = getattr(session, "_dispatcher", None)
    if dispatcher is None:
        raise RuntimeError(
            f"tool {name!r} can only run as an MCP task, and this version of the MCP SDK "
            "gives no way to send one"
        )
    params: dict[str, Any] = {"name": name, "arguments": dict(arguments), "task": {"ttl": _TTL_MS}}
    if meta:
        params["_meta"] = dict(meta)
    created = await dispatcher.send_raw_request("tools/call", params, {"timeout": timeout})
    if "task" not in created:
        return types.CallToolResult.model_validate(created, by_name=False)
    task = types.CreateTaskResult.model_validate(created, by_name=False).task
    try:
        status: Any = task
        last_message = None
        while status.status not in _ENDED:
            if ctx is not None and status.status_message != last_message:
                last_message = status.status_message
                ctx.emit("tool.progress", server=server, tool=name, done=None, total=None,
                         message=last_message)
            await asyncio.sleep(min((status.poll_interval or _DEFAULT_POLL_MS) / 1000, _MAX_POLL_S))
            status = await session.send_request(
                types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=task.task_id)),
                types.GetTaskResult,
            )
        return await session.send_request(
            types.GetTaskPayloadRequest(
                params=types.GetTaskPayloadRequestParams(task_id=task.task_id)
            ),
            types.CallToolResult,
        )
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            await asyncio.shield(session.send_request(
                types.CancelTaskRequest(
                    params=types.CancelTaskRequestParams(task_id=task.task_id)
                ),
                types.CancelTaskResult,
            ))
        raise
