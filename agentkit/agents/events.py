"""Typed events ``agent.stream`` yields while a run progresses."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from agentkit.core.contracts.types import ToolCall, Usage
from agentkit.core.guardrails.running import GuardrailTrip

if TYPE_CHECKING:
    from agentkit.agents.result import AgentResult, Suspended

__all__ = [
    "AgentEvent",
    "FinalEvent",
    "GuardrailEvent",
    "InterruptEvent",
    "ReasoningDeltaEvent",
    "StepEvent",
    "TextDeltaEvent",
    "ToolCallEvent",
    "ToolResultEvent",
    "events_of",
]


@dataclass(frozen=True, slots=True)
class TextDeltaEvent:
    """A piece of the model's text as it streams."""

    text: str
    kind: Literal["text_delta"] = "text_delta"


@dataclass(frozen=True, slots=True)
class ReasoningDeltaEvent:
    """A piece of the model's reasoning (thinking, or its summary) as it streams; it
    comes before the text of the same step, and is never part of the answer."""

    text: str
    kind: Literal["reasoning_delta"] = "reasoning_delta"


@dataclass(frozen=True, slots=True)
class ToolCallEvent:
    """The model asked for a tool call (it may still be gated)."""

    call: ToolCall
    kind: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True, slots=True)
class ToolResultEvent:
    """A tool call finished; ``content`` is what the model will read."""

    call_id: str
    name: str
    content: str
    is_error: bool
    kind: Literal["tool_result"] = "tool_result"


@dataclass(frozen=True, slots=True)
class StepEvent:
    """A model call completed."""

    step: int
    usage: Usage
    model: str = field(default="", kw_only=True)
    """The model that answered (``LLMResult.model``, else the one asked for)."""
    kind: Literal["step"] = "step"


@dataclass(frozen=True, slots=True)
class InterruptEvent:
    """The run paused for a human."""

    suspended: Suspended
    kind: Literal["interrupt"] = "interrupt"


@dataclass(frozen=True, slots=True)
class GuardrailEvent:
    """A guardrail tripped: the run stops (the :class:`FinalEvent` follows)."""

    trip: GuardrailTrip
    kind: Literal["guardrail"] = "guardrail"


@dataclass(frozen=True, slots=True)
class FinalEvent:
    """The run stopped; the last event of a stream."""

    result: AgentResult
    kind: Literal["final"] = "final"


AgentEvent = (
    TextDeltaEvent | ReasoningDeltaEvent | ToolCallEvent | ToolResultEvent | StepEvent
    | InterruptEvent | GuardrailEvent | FinalEvent
)


async def events_of(
    start: Callable[[Callable[[AgentEvent], None]], Awaitable[AgentResult]],
) -> AsyncIterator[AgentEvent]:
    """Drive ``start`` in a task, yielding the events it emits, then its FinalEvent."""
    queue: asyncio.Queue[AgentEvent | None] = asyncio.Queue()

    async def drive() -> AgentResult:
        try:
            return await start(queue.put_nowait)
        finally:
            queue.put_nowait(None)

    task = asyncio.ensure_future(drive())
    try:
        while (event := await queue.get()) is not None:
            yield event
        yield FinalEvent(await task)
    finally:
        if not task.done():
            task.cancel()
