"""retry(): transient failures only, and a side effect never performed twice."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit.core.contracts.errors import ProviderError, ToolArgumentError
from agentkit.core.contracts.types import ToolRequest
from agentkit.core.policies import exponential_backoff, idempotent, is_transient, retry
from agentkit.core.runtime.context import RunContext
from agentkit.core.testing import make_test_ctx
from agentkit.tools import ToolShapeError, tool

sent: list[str] = []


@tool(side_effecting=True)
def send_email(to: str) -> str:
    """Send one email to a single recipient and return the provider message id."""
    sent.append(to)
    return f"queued for {to}"


def no_wait(attempt: int) -> float:
    return 0.0


class LostResponse:
    """Fails the first ``faults`` calls *after* the inner chain succeeded, as a network
    that drops the response would: the effect happened, the caller never heard."""

    def __init__(self, faults: int) -> None:
        self.faults = faults

    async def __call__(self, request: ToolRequest, ctx: RunContext, call_next: Any) -> Any:
        result = await call_next(request, ctx)
        if self.faults:
            self.faults -= 1
            raise TimeoutError("response lost")
        return result


async def test_a_side_effect_happens_once_across_100_faulted_calls() -> None:
    sent.clear()
    ctx = make_test_ctx(
        tool_middleware=[retry(max_attempts=3, backoff=no_wait), LostResponse(100), idempotent()]
    )
    outcomes = []
    for _ in range(100):
        request = ToolRequest("send_email", {"to": "ops@example.com"}, send_email)
        try:
            outcomes.append(await ctx.invoker.invoke_tool(request, ctx))
        except TimeoutError:
            outcomes.append("timeout")
    assert sent == ["ops@example.com"]
    # The first 33 calls use up three tries each on 99 faults; the 34th absorbs the last.
    assert outcomes.count("timeout") == 33
    assert outcomes.count("queued for ops@example.com") == 67


async def test_without_idempotent_a_side_effecting_tool_is_not_retried() -> None:
    sent.clear()
    ctx = make_test_ctx(tool_middleware=[retry(max_attempts=5, backoff=no_wait), LostResponse(1)])
    with pytest.raises(TimeoutError):
        await ctx.invoker.invoke_tool(
            ToolRequest("send_email", {"to": "a@example.com"}, send_email), ctx
        )
    assert sent == ["a@example.com"]


class FailFirst:
    def __init__(self, error: Exception, times: int) -> None:
        self.error = error
        self.times = times
        self.calls = 0

    async def __call__(self, request: ToolRequest, ctx: RunContext, call_next: Any) -> Any:
        self.calls += 1
        if self.calls <= self.times:
            raise self.error
        return await call_next(request, ctx)


@tool(side_effecting=False, idempotent=True)
def lookup(key: str) -> str:
    """Look up a value by key in the read-only configuration service."""
    return f"value of {key}"


@pytest.mark.parametrize(
    "error",
    [
        TimeoutError("slow"),
        ConnectionResetError("reset"),
        ProviderError("overloaded", provider="anthropic", transient=True, status=529),
    ],
)
async def test_transient_failures_are_retried(error: Exception) -> None:
    fault = FailFirst(error, 2)
    delays: list[float] = []

    async def record(seconds: float) -> None:
        delays.append(seconds)

    ctx = make_test_ctx(tool_middleware=[retry(max_attempts=3, backoff=lambda n: n * 1.5,
                                               sleep=record), fault])
    request = ToolRequest("lookup", {"key": "k"}, lookup)
    assert await ctx.invoker.invoke_tool(request, ctx) == "value of k"
    assert fault.calls == 3
    assert delays == [1.5, 3.0]
    assert request.meta["retries"] == 2


@pytest.mark.parametrize(
    "error",
    [
        ToolArgumentError("lookup", missing=["key"], accepted=["key"]),
        ToolShapeError("lookup", 1, "Quote"),
        ProviderError("bad key", provider="openai", transient=False, status=401),
        ValueError("plain bug"),
    ],
)
async def test_permanent_failures_are_raised_at_once(error: Exception) -> None:
    fault = FailFirst(error, 1)
    ctx = make_test_ctx(tool_middleware=[retry(max_attempts=5, backoff=no_wait), fault])
    with pytest.raises(type(error)):
        await ctx.invoker.invoke_tool(ToolRequest("lookup", {"key": "k"}, lookup), ctx)
    assert fault.calls == 1


async def test_gives_up_after_max_attempts() -> None:
    fault = FailFirst(TimeoutError("down"), 10)
    ctx = make_test_ctx(tool_middleware=[retry(max_attempts=4, backoff=no_wait), fault])
    with pytest.raises(TimeoutError):
        await ctx.invoker.invoke_tool(ToolRequest("lookup", {"key": "k"}, lookup), ctx)
    assert fault.calls == 4


def test_is_transient_follows_the_cause_chain() -> None:
    try:
        try:
            raise ConnectionRefusedError("refused")
        except ConnectionRefusedError as inner:
            raise RuntimeError("wrapped") from inner
    except RuntimeError as outer:
        assert is_transient(outer)
    assert not is_transient(RuntimeError("no cause"))


def test_backoff_grows_exponentially_with_full_jitter_under_a_cap() -> None:
    plain = exponential_backoff(initial=1.0, factor=2.0, maximum=5.0, jitter=False)
    assert [plain(n) for n in range(1, 6)] == [1.0, 2.0, 4.0, 5.0, 5.0]
    jittered = exponential_backoff(initial=1.0, factor=2.0, maximum=5.0)
    assert all(0 <= jittered(3) <= 4.0 for _ in range(100))


def test_max_attempts_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_attempts must be at least 1, got 0"):
        retry(max_attempts=0)


async def test_a_providers_retry_after_replaces_the_backoff_up_to_max_delay() -> None:
    """A wait the provider asked for is kept, even on a cause, and capped by max_delay."""
    asked = ProviderError("slow down", provider="openai", transient=True, status=429,
                          retry_after=4.0)
    wrapped = RuntimeError("the call failed")
    wrapped.__cause__ = ProviderError("slow down", provider="openai", transient=True,
                                      status=429, retry_after=90.0)
    delays: list[float] = []

    async def record(seconds: float) -> None:
        delays.append(seconds)

    for error in (asked, wrapped):
        fault = FailFirst(error, 1)
        ctx = make_test_ctx(tool_middleware=[
            retry(max_attempts=2, backoff=lambda n: 0.5, max_delay=30.0, sleep=record), fault,
        ])
        assert await ctx.invoker.invoke_tool(ToolRequest("lookup", {"key": "k"}, lookup),
                                             ctx) == "value of k"
    assert delays == [4.0, 30.0]


async def test_max_delay_caps_the_backoff_too() -> None:
    delays: list[float] = []

    async def record(seconds: float) -> None:
        delays.append(seconds)

    fault = FailFirst(TimeoutError("slow"), 2)
    ctx = make_test_ctx(tool_middleware=[
        retry(max_attempts=3, backoff=lambda n: 10.0 * n, max_delay=15.0, sleep=record), fault,
    ])
    await ctx.invoker.invoke_tool(ToolRequest("lookup", {"key": "k"}, lookup), ctx)
    assert delays == [10.0, 15.0]


def test_max_delay_must_be_a_number_of_seconds() -> None:
    with pytest.raises(ValueError) as info:
        retry(max_delay=-1.0)
    assert str(info.value) == "max_delay must be a number of seconds >= 0, got -1.0"
