"""Live events: an activity's events go to the store in batches under sequential keys,
and a reader takes each batch once, in order, saying when a retry supersedes an attempt."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.agents.events import (
    AgentEvent,
    StepEvent,
    TextDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from agentkit.core.contracts.types import ToolCall, Usage
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.integrations.temporal import AgentWorker, RunOptions, TemporalAgents
from agentkit.integrations.temporal.live import LivePublisher, LiveReader, live_key
from agentkit.state.stores.memory import InMemoryStore
from agentkit.tools import tool
from tests.serve.served import close_store, open_store


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    """Each store the workers and a server may share."""
    opened = await open_store(request.param, request, tmp_path)
    yield opened
    await close_store(opened)


async def _read(store: Any, run_id: str) -> tuple[int, list[Any]]:
    seen: list[AgentEvent | dict[str, Any]] = []
    count = await LiveReader(store, run_id).read(seen.append)
    return count, seen


async def test_a_streaming_model_costs_one_write_per_batch_not_per_token(store: Any) -> None:
    live = LivePublisher(store, "r1", 1, "run-a:1", 1)
    for n in range(500):
        live.add(TextDeltaEvent(f"w{n} "))
    live.add(StepEvent(1, Usage(3, 500, 1), model="fake"))
    assert await live.close() == 2
    count, seen = await _read(store, "r1")
    assert count == 1
    assert seen == [*(TextDeltaEvent(f"w{n} ") for n in range(500)),
                    StepEvent(1, Usage(3, 500, 1), model="fake")]


async def test_events_that_come_apart_in_time_are_flushed_without_waiting_for_the_end(
    store: Any,
) -> None:
    live = LivePublisher(store, "r1", 1, "run-a:1", 1, flush_seconds=0.01)
    live.add(TextDeltaEvent("Hel"))
    async with asyncio.timeout(5):
        while await store.get(live_key("r1", 1)) is None:
            await asyncio.sleep(0.01)
    live.add(TextDeltaEvent("lo"))
    assert await live.close() == 3
    assert await _read(store, "r1") == (2, [TextDeltaEvent("Hel"), TextDeltaEvent("lo")])


async def test_two_activities_flushing_at_once_take_the_next_free_numbers(store: Any) -> None:
    """Tool calls of one turn run at once, each told the same first number."""
    first = LivePublisher(store, "r1", 1, "run-a:2", 1)
    second = LivePublisher(store, "r1", 1, "run-a:3", 1)
    first.add(ToolCallEvent(ToolCall("c1", "lookup", {})))
    second.add(ToolCallEvent(ToolCall("c2", "lookup", {})))
    ends = await asyncio.gather(first.close(), second.close())
    assert sorted(ends) == [2, 3]
    count, seen = await _read(store, "r1")
    assert count == 2
    assert sorted(e.call.id for e in seen if isinstance(e, ToolCallEvent)) == ["c1", "c2"]


async def test_a_retry_supersedes_its_earlier_attempt_whose_late_batches_are_dropped(
    store: Any,
) -> None:
    for attempt, text in ((1, "Hel"), (2, "Hello."), (1, "late")):
        live = LivePublisher(store, "r1", 1, "run-a:1", attempt)
        live.add(TextDeltaEvent(text))
        await live.close()
    assert await _read(store, "r1") == (3, [
        TextDeltaEvent("Hel"), {"kind": "retry", "attempt": 2}, TextDeltaEvent("Hello.")])


async def test_a_reader_takes_each_batch_once_and_goes_on_where_it_stopped(store: Any) -> None:
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


@tool(side_effecting=False)
def count(n: int) -> int:
    """Return the integer that comes right after n."""
    return n + 1


COUNTING = [
    Turn(tool_calls=(ToolCall("c1", "count", {"n": 1}),)),
    Turn(tool_calls=(ToolCall("c2", "count", {"n": 2}),)),
    Turn(content="Three it is."),
]


async def test_a_run_publishes_its_events_across_continue_as_new_only_when_asked(
    client: Client, task_queue: str
) -> None:
    agent = Agent("counter", "fake", "Count.", cognition=ReActCognition([count]))
    store = InMemoryStore()
    llm = FakeLLM.script([*COUNTING, *COUNTING])
    async with AgentWorker(client, task_queue=task_queue, agents=[agent],
                           context=lambda: make_test_ctx(llm=llm, store=store)):
        for live_events in (False, True):
            agents = TemporalAgents(client, task_queue=task_queue, store=store, options=RunOptions(
                live_events=live_events, continue_as_new_after=1))
            run_id = f"live-{live_events}-{uuid.uuid4().hex[:8]}"
            result = await agents.run("counter", "count to three", run_id=run_id)
            assert result.output == "Three it is."
            seen: list[Any] = []
            count_read = await LiveReader(store, run_id).read(seen.append)
            if not live_events:
                assert (count_read, seen) == (0, [])  # nothing written
                continue
            assert [(e.kind, getattr(e, "step", None) or getattr(e, "text", None))
                    for e in seen] == [
                ("tool_call", None), ("step", 1), ("tool_result", None),
                ("tool_call", None), ("step", 2), ("tool_result", None),
                ("text_delta", "Three"), ("text_delta", " it"), ("text_delta", " is."),
                ("step", 3)]
            assert [e.content for e in seen if isinstance(e, ToolResultEvent)] == ["2", "3"]


async def test_a_retried_attempt_that_sent_no_deltas_supersedes_nothing(store: Any) -> None:
    """A tool activity retried after it published its result: no ``retry`` item, as
    no text of it is superseded, and its result once."""
    for attempt in (1, 2):
        live = LivePublisher(store, "r1", 1, "run-a:4", attempt)
        live.add(ToolResultEvent("c1", "lookup", "shipped", False))
        await live.close()
    count, seen = await _read(store, "r1")
    assert count == 2
    assert seen == [ToolResultEvent("c1", "lookup", "shipped", False)]
