"""Run traces in the store: spans as values with their parents, bounded per run."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.runtime.spans import open_span
from agentkit.state.stores import InMemoryStore
from agentkit.state.stores.sqlite import SQLiteStore
from agentkit.state.traces import (
    MAX_SPANS,
    RunTrace,
    TraceRecorder,
    TraceSpan,
    load_trace,
    save_trace,
)


def test_spans_keep_their_parents_attributes_and_errors() -> None:
    recorder = TraceRecorder("r1")
    with open_span(recorder, "invoke_agent", {"gen_ai.agent.name": "support"}):
        with open_span(recorder, "chat", {"gen_ai.usage.input_tokens": 12}) as chat:
            chat.set_attribute("agentkit.cost_usd", 0.5)
            chat.set_attribute("not.data", object())
        with pytest.raises(KeyError), open_span(recorder, "execute_tool"):
            raise KeyError("k")
    trace = recorder.trace()
    assert [(s.span_id, s.parent_id, s.name) for s in trace.spans] == [
        (1, None, "invoke_agent"), (2, 1, "chat"), (3, 1, "execute_tool"),
    ]
    assert trace.spans[1].attributes == FrozenDict(
        {"gen_ai.usage.input_tokens": 12, "agentkit.cost_usd": 0.5}
    )
    assert trace.spans[2].error == "KeyError: 'k'"
    assert all(s.duration is not None and s.duration >= 0 for s in trace.spans)
    assert trace.dropped == 0


def test_spans_past_the_cap_are_dropped_and_counted() -> None:
    recorder = TraceRecorder("r1", cap=2)
    for name in ("a", "b", "c", "d"):
        with open_span(recorder, name):
            pass
    trace = recorder.trace()
    assert [s.name for s in trace.spans] == ["a", "b"]
    assert trace.dropped == 2
    assert TraceRecorder("r2").cap == MAX_SPANS == 2000


def test_a_resumed_run_records_after_its_earlier_spans_within_one_cap() -> None:
    first = TraceRecorder("r1", cap=3)
    with open_span(first, "a"):
        pass
    earlier = first.trace()
    again = TraceRecorder("r1", cap=3, earlier=earlier)
    for name in ("b", "c", "d"):
        with open_span(again, name):
            pass
    trace = again.trace()
    assert [(s.span_id, s.name) for s in trace.spans] == [(1, "a"), (2, "b"), (3, "c")]
    assert trace.spans[0] == earlier.spans[0]
    assert trace.dropped == 1


@pytest.mark.parametrize("cap", [0, -1, True, 1.5])
def test_a_cap_that_is_not_a_positive_integer_is_refused(cap: object) -> None:
    with pytest.raises(ValueError) as info:
        TraceRecorder("r1", cap=cap)  # type: ignore[arg-type]
    assert str(info.value) == f"TraceRecorder(cap=...) must be a positive integer, got {cap!r}"


async def test_a_saved_trace_is_read_back_from_a_durable_store(tmp_path: Path) -> None:
    trace = RunTrace(
        run_id="r1",
        spans=(TraceSpan(span_id=1, parent_id=None, name="chat", start=10.0, duration=0.5,
                         attributes=FrozenDict({"gen_ai.usage.input_tokens": 3})),),
        dropped=4,
    )
    async with SQLiteStore(tmp_path / "state.db") as store:
        await save_trace(store, trace)
    async with SQLiteStore(tmp_path / "state.db") as store:
        assert await load_trace(store, "r1") == trace
        assert await load_trace(store, "r2") is None
    memory = InMemoryStore()
    await save_trace(memory, trace)
    assert await load_trace(memory, "r1") == trace
