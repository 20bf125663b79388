"""An MCP tool call in flight: waiting for its answer, and saying what went wrong.

A call's request runs in the connection's own task; the run waits for it here, watching
the run's cancel token (a cancelled run abandons the request, and the server is told)
and the server's questions (an elicitation mid-call, which suspends the run, or is
refused when the request cannot be parked for the resumed run). Progress notifications
become ``tool.progress`` run events.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

import mcp.types as types
from mcp.shared.exceptions import MCPError

from agentkit.core.contracts.errors import ToolShapeError
from agentkit.integrations.mcp.server_requests import OpenCall

if TYPE_CHECKING:
    from agentkit.core.runtime.context import RunContext

__all__ = [
    "Progress",
    "explain",
    "is_validation_error",
    "shape_error",
    "shorten",
    "until_answered",
]

_CANCEL_POLL = 0.05
"""How often an in-flight call looks at the run's cancel token, in seconds."""


class Progress:
    """Turns a call's progress notifications into ``tool.progress`` run events (asking
    for them is what makes the SDK send a progress token)."""

    __slots__ = ("open_call", "server", "tool")

    def __init__(self, server: str, tool: str, open_call: OpenCall) -> None:
        self.server = server
        self.tool = tool
        self.open_call = open_call

    async def __call__(self, progress: float, total: float | None, message: str | None) -> None:
        ctx = self.open_call.ctx  # a resumed call reports to the resumed run
        if ctx is not None:
            ctx.emit(
                "tool.progress", server=self.server, tool=self.tool, done=progress,
                total=total, message=message,
            )


async def until_answered(
    open_call: OpenCall, ctx: RunContext | None, *, parkable: bool
) -> types.CallToolResult:
    """Await the call's request. If the run's cancel token is set meanwhile, abandon it
    (the server is told) and raise ``RunCancelled``. If the server asked a person a
    question, raise ``HumanInputRequired``, leaving the request open when it can be
    parked for the resumed run, else abandoning it."""
    task = open_call.request
    assert task is not None
    if ctx is not None:
        ctx.check_cancelled()
    asked = asyncio.ensure_future(open_call.asked.wait())
    try:
        while not task.done():
            await asyncio.wait((task, asked), timeout=_CANCEL_POLL,
                               return_when=asyncio.FIRST_COMPLETED)
            if task.done():
                break
            if ctx is not None and ctx.cancel.cancelled:
                task.cancel()
                await asyncio.wait((task,))
                ctx.check_cancelled()
            question = open_call.question
            if question is not None:
                if not parkable:
                    task.cancel()
                    await asyncio.wait((task,))
                raise question
        return task.result()
    finally:
        asked.cancel()


def is_validation_error(error: BaseException | None) -> bool:
    from jsonschema import ValidationError  # type: ignore[import-untyped]  # an SDK dependency

    return isinstance(error, ValidationError)


def shape_error(name: str, schema: Any, error: RuntimeError) -> ToolShapeError:
    cause = error.__cause__
    if is_validation_error(cause):
        path = "$" + "".join(
            f"[{p}]" if isinstance(p, int) else f".{p}"
            for p in getattr(cause, "absolute_path", ())
        )
        reason = f"{path}: {getattr(cause, 'message', cause)}"
        raw = getattr(cause, "instance", None)
    else:
        reason, raw = str(error), None
    return ToolShapeError(name, raw, json.dumps(schema, sort_keys=True), reason)


def shorten(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def explain(error: BaseException | None) -> str:
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if error is None:
        return "the connection was cancelled"
    if isinstance(error, MCPError):
        return f"{error.message} (MCP error {error.code})"
    return f"{type(error).__name__}: {error}"
