"""meter(): admit each call against the run's Budget before it runs, charge it after."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentkit.core.contracts.errors import UnpricedModel
from agentkit.core.contracts.ports import Context
from agentkit.core.contracts.types import ChatRequest, LLMResult, ToolRequest, Usage, Waiting
from agentkit.core.policies.prices import DEFAULT_PRICES, CacheTTL, PriceTable

if TYPE_CHECKING:
    from agentkit.core.runtime.context import RunContext

__all__ = ["meter", "metered"]

_DEFAULT_OUTPUT_RESERVE = 4096
"""Output tokens reserved for a model call that sets no ``max_tokens``."""


def meter(
    prices: PriceTable = DEFAULT_PRICES, *, output_reserve: int = _DEFAULT_OUTPUT_RESERVE
) -> _Meter:
    """Enforce ``ctx.budget`` (a :class:`Budget`, or any ``BudgetLedger``) on every call.

    Before a call: the call that would cross a ceiling (calls, depth, concurrency, or
    money including every in-flight call's worst case) is refused with
    :class:`~agentkit.core.contracts.errors.BudgetExceeded`, which stops the run. A
    model call reserves its worst case: its prompt (about four characters a token, at
    the dearer of the input and cache-write prices, the write at the lifetime the
    provider writes, its ``cache_ttl``) plus ``max_tokens`` (or ``output_reserve``) of
    output at ``prices``. After the call the reservation is
    released and the real cost charged: the provider's ``usage.cost_usd`` when it
    reports one (cache reads and writes priced as the provider bills them), else
    ``prices``. A tool's cost is its traits' ``cost_usd`` (``@tool(cost_usd=...)``),
    when it declares one; a call replayed by ``idempotent()`` or ``memoize()`` costs
    nothing. With a money ceiling, a model the price table does not know is refused
    (:class:`UnpricedModel`) rather than run at an unknown cost.
    """
    return _Meter(prices, output_reserve)


def metered(ctx: RunContext) -> bool:
    """True when ``ctx``'s chat chain holds a meter(), so ``ctx.budget`` is enforced on
    its model calls (a context from ``make_test_ctx`` has none unless you pass one)."""
    return any(isinstance(mw, _Meter) for mw in ctx.invoker.chat_middleware)


def _write_lifetime(llm: object) -> CacheTTL:
    """The lifetime of the cache entries ``llm`` writes: its ``cache_ttl`` (as
    ``AnthropicLLM(cache_ttl="1h")`` declares), 5 minutes for a provider that says none."""
    return "1h" if getattr(llm, "cache_ttl", "5m") == "1h" else "5m"


class _Meter:
    __slots__ = ("_prices", "_reserve")

    def __init__(self, prices: PriceTable, reserve: int) -> None:
        self._prices = prices
        self._reserve = reserve

    def _estimate(self, request: ChatRequest, ttl: CacheTTL) -> float:
        price = self._prices.price(request.model)
        if price is None:
            return 0.0
        chars = len(request.system) + sum(len(m.content) for m in request.messages)
        chars += sum(len(str(t.parameters)) + len(t.description) for t in request.tools)
        prompt = chars // 4 + 1
        output = request.max_tokens or self._reserve
        # With prompt caching the prompt may be billed as a cache write, dearer than input,
        # and a 1-hour entry's write dearer than a 5-minute one's.
        worst = max(
            price.cost(Usage(input_tokens=prompt, output_tokens=output)),
            price.cost(Usage(cache_write_tokens=prompt, output_tokens=output), cache_ttl=ttl),
        )
        return worst

    async def __call__(self, request: Any, ctx: Context, call_next: Any) -> Any:
        budget = ctx.budget
        if budget is None:
            return await call_next(request, ctx)
        if isinstance(request, ChatRequest):
            if budget.max_cost_usd is not None and self._prices.price(request.model) is None:
                raise UnpricedModel(request.model)
            estimate = self._estimate(request, _write_lifetime(ctx.llm))
            held = budget.admit(
                f"model call to {request.model!r}", estimate_usd=estimate, depth=ctx.depth
            )
            cost = 0.0
            try:
                result: LLMResult = await call_next(request, ctx)
                usage = result.usage
                # Priced as the model that answered (a FallbackLLM's may be another).
                answered = result.model
                if not answered or self._prices.price(answered) is None:
                    answered = request.model
                cost = usage.cost_usd or self._prices.cost(answered, usage)
                return result
            finally:
                budget.release(held, cost_usd=cost)
        if isinstance(request, ToolRequest):
            tool_cost = request.traits.cost_usd
            held = budget.admit(
                f"tool call {request.name!r}", estimate_usd=tool_cost, depth=ctx.depth
            )
            charged = 0.0
            try:
                value = await call_next(request, ctx)
                replayed = (request.meta.get("idempotency") == "replayed"
                            or request.meta.get("memoize") == "hit")
                # A call that waits for a person has not run yet: it is charged when it does.
                charged = 0.0 if replayed or type(value) is Waiting else tool_cost
                return value
            finally:
                budget.release(held, cost_usd=charged)
        return await call_next(request, ctx)

    def __repr__(self) -> str:
        return "meter()"
