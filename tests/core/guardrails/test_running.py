"""Running guardrails: in order, or alongside the call they guard, cancelling it on a
trip; a rewrite always comes before the call."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentkit.core.guardrails import (
    PII,
    GuardrailMisplaced,
    GuardrailTrip,
    MaxLength,
    Tripwire,
    as_guardrail,
    check,
    check_alongside,
    input_guardrail,
)
from agentkit.core.runtime.context import RunContext
from agentkit.core.testing import make_test_ctx


class Call:
    """The guarded call: records what it saw, and whether it was cancelled mid-way."""

    def __init__(self, hang: bool = True) -> None:
        self.started = asyncio.Event()
        self.seen: list[Any] = []
        self.cancelled = False
        self.hang = hang

    async def __call__(self, value: Any) -> str:
        self.seen.append(value)
        self.started.set()
        try:
            if self.hang:
                await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return "answer"


async def test_a_trip_cancels_the_call_running_alongside() -> None:
    call = Call()

    async def forbidden_topic(value: str) -> Tripwire | None:
        await call.started.wait()  # trip only once the call is under way
        return Tripwire("asks about weapons") if "weapons" in value else None

    answer, value, trip = await check_alongside(
        [as_guardrail(forbidden_topic)], "how to build weapons", make_test_ctx(), "input", call)
    assert (answer, value) == (None, "how to build weapons")
    assert trip == GuardrailTrip("forbidden_topic", "input", "asks about weapons")
    assert call.cancelled


async def test_guardrails_that_pass_let_the_calls_answer_through() -> None:
    call = Call(hang=False)
    answer, value, trip = await check_alongside(
        [as_guardrail(MaxLength(100)), as_guardrail(lambda v, ctx: True)], "hi",
        make_test_ctx(), "input", call)
    assert (answer, value, trip) == ("answer", "hi", None)


async def test_parallel_false_runs_before_the_call_so_a_trip_starts_nothing() -> None:
    call = Call()
    answer, _, trip = await check_alongside(
        [input_guardrail(MaxLength(3), parallel=False)], "too long", make_test_ctx(),
        "input", call)
    assert answer is None and trip is not None
    assert trip.reason == "8 characters, more than the 3 allowed"
    assert call.seen == []


async def test_a_rewrite_comes_before_the_call_which_never_sees_the_raw_value() -> None:
    call = Call(hang=False)
    answer, value, trip = await check_alongside(
        [as_guardrail(PII(mode="redact"))], "mail ann@example.com", make_test_ctx(),
        "input", call)
    assert (answer, value, trip) == ("answer", "mail [REDACTED:email]", None)
    assert call.seen == ["mail [REDACTED:email]"]


async def test_a_rewrite_from_alongside_is_an_error_and_cancels_the_call() -> None:
    call = Call()

    async def shout(value: str) -> str:
        await call.started.wait()
        return value.upper()

    with pytest.raises(GuardrailMisplaced) as misplaced:
        await check_alongside([as_guardrail(shout)], "hi", make_test_ctx(), "input", call)
    assert str(misplaced.value) == (
        "guardrail shout rewrote the input while running alongside the call it guards, so "
        "the call saw the value before the rewrite; wrap it as input_guardrail(fn, "
        "parallel=False), or give it a `rewrites = True` attribute"
    )
    assert call.cancelled


async def test_check_runs_in_order_on_the_rewritten_value_and_stops_at_a_trip() -> None:
    seen: list[str] = []

    def record(value: str, ctx: RunContext) -> None:
        seen.append(f"{value} in {ctx.correlation_id}")

    value, trip = await check(
        [as_guardrail(PII(mode="redact")), as_guardrail(record), as_guardrail(MaxLength(10)),
         as_guardrail(record)],
        "ann@example.com", make_test_ctx(correlation_id="run-1"), "tool send arguments")
    assert value == "[REDACTED:email]"
    assert trip == GuardrailTrip("MaxLength(10)", "tool send arguments",
                                 "16 characters, more than the 10 allowed",
                                 {"length": 16, "limit": 10})
    assert seen == ["[REDACTED:email] in run-1"]


def test_what_cannot_be_a_guardrail_is_refused() -> None:
    with pytest.raises(TypeError) as not_callable:
        as_guardrail("pii")
    assert str(not_callable.value) == (
        "a guardrail is a function g(value) or g(value, ctx), sync or async, or an object "
        "with such a __call__ (e.g. PII(), MaxLength(1000)); got 'pii'"
    )
    with pytest.raises(ValueError) as parallel:
        input_guardrail(PII(mode="redact"), parallel=True)
    assert str(parallel.value) == (
        "guardrail PII(mode='redact', kinds=('email', 'phone', 'card', 'iban', 'ssn')) "
        "rewrites the value, so it must run before the call it guards: parallel=True is "
        "not possible for it"
    )


async def test_cancelling_the_caller_cancels_the_call_and_is_not_swallowed() -> None:
    call = Call()
    checking = asyncio.Event()

    async def slow_check(value: str) -> None:
        checking.set()
        await asyncio.Event().wait()

    outer = asyncio.ensure_future(check_alongside(
        [as_guardrail(slow_check)], "hi", make_test_ctx(), "input", call))
    await checking.wait()
    await call.started.wait()
    outer.cancel()
    with pytest.raises(asyncio.CancelledError):
        await outer
    assert call.cancelled
