"""Tool timeouts: @tool(timeout=) and Agent(tool_timeout=); async bodies cancelled, sync
results discarded with a logged late end; safe calls retryable, others unknown."""

from __future__ import annotations

import asyncio
import logging
import threading

import pytest

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.errors import ToolDefinitionError, ToolTimeout, is_transient
from agentkit.core.contracts.types import Message, ToolCall, ToolRequest
from agentkit.core.policies import retry
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.tools import tool


async def hang() -> None:
    """Wait on an event nobody sets: the call hangs until it is stopped."""
    await asyncio.Event().wait()


def calling(name: str, **arguments: object) -> FakeLLM:
    return FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", name, arguments),)),
        Turn("Done."),
    ])


def agent_with(*tools: object, **options: object) -> Agent:
    return Agent("desk", "fake", "p", cognition=ReActCognition(tools=list(tools)),
                 **options)  # type: ignore[arg-type]


def tool_result(llm: FakeLLM) -> Message:
    (message,) = [m for m in llm.requests[-1].messages if m.role == "tool"]
    return message


async def test_an_async_read_only_call_is_cancelled_and_the_model_may_retry() -> None:
    seen: list[str] = []

    @tool(side_effecting=False, timeout=0.05)
    async def lookup(q: str) -> str:
        """Look a question up in the slow knowledge base and return the answer text."""
        try:
            await hang()
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        return "never"

    llm = calling("lookup", q="x")
    result = await agent_with(lookup).run("go", make_test_ctx(llm=llm))
    assert result.output == "Done."
    assert seen == ["cancelled"]
    assert tool_result(llm) == Message(
        "tool", "tool 'lookup' call 'c1' did not finish within its timeout of 0.05s and was "
        "stopped. It is safe to call it again, with the same or a narrower request.",
        tool_call_id="c1", name="lookup", is_error=True,
    )


async def test_a_sync_call_is_discarded_and_its_late_end_is_logged() -> None:
    release, logged = threading.Event(), threading.Event()
    ran: list[str] = []

    @tool(side_effecting=False, idempotent=True)
    def report(day: str) -> str:
        """Build the daily sales report for one day and return it as text."""
        release.wait(10)
        ran.append(day)
        return "late report"

    records: list[logging.LogRecord] = []

    # The records are kept by this handler itself: it is called before the record goes
    # on to the root logger, so caplog may not hold it yet when ``logged`` is set.
    class Signal(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)
            logged.set()

    signal = Signal()
    logging.getLogger("agentkit").addHandler(signal)
    try:
        llm = calling("report", day="mon")
        result = await agent_with(report, tool_timeout=0.05).run("go", make_test_ctx(llm=llm))
        assert tool_result(llm).content.startswith(
            "tool 'report' call 'c1' did not finish within its timeout of 0.05s")
        assert ran == []  # the thread still runs
        release.set()
        assert await asyncio.to_thread(logged.wait, 10)
    finally:
        logging.getLogger("agentkit").removeHandler(signal)
    assert result.output == "Done."
    assert ran == ["mon"]
    assert [r.getMessage() for r in records] == [
        "tool 'report' call 'c1' finished after it was given up on (timed out or cancelled); "
        "its result was discarded"
    ]


@tool(side_effecting=True, timeout=0.05)
async def charge(order_id: str) -> str:
    """Charge the customer's card for one order and return the payment id."""
    await hang()
    return "never"


UNKNOWN = (
    "The outcome of this call to 'charge' is unknown: it ran past its timeout of 0.05s and "
    "was stopped before it reported a result, so it may or may not have taken effect. It "
    "was not run again: 'charge' is side-effecting and not declared idempotent. Check "
    "whether it took effect before repeating it."
)


async def test_a_side_effecting_call_past_its_timeout_has_an_unknown_outcome() -> None:
    llm = calling("charge", order_id="A-1")
    result = await agent_with(charge).run("go", make_test_ctx(llm=llm, autonomy="auto"))
    assert result.output == "Done."
    assert tool_result(llm).content == UNKNOWN
    assert tool_result(llm).is_error


async def test_under_gated_autonomy_it_waits_for_a_person() -> None:
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "charge", {"order_id": "A-1"}),)),
        Turn("I did not charge again."),
    ])
    agent = agent_with(charge)
    ctx = make_test_ctx(llm=llm, autonomy="gated")
    first = await agent.run("go", ctx)
    assert first.suspended is not None and first.suspended.reason == "awaiting_approval"
    second = await agent.resume(first.run_id, {"c1": "approve"}, ctx)
    assert second.stop_reason == "suspended"
    assert dict(second.suspended.kinds) == {"c1": "unknown_outcome"}  # type: ignore[union-attr]
    done = await agent.resume(first.run_id, {"c1": "reject"}, ctx)
    assert done.output == "I did not charge again."


async def test_retry_gives_each_attempt_the_whole_limit() -> None:
    attempts: list[int] = []

    @tool(side_effecting=False, timeout=0.05)
    async def flaky(q: str) -> str:
        """Fetch one page of search results for a query from the slow search service."""
        attempts.append(len(attempts) + 1)
        if len(attempts) == 1:
            await hang()
        return "results"

    ctx = make_test_ctx(tool_middleware=[retry(backoff=lambda n: 0.0)])
    value = await ctx.invoker.invoke_tool(
        ToolRequest("flaky", {"q": "x"}, flaky, call_id="c1"), ctx)
    assert (value, attempts) == ("results", [1, 2])


async def test_the_tools_own_timeout_wins_over_the_agents() -> None:
    @tool(side_effecting=False, timeout=30)
    async def patient(q: str) -> str:
        """Answer a question that takes the back office a moment to look up."""
        await asyncio.sleep(0.05)
        return "answered"

    llm = calling("patient", q="x")
    await agent_with(patient, tool_timeout=0.001).run("go", make_test_ctx(llm=llm))
    assert (tool_result(llm).content, tool_result(llm).is_error) == ("answered", False)


def test_a_timeout_is_transient_and_bad_values_are_refused() -> None:
    assert is_transient(ToolTimeout("lookup", "c1", 5.0))
    with pytest.raises(ToolDefinitionError) as bad:
        @tool(side_effecting=False, timeout=0)
        def lookup(q: str) -> str:
            """Look a question up in the knowledge base and return the answer text."""
            return q
    assert str(bad.value) == (
        "tool 'lookup': timeout= must be a positive number of seconds or None, got 0"
    )
    with pytest.raises(ValueError) as agent:
        Agent("a", "fake", "p", tool_timeout=-1)
    assert str(agent.value) == (
        "Agent(tool_timeout=...) takes a positive number of seconds or None, got -1"
    )
