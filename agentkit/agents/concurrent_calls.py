"""The tool calls of one turn, run concurrently: bounded, and stopped as a run stops.

Each call runs in a task of one ``asyncio.TaskGroup`` (the only tasks a turn makes;
a turn of a single call makes none, see :meth:`~agentkit.agents.run.AgentRun.answer_open_calls`),
at most ``max_concurrency`` at once. Once one call's outcome stops the run (budget,
cancellation, a guardrail), calls not yet started never start; the calls already under
way finish and are recorded. Answers are saved one at a time, under one lock.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from agentkit.agents.outcomes import Stopped, ToolOutcome
from agentkit.core.contracts.types import ToolCall

__all__ = ["answer_concurrently"]

Answer = Callable[[ToolCall, asyncio.Lock], Awaitable[ToolOutcome]]
"""Runs one call; the lock is held around each save of an answer."""


async def answer_concurrently(
    calls: Sequence[ToolCall], answer: Answer, max_concurrency: int
) -> dict[str, ToolOutcome]:
    """The outcome of each of ``calls`` that started, by call id."""
    outcomes: dict[str, ToolOutcome] = {}
    lock = asyncio.Lock()
    limit = asyncio.Semaphore(max_concurrency)

    async def bounded(call: ToolCall) -> None:
        async with limit:
            if any(isinstance(o, Stopped) for o in outcomes.values()):
                return  # the run is stopping: calls not yet started never start
            outcomes[call.id] = await answer(call, lock)

    tasks: list[asyncio.Task[None]] = []
    try:
        async with asyncio.TaskGroup() as group:
            for call in calls:
                tasks.append(group.create_task(bounded(call)))
    except BaseExceptionGroup as group_error:
        first = group_error.exceptions[0]
        raise first from first.__cause__
    # A TaskGroup ignores a child that ends cancelled; a tool that raised
    # CancelledError must still stop the run, as it does when it runs alone.
    if any(task.cancelled() for task in tasks):
        raise asyncio.CancelledError
    return outcomes
