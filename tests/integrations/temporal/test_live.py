"""Live events: an activity's events go to the store in batches under sequential keys,
and a reader takes each batch once, in order, saying when a retry supersedes an attempt."""

from __future__ import annotations

import asyncio
from typing import Any

from agentkit.agents.events import AgentEvent, StepEvent, TextDeltaEvent, ToolCallEvent
from agentkit.core.contracts.types import ToolCall, Usage
from agentkit.integrations.temporal.live import LivePublisher, LiveReader, live_key
from agentkit.state.stores.memory import InMemoryStore


async def _read(store: InMemoryStore, run_id: str) -> tuple[int, list[Any]]:
    seen: list[AgentEvent | dict[str, Any]] = []
    count = await LiveReader(store, run_id).read(seen.append)
    return count, seen


async def test_a_streaming_model_costs_one_write_per_batch_not_per_token() -> None:
    store = InMemoryStore()
    live = LivePublisher(store, "r1", 1, "run-a:1", 1)
    for n in range(500):
        live.add(TextDeltaEvent(f"w{n} "))
    live.add(StepEvent(1, Usage(3, 500, 1), model="fake"))
    assert await live.close() == 2
    count, seen = await _read(store, "r1")
    assert count == 1
    assert seen == [*(TextDeltaEvent(f"w{n} ") for n in range(500)),
                    StepEvent(1, Usage(3, 500, 1), model="fake")]


async def test_events_that_come_apart_in_time_are_flushed_without_waiting_for_the_end() -> None:
    store = InMemoryStore()
    live = LivePublisher(store, "r1", 1, "run-a:1", 1, flush_seconds=0.01)
    live.add(TextDeltaEvent("Hel"))
    async with asyncio.timeout(5):
        while await store.get(live_key("r1", 1)) is None:
            await asyncio.sleep(0.01)
    live.add(TextDeltaEvent("lo"))
    assert await live.close() == 3
    assert await _read(store, "r1") == (2, [TextDeltaEvent("Hel"), TextDeltaEvent("lo")])


async def test_two_activities_flushing_at_once_take_the_next_free_numbers() -> None:
    """Tool calls of one turn run at once, each told the same first number."""
    store = InMemoryStore()
    first = LivePublisher(store, "r1", 1, "run-a:2", 1)
    second = LivePublisher(store, "r1", 1, "run-a:3", 1)
    first.add(ToolCallEvent(ToolCall("c1", "lookup", {})))
    second.add(ToolCallEvent(ToolCall("c2", "lookup", {})))
    ends = await asyncio.gather(first.close(), second.close())
    assert sorted(ends) == [2, 3]
    count, seen = await _read(store, "r1")
    assert count == 2
    assert sorted(e.call.id for e in seen if isinstance(e, ToolCallEvent)) == ["c1", "c2"]


async def test_a_retry_supersedes_its_earlier_attempt_whose_late_batches_are_dropped() -> None:
    store = InMemoryStore()
    for attempt, text in ((1, "Hel"), (2, "Hello."), (1, "late")):
        live = LivePublisher(store, "r1", 1, "run-a:1", attempt)
        live.add(TextDeltaEvent(text))
        await live.close()
    assert await _read(store, "r1") == (3, [
        TextDeltaEvent("Hel"), {"kind": "retry", "attempt": 2}, TextDeltaEvent("Hello.")])


async def test_a_reader_takes_each_batch_once_and_goes_on_where_it_stopped() -> None:
    store = InMemoryStore()
    reader = LiveReader(store, "r1")
    seen: list[AgentEvent | dict[str, Any]] = []
    assert await reader.read(seen.append) == 0
    live = LivePublisher(store, "r1", 1, "run-a:1", 1)
    live.add(TextDeltaEvent("a"))
    assert await live.close() == 2
    assert await reader.read(seen.append) == 1
    live = LivePublisher(store, "r1", 2, "run-a:2", 1)
    live.add(TextDeltaEvent("b"))
    await live.close()
    assert await reader.read(seen.append) == 1
    assert (seen, reader.next) == ([TextDeltaEvent("a"), TextDeltaEvent("b")], 3)
