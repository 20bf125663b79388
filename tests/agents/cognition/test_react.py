"""ReActCognition: every tool failure becomes a repair turn, tools run concurrently
(bounded) and answer in call order, and the loop stops after max_iterations."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

import pytest

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import Message, ToolCall
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.tools import ToolRegistry, tool


@dataclass
class Quote:
    symbol: str
    price: float


@tool(side_effecting=False)
def weather(city: str, days: int = 3) -> str:
    """Return a short weather forecast for a city over the next few days."""
    return f"{city}: mild for {days} days"


@tool(side_effecting=False)
def get_quote(symbol: str) -> Quote:
    """Return the latest traded price for a stock ticker symbol."""
    return "not a Quote at all"  # type: ignore[return-value]


@tool(side_effecting=False)
async def flaky_lookup(query: str) -> str:
    """Search the knowledge base; this one always fails with a disk error."""
    raise OSError("disk on fire")


def agent_with(*tools: Any, **react: int) -> Agent:
    return Agent("looper", "fake", "Use tools.", cognition=ReActCognition(tools=tools, **react))


async def repair(call: ToolCall) -> tuple[Message, FakeLLM]:
    """Run one failing call; the loop must go on to complete. Returns the tool message
    the model read next."""
    llm = FakeLLM.script([Turn(tool_calls=(call,)), Turn(content="recovered")])
    agent = agent_with(weather, get_quote, flaky_lookup)
    result = await agent.run("go", make_test_ctx(llm=llm))
    assert (result.stop_reason, result.output) == ("complete", "recovered")
    llm.assert_all_used()
    return llm.requests[-1].messages[-1], llm


@pytest.mark.parametrize(
    ("arguments", "text"),
    [
        ({}, "tool 'weather' call rejected: missing required argument(s) ['city']. "
             "Accepted arguments: ['city', 'days']"),
        ({"city": "Oslo", "town": "x"},
         "tool 'weather' call rejected: unexpected argument(s) ['town']. "
         "Accepted arguments: ['city', 'days']"),
        ({"city": "Oslo", "days": "three"},
         "tool 'weather' call rejected: invalid argument(s): days: expected an integer, "
         "got string 'three'. Accepted arguments: ['city', 'days']"),
    ],
    ids=["missing", "unexpected", "invalid"],
)
async def test_an_argument_error_is_a_repair_turn(arguments: dict[str, Any], text: str) -> None:
    message, _ = await repair(ToolCall("c1", "weather", arguments))
    assert message == Message(
        role="tool", content=text, tool_call_id="c1", name="weather", is_error=True
    )


async def test_a_shape_error_is_a_repair_turn_saying_why_the_value_missed() -> None:
    message, _ = await repair(ToolCall("c1", "get_quote", {"symbol": "ACME"}))
    assert message == Message(
        role="tool",
        content="tool 'get_quote' returned value not matching schema 'Quote': "
        "expected an object for Quote, got string 'not a Quote at all'",
        tool_call_id="c1",
        name="get_quote",
        is_error=True,
    )


async def test_unknown_tool_lists_available_tools() -> None:
    message, _ = await repair(ToolCall("c1", "forecast", {"city": "Oslo"}))
    assert message == Message(
        role="tool",
        content="no tool named 'forecast'. Available tools: "
        "['flaky_lookup', 'get_quote', 'weather']",
        tool_call_id="c1",
        name="forecast",
        is_error=True,
    )


async def test_an_exception_in_the_body_is_a_repair_turn_naming_it() -> None:
    message, _ = await repair(ToolCall("c1", "flaky_lookup", {"query": "q"}))
    assert message == Message(
        role="tool",
        content="tool 'flaky_lookup' failed: OSError: disk on fire",
        tool_call_id="c1",
        name="flaky_lookup",
        is_error=True,
    )


async def test_cancelled_error_from_a_tool_propagates_out_of_run() -> None:
    @tool(side_effecting=False)
    async def interrupted(q: str) -> str:
        """A tool whose body is cancelled from underneath it while it works."""
        raise asyncio.CancelledError

    llm = FakeLLM.script([Turn(tool_calls=(ToolCall("c1", "interrupted", {"q": "x"}),))])
    with pytest.raises(asyncio.CancelledError):
        await agent_with(interrupted).run("go", make_test_ctx(llm=llm))


async def test_cancelled_error_from_one_of_several_concurrent_tools_propagates() -> None:
    @tool(side_effecting=False)
    async def interrupted(q: str) -> str:
        """A tool whose body is cancelled from underneath it while it works."""
        raise asyncio.CancelledError

    calls = (ToolCall("c1", "interrupted", {"q": "x"}), ToolCall("c2", "weather", {"city": "A"}))
    llm = FakeLLM.script([Turn(tool_calls=calls), Turn(content="never")])
    with pytest.raises(asyncio.CancelledError):
        await agent_with(interrupted, weather).run("go", make_test_ctx(llm=llm))
    assert len(llm.requests) == 1


async def test_hidden_tools_are_callable_but_not_advertised() -> None:
    @tool(side_effecting=False, advertise=False)
    def internal_clock() -> str:
        """Return the current time; driven by the cognition, never shown to the model."""
        return "12:00"

    assert internal_clock.schema is None
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "internal_clock", {}),)),
        Turn(content="noon"),
    ])
    result = await agent_with(internal_clock, weather).run("time?", make_test_ctx(llm=llm))

    assert [[s.name for s in r.tools] for r in llm.requests] == [["weather"], ["weather"]]
    assert result.messages[2] == Message(
        role="tool", content="12:00", tool_call_id="c1", name="internal_clock"
    )


async def test_each_request_advertises_the_registry_schemas_sorted_by_name() -> None:
    registry = ToolRegistry.from_tools([weather, get_quote, flaky_lookup])
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "weather", {"city": "Oslo"}),)),
        Turn(content="done"),
    ])
    agent = Agent("looper", "fake", "p", cognition=ReActCognition(tools=registry))
    await agent.run("go", make_test_ctx(llm=llm))

    expected = (flaky_lookup.schema, get_quote.schema, weather.schema)
    assert registry.schemas() == expected
    assert [r.tools for r in llm.requests] == [expected, expected]


async def test_tool_calls_of_one_turn_run_concurrently() -> None:
    """Each tool waits for the other to start: run one after the other, neither finishes."""
    first_started, second_started = asyncio.Event(), asyncio.Event()

    @tool(side_effecting=False)
    async def left(x: str) -> str:
        """Wait for the right-hand tool to start, then report the left side."""
        first_started.set()
        await second_started.wait()
        return f"left {x}"

    @tool(side_effecting=False)
    async def right(x: str) -> str:
        """Wait for the left-hand tool to start, then report the right side."""
        second_started.set()
        await first_started.wait()
        return f"right {x}"

    calls = (ToolCall("c1", "right", {"x": "1"}), ToolCall("c2", "left", {"x": "2"}))
    llm = FakeLLM.script([Turn(tool_calls=calls), Turn(content="both")])
    result = await asyncio.wait_for(
        agent_with(left, right).run("go", make_test_ctx(llm=llm)), timeout=10
    )

    assert result.output == "both"
    assert result.messages[2:4] == (
        Message(role="tool", content="right 1", tool_call_id="c1", name="right"),
        Message(role="tool", content="left 2", tool_call_id="c2", name="left"),
    )


async def test_results_are_in_call_order_even_when_a_later_call_finishes_first() -> None:
    fast_done = asyncio.Event()
    finished: list[str] = []

    @tool(side_effecting=False)
    async def slow(x: str) -> str:
        """Finish only after the fast tool has already finished its work."""
        await fast_done.wait()
        finished.append("slow")
        return "slow result"

    @tool(side_effecting=False)
    async def fast(x: str) -> str:
        """Finish at once and let the slow tool go on afterwards."""
        finished.append("fast")
        fast_done.set()
        return "fast result"

    calls = (ToolCall("a", "slow", {"x": "1"}), ToolCall("b", "fast", {"x": "2"}))
    llm = FakeLLM.script([Turn(tool_calls=calls), Turn(content="done")])
    result = await agent_with(slow, fast).run("go", make_test_ctx(llm=llm))

    assert finished == ["fast", "slow"]
    assert [(m.tool_call_id, m.content) for m in llm.requests[1].messages[2:]] == [
        ("a", "slow result"),
        ("b", "fast result"),
    ]
    done = Message(role="assistant", content="done")
    assert result.messages == (*llm.requests[1].messages, done)


@pytest.mark.parametrize(("limit", "peak"), [(1, 1), (2, 2), (8, 4)])
async def test_max_concurrency_bounds_the_calls_in_flight(limit: int, peak: int) -> None:
    in_flight = 0
    seen: list[int] = []

    @tool(side_effecting=False)
    async def step(n: int) -> int:
        """Count how many calls of this tool are in flight at the same moment."""
        nonlocal in_flight
        in_flight += 1
        seen.append(in_flight)
        for _ in range(5):
            await asyncio.sleep(0)  # yield, so any other call that may start does
        in_flight -= 1
        return n

    calls = tuple(ToolCall(f"c{n}", "step", {"n": n}) for n in range(4))
    llm = FakeLLM.script([Turn(tool_calls=calls), Turn(content="done")])
    result = await agent_with(step, max_concurrency=limit).run("go", make_test_ctx(llm=llm))

    assert max(seen) == peak
    assert [m.content for m in result.messages[2:6]] == ["0", "1", "2", "3"]


async def test_a_model_that_keeps_calling_tools_stops_at_max_iterations() -> None:
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall(f"c{n}", "weather", {"city": "Oslo"}),)) for n in range(3)
    ])
    result = await agent_with(weather, max_iterations=3).run("go", make_test_ctx(llm=llm))

    assert result.stop_reason == "max_iterations"
    assert result.output is None
    assert result.steps == 3
    assert [m.tool_call_id for m in result.messages if m.role == "tool"] == ["c0", "c1", "c2"]
    llm.assert_all_used()


@pytest.mark.parametrize("keyword", ["max_iterations", "max_concurrency"])
def test_limits_below_one_are_refused(keyword: str) -> None:
    with pytest.raises(ValueError) as info:
        ReActCognition(tools=[weather], **{keyword: 0})
    assert str(info.value) == f"{keyword} must be at least 1, got 0"
