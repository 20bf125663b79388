"""A Temporal run's live events merged into its event log: each tool call, result and
step once, whether it came live, again from a retried attempt, or from a result."""

from __future__ import annotations

from agentkit.agents.events import (
    GuardrailEvent,
    StepEvent,
    TextDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from agentkit.core.contracts.types import ToolCall, Usage
from agentkit.core.guardrails import GuardrailTrip
from agentkit.integrations.temporal.live import LivePublisher
from agentkit.serve.runs import EventLog
from agentkit.serve.temporal_live import LiveEvents
from agentkit.state.stores.memory import InMemoryStore

CALL = ToolCall("c1", "lookup", {"order_id": "A"})


async def test_a_call_and_step_published_by_two_attempts_and_a_result_are_logged_once() -> None:
    store = InMemoryStore()
    for attempt in (1, 2):  # the first attempt's worker died after it published
        live = LivePublisher(store, "r1", 1, "run-a:1", attempt)
        live.add(TextDeltaEvent("Looking."))
        live.add(ToolCallEvent(CALL))
        live.add(StepEvent(1, Usage(2, 2, 1), model="fake"))
        await live.close()
    log = EventLog()
    events = LiveEvents(store, "r1")
    events.follow(log)
    await events.settle()
    for derived in (ToolCallEvent(CALL), ToolResultEvent("c1", "lookup", "shipped", False)):
        events.add(log, derived)  # what the run's result shows
    assert [e["kind"] for e in log.events] == [
        "text_delta", "tool_call", "step", "retry", "text_delta", "tool_result"]
    assert log.events[3] == {"kind": "retry", "attempt": 2}


async def test_a_call_id_a_model_uses_twice_is_logged_for_each_call() -> None:
    """Live events and the same events derived from the result match one for one."""
    store = InMemoryStore()
    for step, by in ((1, "run-a:1"), (2, "run-a:3")):
        model = LivePublisher(store, "r1", 1, by, 1)
        model.add(ToolCallEvent(CALL))
        model.add(StepEvent(step, Usage(2, 2, 1), model="fake"))
        await model.close()
        tool = LivePublisher(store, "r1", 1, f"run-a:{step * 2}", 1)
        tool.add(ToolResultEvent("c1", "lookup", f"answer {step}", False))
        await tool.close()
    log = EventLog()
    events = LiveEvents(store, "r1")
    events.follow(log)
    await events.settle()
    for step in (1, 2):
        events.add(log, ToolCallEvent(CALL))
        events.add(log, ToolResultEvent("c1", "lookup", f"answer {step}", False))
    assert [(e["kind"], e.get("content")) for e in log.events] == [
        ("tool_call", None), ("step", None), ("tool_result", "answer 1"),
        ("tool_call", None), ("step", None), ("tool_result", "answer 2")]


async def test_a_guardrail_trip_published_live_is_logged_as_the_stream_shows_it() -> None:
    store = InMemoryStore()
    trip = GuardrailTrip("no_weapons", "tool lookup result", "asks about weapons")
    live = LivePublisher(store, "r1", 1, "run-a:2", 1)
    live.add(GuardrailEvent(trip))  # a tool activity whose result tripped
    await live.close()
    log = EventLog()
    events = LiveEvents(store, "r1")
    events.follow(log)
    await events.settle()
    assert log.events == [{"kind": "guardrail", "guardrail": "no_weapons",
                           "where": "tool lookup result", "reason": "asks about weapons",
                           "info": None}]
