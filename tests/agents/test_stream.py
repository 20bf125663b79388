"""agent.stream: typed events as the run progresses, ending with a FinalEvent."""

from __future__ import annotations

import asyncio

from agentkit.agents import (
    Agent,
    FinalEvent,
    InterruptEvent,
    ReasoningDeltaEvent,
    StepEvent,
    Suspended,
    TextDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ToolCall, Usage
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.tools import tool

LOOKUP = ToolCall("c1", "city_population", {"city": "Lisbon"})
ANSWER = "Lisbon has about 545,000 residents."


@tool(side_effecting=False, idempotent=True)
def city_population(city: str) -> int:
    """Look up the most recent census population for a named city."""
    return {"lisbon": 545_000}.get(city.lower(), 0)


@tool(side_effecting=True)
def send_email(to: str, body: str) -> str:
    """Send one email to a single recipient and return the provider message id."""
    return "msg-1"


def atlas(*tools: object) -> Agent:
    chosen = tools or (city_population, send_email)
    return Agent("atlas", "fake", "p", cognition=ReActCognition(tools=chosen))


async def test_a_run_streams_text_tool_calls_results_steps_then_final() -> None:
    first, second = Usage(10, 2, requests=1), Usage(20, 8, requests=1)
    llm = FakeLLM.script([
        Turn(content="Let me check.", tool_calls=(LOOKUP,), usage=first),
        Turn(content=ANSWER, usage=second),
    ])
    ctx = make_test_ctx(llm=llm, correlation_id="run-1")

    events = [event async for event in atlas().stream("How big is Lisbon?", ctx)]

    final = events[-1]
    assert isinstance(final, FinalEvent)
    assert events[:-1] == [
        TextDeltaEvent("Let"),
        TextDeltaEvent(" me"),
        TextDeltaEvent(" check."),
        ToolCallEvent(LOOKUP),
        StepEvent(1, first, model="fake"),
        ToolResultEvent("c1", "city_population", "545000", False),
        TextDeltaEvent("Lisbon"),
        TextDeltaEvent(" has"),
        TextDeltaEvent(" about"),
        TextDeltaEvent(" 545,000"),
        TextDeltaEvent(" residents."),
        StepEvent(2, second, model="fake"),
    ]
    assert (final.result.output, final.result.stop_reason) == (ANSWER, "complete")
    assert final.result.usage == first + second
    assert final.result.run_id == "run-1"


async def test_the_models_reasoning_streams_as_its_own_events_before_its_text() -> None:
    usage = Usage(10, 4, requests=1)
    llm = FakeLLM.script([
        Turn(content="Let me check.", tool_calls=(LOOKUP,), usage=usage,
             reasoning="The census figure is the one to use."),
        Turn(content=ANSWER, usage=usage, reasoning="545,000 came back."),
    ])
    events = [e async for e in atlas().stream("How big is Lisbon?", make_test_ctx(llm=llm))]

    assert [e for e in events if isinstance(e, ReasoningDeltaEvent | StepEvent)] == [
        ReasoningDeltaEvent("The census figure is the one to use."),
        StepEvent(1, usage, model="fake"),
        ReasoningDeltaEvent("545,000 came back."),
        StepEvent(2, usage, model="fake"),
    ]
    assert events[0] == ReasoningDeltaEvent("The census figure is the one to use.")
    assert events[0].kind == "reasoning_delta"
    final = events[-1]
    assert isinstance(final, FinalEvent)
    assert final.result.output == ANSWER


async def test_text_deltas_of_the_last_step_join_to_the_answer() -> None:
    llm = FakeLLM.script([Turn(tool_calls=(LOOKUP,)), Turn(content=ANSWER)])
    events = [e async for e in atlas().stream("q", make_test_ctx(llm=llm))]

    last_result = max(i for i, e in enumerate(events) if isinstance(e, ToolResultEvent))
    text = "".join(e.text for e in events[last_result:] if isinstance(e, TextDeltaEvent))
    assert text == ANSWER
    assert events[-1] == FinalEvent(events[-1].result)  # type: ignore[union-attr]
    assert [type(e) for e in events].count(FinalEvent) == 1


async def test_streaming_and_running_give_the_same_result() -> None:
    def script() -> FakeLLM:
        return FakeLLM.script([Turn(tool_calls=(LOOKUP,)), Turn(content=ANSWER)])

    ran = await atlas().run("q", make_test_ctx(llm=script(), correlation_id="r"))
    ctx = make_test_ctx(llm=script(), correlation_id="r")
    streamed = [e async for e in atlas().stream("q", ctx)]
    assert streamed[-1] == FinalEvent(ran)


async def test_a_failed_tool_streams_an_error_result() -> None:
    ghost = ToolCall("c9", "population", {"city": "Lisbon"})
    llm = FakeLLM.script([Turn(tool_calls=(ghost,)), Turn(content="sorry")])
    events = [e async for e in atlas().stream("q", make_test_ctx(llm=llm))]

    results = [e for e in events if isinstance(e, ToolResultEvent)]
    assert results == [
        ToolResultEvent(
            "c9",
            "population",
            "no tool named 'population'. Available tools: ['city_population', 'send_email']",
            True,
        )
    ]


async def test_a_suspension_streams_an_interrupt_and_then_the_final_event() -> None:
    mail = ToolCall("c2", "send_email", {"to": "a@example.com", "body": "hi"})
    usage = Usage(5, 1, requests=1)
    llm = FakeLLM.script([Turn(content="Sending.", tool_calls=(LOOKUP, mail), usage=usage)])
    ctx = make_test_ctx(llm=llm, autonomy="gated", correlation_id="run-1")

    events = [e async for e in atlas().stream("q", ctx)]

    held = Suspended("run-1", (mail,), "awaiting_approval")
    assert events[:-1] == [
        TextDeltaEvent("Sending."),
        ToolCallEvent(LOOKUP),
        ToolCallEvent(mail),
        StepEvent(1, usage, model="fake"),
        InterruptEvent(held),
    ]
    final = events[-1]
    assert isinstance(final, FinalEvent)
    assert final.result.stop_reason == "suspended"
    assert final.result.evals["suspended"] == held


async def test_closing_the_stream_early_cancels_the_run() -> None:
    started, cancelled = asyncio.Event(), asyncio.Event()

    @tool(side_effecting=False)
    async def wait_forever(city: str) -> str:
        """Block until cancelled, so closing the stream has something to stop."""
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()
        return "unreachable"

    call = ToolCall("c1", "wait_forever", {"city": "Lisbon"})
    llm = FakeLLM.script([Turn(tool_calls=(call,)), Turn(content="never")])
    stream = atlas(wait_forever).stream("q", make_test_ctx(llm=llm))

    async for event in stream:
        if isinstance(event, StepEvent):
            break
    await started.wait()
    await stream.aclose()  # type: ignore[attr-defined]
    await cancelled.wait()
    assert len(llm.requests) == 1


async def test_a_resumed_run_streams_from_the_approval_on() -> None:
    email = ToolCall("c9", "send_email", {"to": "ops@example.com", "body": "hi"})
    llm = FakeLLM.script([Turn(tool_calls=(email,)), Turn(content="Sent.")])
    ctx = make_test_ctx(llm=llm, autonomy="gated")
    agent = atlas()
    first = await agent.run("email ops", ctx)
    assert first.stop_reason == "suspended"

    events = [e async for e in agent.stream_resume(first.run_id, {"c9": "approve"}, ctx)]

    assert events[0] == ToolResultEvent("c9", "send_email", "msg-1", False)
    assert [e.text for e in events if isinstance(e, TextDeltaEvent)] == ["Sent."]
    final = events[-1]
    assert isinstance(final, FinalEvent)
    assert final.result.output == "Sent."
