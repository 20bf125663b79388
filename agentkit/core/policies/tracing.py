"""tracing(): one span per tool call (``execute_tool``) or model call (``chat``).

Attribute names follow the OpenTelemetry GenAI semantic conventions. Tracing never
breaks a call: a tracer that raises degrades to a no-op (see ``open_span``).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from agentkit.core.contracts.ports import Context, Span, Tracer
from agentkit.core.contracts.types import ChatRequest, LLMResult, ToolRequest, Waiting
from agentkit.core.runtime.spans import open_span, set_cost

__all__ = ["tracing"]

DEFAULT_RESULT_CAP = 1000
"""Characters of a tool result recorded on its span; the rest is cut and marked."""


@contextmanager
def _measured(span: Span, start: float) -> Iterator[None]:
    """Record the call's duration on ``span``, and its error type and count if it fails."""
    try:
        yield
    except BaseException as error:
        span.set_attribute("error.type", type(error).__name__)
        span.set_attribute("agentkit.error_count", 1)
        raise
    finally:
        span.set_attribute("agentkit.duration_ms", (time.perf_counter() - start) * 1e3)


def tracing(tracer: Tracer | None = None, *, result_cap: int = DEFAULT_RESULT_CAP) -> _Tracing:
    """Trace every call through the chain it sits in (tool chain, chat chain, or both).

    ``tracer`` defaults to ``ctx.tracer``; with neither, calls pass through untraced.
    Tool spans carry ``gen_ai.operation.name = "execute_tool"``, ``gen_ai.tool.name``,
    ``gen_ai.tool.call.id`` and a ``gen_ai.tool.result`` event holding at most
    ``result_cap`` characters; chat spans carry the model, token usage, finish
    reasons and cost (``agentkit.cost_usd``, and ``agentkit.unpriced_models`` naming a
    model whose price was unknown, so that a 0 is not read as free). Every span records
    ``agentkit.duration_ms`` and, on failure, ``error.type`` and an
    ``agentkit.error_count``. A tool call that waits for a person is not a failure: its
    span ends without an error, with ``agentkit.waiting`` saying what it waits for.
    """
    return _Tracing(tracer, result_cap)


class _Tracing:
    __slots__ = ("_cap", "_tracer")

    def __init__(self, tracer: Tracer | None, cap: int) -> None:
        self._tracer = tracer
        self._cap = cap

    async def __call__(self, request: Any, ctx: Context, call_next: Any) -> Any:
        tracer = self._tracer if self._tracer is not None else ctx.tracer
        if tracer is None:
            return await call_next(request, ctx)
        if isinstance(request, ToolRequest):
            return await self._tool(tracer, request, ctx, call_next)
        if isinstance(request, ChatRequest):
            return await self._chat(tracer, request, ctx, call_next)
        return await call_next(request, ctx)

    async def _tool(self, tracer: Tracer, request: ToolRequest, ctx: Context,
                    call_next: Any) -> Any:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": request.name,
            "gen_ai.tool.type": "function",
            "agentkit.run_id": ctx.correlation_id,
            "agentkit.scope": ctx.scope.key(),
            "agentkit.side_effecting": request.is_side_effecting,
        }
        if request.call_id is not None:
            attributes["gen_ai.tool.call.id"] = request.call_id
        start = time.perf_counter()
        with open_span(tracer, f"execute_tool {request.name}", attributes) as span:
            with _measured(span, start):
                result = await call_next(request, ctx)
            if type(result) is Waiting:
                span.set_attribute("agentkit.waiting", result.what)
                return result
            text = result if isinstance(result, str) else repr(result)
            span.add_event(
                "gen_ai.tool.result",
                {
                    "content": text[: self._cap],
                    "truncated": len(text) > self._cap,
                    "length": len(text),
                },
            )
            for key in ("idempotency", "memoize"):
                if key in request.meta:
                    span.set_attribute(f"agentkit.{key}", str(request.meta[key]))
            return result

    async def _chat(self, tracer: Tracer, request: ChatRequest, ctx: Context,
                    call_next: Any) -> LLMResult:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": request.model,
            "agentkit.run_id": ctx.correlation_id,
        }
        if request.max_tokens is not None:
            attributes["gen_ai.request.max_tokens"] = request.max_tokens
        if request.temperature is not None:
            attributes["gen_ai.request.temperature"] = request.temperature
        start = time.perf_counter()
        with open_span(tracer, f"chat {request.model}", attributes) as span:
            with _measured(span, start):
                result: LLMResult = await call_next(request, ctx)
            usage = result.usage
            span.set_attribute("gen_ai.response.model", result.model or request.model)
            span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
            span.set_attribute("gen_ai.response.finish_reasons", [result.finish_reason])
            if usage.cache_read_tokens:
                span.set_attribute("gen_ai.usage.cache_read.input_tokens", usage.cache_read_tokens)
            if usage.cache_write_tokens:
                span.set_attribute(
                    "gen_ai.usage.cache_creation.input_tokens", usage.cache_write_tokens
                )
            set_cost(span, usage)
            return result

    def __repr__(self) -> str:
        return f"tracing(tracer={self._tracer!r}, result_cap={self._cap})"
