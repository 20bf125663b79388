"""``agentkit temporal worker MODULE[:ATTR]``: a Temporal worker for a module's agents."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable
from typing import Any

from agentkit.cli.errors import UsageError
from agentkit.cli.targets import load_target
from agentkit.core.runtime.context import RunContext

__all__ = ["find_agents", "worker_command"]


def find_agents(obj: Any, kinds: tuple[type, ...] | None = None) -> list[Any]:
    """The agents in ``obj``: an Agent, a list or tuple of them, or a module (its
    top-level Agents, in definition order); ``kinds`` widens what counts (``agentkit
    serve`` serves Workflows too)."""
    from agentkit.agents.agent import Agent

    kinds = kinds or (Agent,)
    if isinstance(obj, kinds):
        return [obj]
    if isinstance(obj, list | tuple):
        return [item for item in obj if isinstance(item, kinds)]
    values = vars(obj).values() if hasattr(obj, "__dict__") else ()
    return [value for value in values if isinstance(value, kinds)]


def worker_command(target: str, *, address: str, namespace: str, task_queue: str) -> int:
    """Run a worker for the agents ``target`` names until interrupted.

    The module must define ``context``: a zero-argument callable returning the base
    RunContext (model, store, middleware chains) the activities run on.
    """
    module, named = load_target(target)
    agents = find_agents(module if named is None else named)
    if not agents:
        raise UsageError(
            f"no agents found in {target!r}: point at a module with top-level Agent objects, "
            "an Agent, or a list of them"
        )
    context: Callable[[], RunContext] | None = getattr(module, "context", None)
    if not callable(context):
        raise UsageError(
            f"{module.__name__!r} has no context(): define `def context() -> RunContext` "
            "(e.g. returning agentkit.make_ctx(llm, store=...)) for the worker's activities"
        )
    try:
        asyncio.run(_serve(agents, context, address=address, namespace=namespace,
                           task_queue=task_queue))
    except _Unreachable as exc:
        # The SDK's native threads may still call into Python while the interpreter
        # finalizes after a failed connect (an abort, now and then): leave at once.
        print(f"agentkit: error: {exc}", file=sys.stderr, flush=True)
        os._exit(2)
    return 0


class _Unreachable(Exception):
    """The Temporal server could not be reached."""


async def _serve(
    agents: list[Any], context: Callable[[], RunContext], *, address: str, namespace: str,
    task_queue: str,
) -> None:
    from temporalio.client import Client

    from agentkit.integrations.temporal.worker import AgentWorker

    try:
        client = await Client.connect(address, namespace=namespace)
    except Exception as exc:
        raise _Unreachable(f"cannot reach Temporal at {address}: {exc}") from None
    worker = AgentWorker(client, task_queue=task_queue, agents=agents, context=context)
    print(
        f"agentkit: worker for {', '.join(a.name for a in agents)} on task queue "
        f"{task_queue!r} at {address} (namespace {namespace!r})",
        flush=True,
    )
    await worker.run()
