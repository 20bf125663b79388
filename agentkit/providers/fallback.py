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

The request an entry gets is translated for it (:func:`translated`): its own model id,
and of the reasoning parts and tool-call state in the transcript only those its provider
produced (another provider's opaque state is never sent). Each answer names the model
that gave it (``LLMResult.model``), and each provider prices its usage
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
from agentkit.core.contracts.ports import LLM, Context
from agentkit.core.contracts.types import ChatRequest, LLMResult, Message, StreamEvent
from agentkit.core.policies.circuit import CircuitOpen
from agentkit.providers.factory import llm_for
from agentkit.providers.spec import parse_model_spec

__all__ = ["FALL_THROUGH_KINDS", "FallbackLLM", "translated"]

FALL_THROUGH_KINDS = frozenset({
    "transient", "circuit_open", "bad_request", "authentication", "permission",
    "not_found", "request_too_large", "unprocessable", "billing", "quota", "context_length",
    "unsupported_setting", "unsupported_media", "unsupported_schema", "model_error",
    "configuration", "malformed_reply", "stream_truncated", "error",
})
"""What ``on=`` may name: ``"transient"`` (any error :func:`is_transient` accepts),
``"circuit_open"`` (:class:`CircuitOpen`), or the ``kind`` of a permanent
:class:`ProviderError`."""

_DEFAULT_ON = ("transient", "circuit_open")

Entry = LLM | str | tuple[LLM, str]
"""A provider, a ``(provider, model id)`` pair, or a model spec string."""

_Middleware = Callable[[ChatRequest, Context, Callable[..., Awaitable[Any]]], Awaitable[Any]]


def translated(request: ChatRequest, model: str | None, provider: str | None) -> ChatRequest:
    """``request`` as an entry gets it: its own model id (None: the request's), and only
    the reasoning parts and tool-call state that ``provider`` produced (None: a provider
    that names none, which gets none), as the reasoning contract has it: opaque state
    from one provider is never sent to another."""
    messages = request.messages
    if any(m.reasoning or any(c.provider_state for c in m.tool_calls) for m in messages):
        messages = tuple(_own(m, provider) for m in messages)
    if (model is None or model == request.model) and messages is request.messages:
        return request
    return dataclasses.replace(request, model=model or request.model, messages=messages)


def _own(message: Message, provider: str | None) -> Message:
    parts = tuple(p for p in message.reasoning if p.provider == provider)
    calls = tuple(
        dataclasses.replace(c, provider_state={
            k: v for k, v in c.provider_state.items() if k == provider})
        if set(c.provider_state) - {provider} else c
        for c in message.tool_calls
    )
    if parts == message.reasoning and calls == message.tool_calls:
        return message
    return dataclasses.replace(message, reasoning=parts, tool_calls=calls)


def _entry(entry: object, index: int) -> tuple[LLM, str | None, str | None]:
    if isinstance(entry, str):
        llm = llm_for(entry)
        return llm, parse_model_spec(entry).model, _provider(llm)
    if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[1], str):
        llm, model = entry
        if _is_llm(llm) and model:
            return llm, model, _provider(llm)
    elif _is_llm(entry):
        return entry, None, _provider(entry)  # type: ignore[return-value]
    raise TypeError(
        f"FallbackLLM entry {index} must be a provider (with chat and stream), a "
        f"(provider, model id) pair or a model spec such as 'openai:gpt-4o-mini', "
        f"got {entry!r}"
    )


def _provider(llm: object) -> str | None:
    """The name the provider tags its reasoning with (``AnthropicLLM.provider``), read
    once here; None for a model that names none (it is sent no provider's state)."""
    name = getattr(llm, "provider", None)
    return name if isinstance(name, str) and name else None


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

    async def chat(self, request: ChatRequest, ctx: Context) -> LLMResult:
        """The first answer an entry gives; the last entry's failure when none does."""
        last = len(self._entries) - 1
        for index, (llm, model, provider) in enumerate(self._entries):
            entry_request = translated(request, model, provider)
            try:
                if self._circuit is None:
                    return await llm.chat(entry_request, ctx)
                result: LLMResult = await self._circuit(entry_request, ctx, llm.chat)
                return result
            except Exception as error:
                if index == last or not self.falls_through(error):
                    raise
                self._fell_through(ctx, request, entry_request.model, index, error)
        raise AssertionError("unreachable: the last entry returns or raises")

    async def stream(self, request: ChatRequest, ctx: Context) -> AsyncIterator[StreamEvent]:
        """The first entry's stream that starts; falls through only before a delta.

        Under a ``circuit`` a stream counts as answered once its first event arrived:
        the failures worth counting (refusals, overload, no connection) come before it.
        """
        last = len(self._entries) - 1
        for index, (llm, model, provider) in enumerate(self._entries):
            entry_request = translated(request, model, provider)
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
                self._fell_through(ctx, request, entry_request.model, index, error)
            finally:
                await _closed(events)

    def _fell_through(
        self, ctx: Context, request: ChatRequest, failed: str, index: int,
        error: Exception,
    ) -> None:
        following = self._entries[index + 1]
        ctx.emit(
            "model.fallback",
            model=failed,
            next_model=following[1] or request.model,
            error=str(error),
        )

    def __repr__(self) -> str:
        models = [model or type(llm).__name__ for llm, model, _ in self._entries]
        return f"FallbackLLM({', '.join(models)}, on={sorted(self.on)})"


def _first_of(
    events: AsyncIterator[StreamEvent],
) -> Callable[[ChatRequest, Context], Awaitable[StreamEvent]]:
    """A call for the circuit breaker that waits for the stream's first event."""

    async def first(request: ChatRequest, ctx: Context) -> StreamEvent:
        return await anext(events)

    return first


async def _closed(events: AsyncIterator[StreamEvent]) -> None:
    close = getattr(events, "aclose", None)
    if close is not None:
        await close()
