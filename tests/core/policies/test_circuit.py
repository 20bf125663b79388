"""circuit_breaker(): open after repeated transient failures, half-open after a pause."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit.core.contracts.types import ToolRequest
from agentkit.core.policies import CircuitOpen, circuit_breaker, is_transient
from agentkit.core.runtime.context import RunContext
from agentkit.core.testing import make_test_ctx
from agentkit.tools import tool


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


calls: list[str] = []
down = {"value": True}


@tool(side_effecting=False)
def quote(symbol: str) -> str:
    """Return the latest traded price for a stock ticker symbol."""
    calls.append(symbol)
    if down["value"]:
        raise ConnectionError("quote service unreachable")
    return f"{symbol}: 10.0"


async def call(ctx: RunContext) -> Any:
    return await ctx.invoker.invoke_tool(ToolRequest("quote", {"symbol": "A"}, quote), ctx)


async def test_the_circuit_opens_then_lets_one_trial_through_after_the_pause() -> None:
    calls.clear()
    down["value"] = True
    clock = Clock()
    ctx = make_test_ctx(tool_middleware=[circuit_breaker(3, reset_after=30, clock=clock)])
    for _ in range(3):
        with pytest.raises(ConnectionError):
            await call(ctx)
    with pytest.raises(CircuitOpen) as info:
        await call(ctx)
    assert len(calls) == 3  # the open circuit never reached the tool
    assert str(info.value) == (
        "tool 'quote' is paused after 3 failures in a row; it will be tried again in 30s. "
        "Continue without it for now."
    )
    assert not is_transient(info.value)

    clock.now += 31  # half-open: one trial, which fails and reopens the circuit
    with pytest.raises(ConnectionError):
        await call(ctx)
    with pytest.raises(CircuitOpen):
        await call(ctx)

    clock.now += 31
    down["value"] = False  # the trial succeeds and closes the circuit
    assert await call(ctx) == "A: 10.0"
    assert await call(ctx) == "A: 10.0"


async def test_permanent_failures_do_not_open_the_circuit() -> None:
    ctx = make_test_ctx(tool_middleware=[circuit_breaker(1)])
    for _ in range(3):
        with pytest.raises(Exception, match="call rejected"):
            await ctx.invoker.invoke_tool(ToolRequest("quote", {}, quote), ctx)


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="failure_threshold must be at least 1, got 0"):
        circuit_breaker(0)
    with pytest.raises(ValueError, match="reset_after must be positive, got 0"):
        circuit_breaker(reset_after=0)
