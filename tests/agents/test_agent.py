"""Agent: construction rules, what a run returns, and how a cancelled run stops."""

from __future__ import annotations

import asyncio

import pytest

from agentkit.agents import Agent, AgentResult
from agentkit.agents.cognition import ReActCognition, SingleCallCognition
from agentkit.core.contracts.errors import RunCancelled, RunNotResumable
from agentkit.core.contracts.types import Message, ToolCall, Usage
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.tools import tool


@tool(side_effecting=False, idempotent=True)
def city_population(city: str) -> int:
    """Look up the most recent census population for a named city."""
    return {"lisbon": 545_000, "porto": 231_000}.get(city.lower(), 0)


def atlas(**react: int) -> Agent:
    return Agent(
        name="atlas",
        model="fake",
        prompt="You answer questions about cities.",
        cognition=ReActCognition(tools=[city_population], **react),
    )


def test_tools_keyword_on_agent_points_at_the_cognition() -> None:
    with pytest.raises(TypeError) as info:
        Agent(name="atlas", model="fake", prompt="p", tools=[city_population])  # type: ignore[arg-type]
    assert str(info.value) == (
        "Agent has no tools= keyword: tools live on the cognition. "
        "Use Agent(..., cognition=ReActCognition(tools=[...]))."
    )


@pytest.mark.parametrize("name", ["", None, 7])
def test_an_agent_needs_a_non_empty_name(name: object) -> None:
    with pytest.raises(ValueError) as info:
        Agent(name=name, model="fake", prompt="p")  # type: ignore[arg-type]
    assert str(info.value) == f"an agent needs a non-empty name, got {name!r}"


def test_without_a_cognition_an_agent_makes_a_single_call() -> None:
    agent = Agent(name="solo", model="fake", prompt="p")
    assert isinstance(agent.cognition, SingleCallCognition)


async def test_agent_result_holds_output_usage_transcript_run_id_and_steps() -> None:
    call = ToolCall("c1", "city_population", {"city": "Lisbon"})
    llm = FakeLLM.script([
        Turn(tool_calls=(call,), usage=Usage(input_tokens=10, output_tokens=3, requests=1)),
        Turn(
            content="Lisbon has about 545,000 residents.",
            usage=Usage(input_tokens=25, output_tokens=9, cost_usd=0.5, requests=1),
        ),
    ])
    ctx = make_test_ctx(llm=llm, correlation_id="run-42")

    result = await atlas().run("How big is Lisbon?", ctx)

    assert isinstance(result, AgentResult)
    assert result.output == "Lisbon has about 545,000 residents."
    assert result.stop_reason == "complete"
    assert result.usage == Usage(input_tokens=35, output_tokens=12, cost_usd=0.5, requests=2)
    assert dict(result.evals) == {}
    assert result.run_id == "run-42"
    assert result.steps == 2
    assert result.messages == (
        Message(role="user", content="How big is Lisbon?"),
        Message(role="assistant", tool_calls=(call,)),
        Message(role="tool", content="545000", tool_call_id="c1", name="city_population"),
        Message(role="assistant", content="Lisbon has about 545,000 residents."),
    )
    llm.assert_all_used()


async def test_each_request_carries_the_prompt_model_and_transcript_so_far() -> None:
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "city_population", {"city": "Porto"}),)),
        Turn(content="About 231,000."),
    ])
    await atlas().run("How big is Porto?", make_test_ctx(llm=llm))

    first, second = llm.requests
    assert (first.model, first.system) == ("fake", "You answer questions about cities.")
    assert first.messages == (Message(role="user", content="How big is Porto?"),)
    assert second.messages[-1] == Message(
        role="tool", content="231000", tool_call_id="c1", name="city_population"
    )
    assert first.output_schema is None


async def test_a_run_cancelled_before_it_starts_stops_without_calling_the_model() -> None:
    llm = FakeLLM("never said")
    ctx = make_test_ctx(llm=llm)
    ctx.cancel.cancel("user stopped")

    result = await atlas().run("How big is Lisbon?", ctx)

    assert result.stop_reason == "cancelled"
    assert result.output is None
    assert result.steps == 0
    assert llm.requests == []
    error = result.evals["error"]
    assert isinstance(error, RunCancelled)
    assert str(error) == "run cancelled: user stopped"


async def test_a_run_cancelled_while_a_tool_runs_stops_before_the_next_model_call() -> None:
    started = asyncio.Event()
    release = asyncio.Event()
    ran: list[str] = []

    @tool(side_effecting=False)
    async def slow_lookup(city: str) -> str:
        """Look something up slowly, so the run can be stopped while it works."""
        started.set()
        await release.wait()
        ran.append(city)
        return "545000"

    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "slow_lookup", {"city": "Lisbon"}),)),
        Turn(content="never reached"),
    ])
    ctx = make_test_ctx(llm=llm)
    agent = Agent("atlas", "fake", "p", cognition=ReActCognition(tools=[slow_lookup]))

    running = asyncio.create_task(agent.run("How big is Lisbon?", ctx))
    await started.wait()
    ctx.cancel.cancel("user stopped")
    release.set()
    result = await running

    assert result.stop_reason == "cancelled"
    assert result.output is None
    assert str(result.evals["error"]) == "run cancelled: user stopped"
    assert ran == ["Lisbon"]
    assert len(llm.requests) == 1
    assert result.messages[-1] == Message(
        role="tool", content="545000", tool_call_id="c1", name="slow_lookup"
    )


async def test_a_cancelled_run_cannot_be_resumed() -> None:
    ctx = make_test_ctx(llm=FakeLLM("x"), correlation_id="run-c")
    ctx.cancel.cancel("user stopped")
    await atlas().run("t", ctx)

    with pytest.raises(RunNotResumable) as info:
        await atlas().resume("run-c", {}, make_test_ctx(store=ctx.store))
    assert str(info.value) == "run 'run-c' cannot be resumed: it is cancelled, not suspended"


async def test_starting_a_second_run_over_a_suspended_one_is_refused() -> None:
    @tool(side_effecting=True, requires_approval=True)
    def refund(order_id: str) -> str:
        """Refund a customer order in full to its original payment method."""
        return "refunded"

    agent = Agent("desk", "fake", "p", cognition=ReActCognition(tools=[refund]))
    llm = FakeLLM.script([Turn(tool_calls=(ToolCall("c1", "refund", {"order_id": "A1"}),))])
    ctx = make_test_ctx(llm=llm, correlation_id="run-s")
    assert (await agent.run("refund A1", ctx)).stop_reason == "suspended"

    with pytest.raises(RunNotResumable) as info:
        await agent.run("refund A1 again", ctx)
    assert str(info.value) == (
        "run 'run-s' cannot be resumed: agent 'desk' already has a suspended run under this "
        "run id; resume it with agent.resume(...) or start the new run on a fresh context"
    )
