"""FakeLLM: a scripted, strict stand-in for a chat model."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field

from agentkit.core.contracts.errors import AgentkitError
from agentkit.core.contracts.ports import Context
from agentkit.core.contracts.types import (
    ChatRequest,
    FinishReason,
    LLMResult,
    ReasoningDelta,
    ReasoningPart,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
)
from agentkit.core.runtime.cancelled_usage import report_cancelled_usage

__all__ = ["FakeLLM", "FakeLLMExhausted", "Turn"]


@dataclass(frozen=True, slots=True)
class Turn:
    """One scripted model answer."""

    content: str = ""
    """The text the model says."""
    tool_calls: tuple[ToolCall, ...] = ()
    """The tool calls the model asks for."""
    usage: Usage | None = None
    """Usage to report; by default roughly one token per four characters."""
    finish_reason: FinishReason | None = None
    """Why the model stopped; by default ``tool_calls`` or ``stop``."""
    error: Exception | None = field(default=None, kw_only=True)
    """Raise this instead of answering (to script a provider failure)."""
    reasoning: str | tuple[ReasoningPart, ...] = field(default=(), kw_only=True)
    """What the model thought first: a text (one part from provider ``"fake"``) or the
    parts themselves, to script a provider's opaque state. Streamed as
    :class:`ReasoningDelta` before the text."""
    held: bool = field(default=False, kw_only=True)
    """Never answer: the call is in flight (``FakeLLM.in_flight`` is set) until it is
    cancelled, and then reports its usage as spent (``report_cancelled_usage``), as a
    provider that was cut off mid-call would."""

    def __post_init__(self) -> None:
        reasoning = self.reasoning
        if isinstance(reasoning, str):
            parts = (ReasoningPart("fake", reasoning),) if reasoning else ()
            object.__setattr__(self, "reasoning", parts)
        elif not isinstance(reasoning, tuple | list) or not all(
            isinstance(p, ReasoningPart) for p in reasoning
        ):
            raise TypeError(
                f"Turn.reasoning must be a str or a tuple of ReasoningPart, got {reasoning!r}"
            )
        else:
            object.__setattr__(self, "reasoning", tuple(reasoning))

    @property
    def reasoning_parts(self) -> tuple[ReasoningPart, ...]:
        """:attr:`reasoning` as parts (a text was made one part on construction)."""
        reasoning = self.reasoning
        return () if isinstance(reasoning, str) else reasoning


class FakeLLMExhausted(AgentkitError, AssertionError):
    """FakeLLM was asked for more turns than its script holds."""


def _estimate_tokens(text: str) -> int:
    return (len(text) // 4 or 1) if text else 0


class FakeLLM:
    """A model that answers from a script, records every request, and is strict.

    ``FakeLLM()`` has an empty script (any call fails with :class:`FakeLLMExhausted`),
    ``FakeLLM("text")`` answers "text" to every call, and ``FakeLLM.script([...])``
    answers turn by turn. ``requests`` holds every :class:`ChatRequest` received;
    ``assert_all_used()`` fails when scripted turns were never asked for.
    ``in_flight`` is set once a ``Turn(held=True)`` call is waiting to be cancelled.
    """

    def __init__(self, reply: str | None = None, *, turns: Iterable[Turn] = ()) -> None:
        self._reply = reply
        self._turns: tuple[Turn, ...] = tuple(turns)
        self._next = 0
        self.requests: list[ChatRequest] = []
        self._in_flight: asyncio.Event | None = None

    @property
    def in_flight(self) -> asyncio.Event:
        """Set once a ``Turn(held=True)`` call is waiting to be cancelled."""
        # Made on first use: an Event holds a deque (~0.7 KB), and most fakes never
        # hold a call, so one per model would be 0.7 KB on every in-flight test run.
        if self._in_flight is None:
            self._in_flight = asyncio.Event()
        return self._in_flight

    @classmethod
    def script(cls, turns: Iterable[Turn]) -> FakeLLM:
        """A FakeLLM that answers with ``turns``, one per call, in order."""
        return cls(turns=turns)

    @property
    def remaining(self) -> int:
        """Scripted turns not yet used."""
        return len(self._turns) - self._next

    def assert_all_used(self) -> None:
        """Fail if any scripted turn was never asked for."""
        if self._reply is None and self.remaining:
            raise AssertionError(
                f"FakeLLM: {self.remaining} of {len(self._turns)} scripted turn(s) were never used"
            )

    def _take(self, request: ChatRequest) -> Turn:
        self.requests.append(request)
        if self._reply is not None:
            return Turn(content=self._reply)
        if self._next >= len(self._turns):
            raise FakeLLMExhausted(
                f"FakeLLM: the script has {len(self._turns)} turn(s) and all were used; "
                f"call {len(self.requests)} has no answer. Add a Turn to FakeLLM.script([...])."
            )
        turn = self._turns[self._next]
        self._next += 1
        if turn.error is not None:
            raise turn.error
        return turn

    def _result(self, request: ChatRequest, turn: Turn) -> LLMResult:
        usage = turn.usage
        reasoning = turn.reasoning_parts
        if usage is None:
            prompt = request.system + "".join([m.content for m in request.messages])
            usage = Usage(
                input_tokens=_estimate_tokens(prompt),
                output_tokens=_estimate_tokens(turn.content),
                requests=1,
                reasoning_tokens=_estimate_tokens("".join([p.text for p in reasoning]))
                if reasoning else 0,
            )
        finish: FinishReason = turn.finish_reason or ("tool_calls" if turn.tool_calls else "stop")
        return LLMResult(
            content=turn.content,
            tool_calls=turn.tool_calls,
            usage=usage,
            finish_reason=finish,
            model=request.model,
            reasoning=reasoning,
        )

    async def _hold(self, request: ChatRequest, turn: Turn) -> None:
        """A held turn's call: in flight until cancelled, then its usage reported."""
        self.in_flight.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            report_cancelled_usage(request.model, self._result(request, turn).usage)
            raise

    async def chat(self, request: ChatRequest, ctx: Context) -> LLMResult:
        """The next scripted answer."""
        turn = self._take(request)
        if turn.held:
            await self._hold(request, turn)
        return self._result(request, turn)

    async def stream(self, request: ChatRequest, ctx: Context) -> AsyncIterator[StreamEvent]:
        """The next scripted answer: its reasoning, its text word by word, its calls,
        then the complete result."""
        turn = self._take(request)
        if turn.held:
            await self._hold(request, turn)
        for part in turn.reasoning_parts:
            if part.text:
                yield ReasoningDelta(part.text)
        if turn.content:
            for index, word in enumerate(turn.content.split(" ")):
                yield TextDelta(word if index == 0 else " " + word)
        for index, call in enumerate(turn.tool_calls):
            yield ToolCallDelta(
                index=index,
                id=call.id,
                name=call.name,
                arguments_json=json.dumps(dict(call.arguments)),
            )
        yield self._result(request, turn)

    def __repr__(self) -> str:
        if self._reply is not None:
            return f"FakeLLM({self._reply!r})"
        return f"FakeLLM.script({len(self._turns)} turns, {self.remaining} left)"
