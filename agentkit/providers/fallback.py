"""FallbackLLM: when one model cannot answer now, the same request goes to the next.

Each entry is a model to try, in order: a provider built for its model, a
``(provider, model id)`` pair, or a model spec (``"openai:gpt-4o-mini"``,
``"openai:llama3.1@http://localhost:11434/v1"``) built with :func:`llm_for`. A provider
given alone answers under the request's model (the agent's), which is what the primary
usually is. A call falls through to the next entry only on the failures ``on`` names:
by default a transient provider error (timeouts, dropped connections, 408/409/425,
rate limits, 5xx, Anthropic's 529 overload; :func:`is_transient` decides) and an open
circuit. Permanent errors (a bad request, bad credentials, a refused setting) fail the
call as they are, since another model would most likely refuse the same request, unless
``on`` names their kind (``on=("transient", "circuit_open", "billing")``).

The request an entry gets is translated for it (:func:`translated`): its own model id
and, where messages carry reasoning state, only that provider's own parts. Each answer
names the model that gave it (``LLMResult.model``), and each provider prices its usage
at its own model's price, so a run's cost, the step events, the chat span's
``gen_ai.response.model`` and ``AgentResult.usage_by_model`` say which model answered.
A stream falls through only before its first delta: after that the answer is already
half delivered, and a second model would deliver a different one after it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any

from agentkit.core.contracts.errors import ProviderError, is_transient
from agentkit.core.contracts.ports import LLM
from agentkit.core.contracts.types import ChatRequest, LLMResult, StreamEvent
from agentkit.core.policies.circuit import CircuitOpen
from agentkit.core.runtime.context import RunContext
from agentkit.providers.factory import llm_for
from agentkit.providers.spec import parse_model_spec

__all__ = ["FALL_THROUGH_KINDS", "FallbackLLM", "translated"]

FALL_THROUGH_KINDS = frozenset({
    "transient", "circuit_open", "bad_request", "authentication", "permission",
    "not_found", "request_too_large", "unprocessable", "billing", "context_length",
    "unsupported_setting", "malformed_reply", "error",
})
"""What ``on=`` may name: ``"transient"`` (any error :func:`is_transient` accepts),
``"circuit_open"`` (:class:`CircuitOpen`), or the ``kind`` of a permanent
:class:`ProviderError`."""

_DEFAULT_ON = ("transient", "circuit_open")

Entry = LLM | str | tuple[LLM, str]
"""A provider, a ``(provider, model id)`` pair, or a model spec string."""

_Middleware = Callable[[ChatRequest, RunContext, Callable[..., Awaitable[Any]]], Awaitable[Any]]


def translated(request: ChatRequest, model: str | None) -> ChatRequest:
    """``request`` as the entry for ``model`` gets it (None: the request's own model).

    This is where a transcript is made fit for another provider. Today that is the
    model id alone; once messages carry reasoning parts tagged with their provider
    (issue 28's reasoning contracts), the parts of any other provider are dropped here
    too, as each provider also refuses to send back state it did not produce.
    """
    if model is None or model == request.model:
        return request
    return dataclasses.replace(request, model=model)


def _entry(entry: object, index: int) -> tuple[LLM, str | None]:
    if isinstance(entry, str):
        return llm_for(entry), parse_model_spec(entry).model
    if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], str):
        llm, model = entry
        if _is_llm(llm) and model:
            return llm, model
    elif _is_llm(entry):
        return entry, None  # type: ignore[return-value]
    raise TypeError(
        f"FallbackLLM entry {index} must be a provider (with chat and stream), a "
        f"(provider, model id) pair or a model spec such as 'openai:gpt-4o-mini', "
        f"got {entry!r}"
    )


def _is_llm(value: object) -> bool:
    return callable(getattr(value, "chat", None)) and callable(getattr(value, "stream", None))


class FallbackLLM:
    """A chat model that tries ``primary``, then each of ``fallbacks``, on the failures
    ``on`` names (see the module docs). ``circuit`` (a :func:`circuit_breaker`) guards
    each entry by its model, so a model that keeps failing is skipped at once until its
    pause is over."""

    __slots__ = ("_circuit", "_entries", "on")

    def __init__(
        self,
        primary: Entry,
        *fallbacks: Entry,
        on: Iterable[str] = _DEFAULT_ON,
        circuit: _Middleware | None = None,
    ) -> None:
        if not fallbacks:
            raise TypeError(
                "FallbackLLM(primary, *fallbacks) needs at least one fallback: with only "
                "a primary, use that provider itself"
            )
        chosen = (on,) if isinstance(on, str) else tuple(on)
        unknown = sorted(set(chosen) - FALL_THROUGH_KINDS)
        if unknown:
            raise ValueError(
                f"FallbackLLM(on=...) got unknown failure kind(s) {unknown}; accepted: "
                f"{sorted(FALL_THROUGH_KINDS)}"
            )
        self.on = frozenset(chosen)
        self._entries = tuple(_entry(e, i) for i, e in enumerate((primary, *fallbacks)))
        self._circuit = circuit

    def falls_through(self, error: Exception) -> bool:
        """True when ``error`` sends the request on to the next model."""
        if isinstance(error, CircuitOpen):
            return "circuit_open" in self.on
        if is_transient(error):
            return "transient" in self.on
        return isinstance(error, ProviderError) and error.kind in self.on

    async def chat(self, request: ChatRequest, ctx: RunContext) -> LLMResult:
        """The first answer an entry gives; the last entry's failure when none does."""
        last = len(self._entries) - 1
        for index, (llm, model) in enumerate(self._entries):
            entry_request = translated(request, model)
            try:
                if self._circuit is None:
                    return await llm.chat(entry_request, ctx)
                result: LLMResult = await self._circuit(entry_request, ctx, llm.chat)
                return result
            except Exception as error:
                if index == last or not self.falls_through(error):
                    raise
                self._fell_through(ctx, entry_request, index, error)
        raise AssertionError("unreachable: the last entry returns or raises")

    async def stream(self, request: ChatRequest, ctx: RunContext) -> AsyncIterator[StreamEvent]:
        """The first entry's stream that starts; falls through only before a delta.

        Under a ``circuit`` a stream counts as answered once its first event arrived:
        the failures worth counting (refusals, overload, no connection) come before it.
        """
        last = len(self._entries) - 1
        for index, (llm, model) in enumerate(self._entries):
            entry_request = translated(request, model)
            events = aiter(llm.stream(entry_request, ctx))
            started = False
            try:
                try:
                    first: StreamEvent = await (
                        anext(events) if self._circuit is None
                        else self._circuit(entry_request, ctx, _first_of(events))
                    )
                except StopAsyncIteration:
                    return
                started = True
                yield first
                async for event in events:
                    yield event
                return
            except Exception as error:
                if started or index == last or not self.falls_through(error):
                    raise
                self._fell_through(ctx, entry_request, index, error)
            finally:
                await _closed(events)

    def _fell_through(
        self, ctx: RunContext, request: ChatRequest, index: int, error: Exception
    ) -> None:
        following = self._entries[index + 1]
        ctx.emit(
            "model.fallback",
            model=request.model,
            next_model=following[1] or request.model,
            error=str(error),
        )

    def __repr__(self) -> str:
        models = [model or type(llm).__name__ for llm, model in self._entries]
        return f"FallbackLLM({', '.join(models)}, on={sorted(self.on)})"


def _first_of(
    events: AsyncIterator[StreamEvent],
) -> Callable[[ChatRequest, RunContext], Awaitable[StreamEvent]]:
    """A call for the circuit breaker that waits for the stream's first event."""

    async def first(request: ChatRequest, ctx: RunContext) -> StreamEvent:
        return await anext(events)

    return first


async def _closed(events: AsyncIterator[StreamEvent]) -> None:
    close = getattr(events, "aclose", None)
    if close is not None:
        await close()
