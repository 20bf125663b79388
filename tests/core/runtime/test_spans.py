"""Spans: nested per task, written best-effort, never able to break the traced block."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from agentkit.core.contracts.ports import Span
from agentkit.core.runtime import add_span_event, current_span, open_span
from agentkit.core.testing import RecordingTracer


def test_open_span_nests_under_the_current_span() -> None:
    tracer = RecordingTracer()
    with open_span(tracer, "invoke_agent", {"gen_ai.agent.name": "atlas"}) as outer:
        assert current_span() is outer
        with open_span(tracer, "execute_tool") as inner:
            assert current_span() is inner
        assert current_span() is outer
    assert current_span() is None

    first, second = tracer.spans
    assert (first.name, first.parent_id) == ("invoke_agent", None)
    assert (second.name, second.parent_id) == ("execute_tool", first.span_id)
    assert first.attributes == {"gen_ai.agent.name": "atlas"}
    assert first.end_time is not None
    assert second.end_time is not None


def test_sibling_spans_share_a_parent() -> None:
    tracer = RecordingTracer()
    with open_span(tracer, "turn"):
        with open_span(tracer, "a"):
            pass
        with open_span(tracer, "b"):
            pass
    turn, a, b = tracer.spans
    assert (a.parent_id, b.parent_id) == (turn.span_id, turn.span_id)


def test_writes_go_to_the_open_span() -> None:
    tracer = RecordingTracer()
    with open_span(tracer, "execute_tool") as span:
        span.set_attribute("gen_ai.tool.name", "echo")
        add_span_event("tool.result", {"size": 3})
    (recorded,) = tracer.spans
    assert recorded.attributes == {"gen_ai.tool.name": "echo"}
    assert recorded.events == [("tool.result", {"size": 3})]


def test_add_span_event_with_no_open_span_is_a_no_op() -> None:
    tracer = RecordingTracer()
    with open_span(tracer, "closed"):
        pass
    add_span_event("orphan", {"k": 1})
    (closed,) = tracer.spans
    assert closed.events == []
    assert current_span() is None


class _StartFails:
    def start_span(
        self, name: str, attributes: Mapping[str, Any] | None = None, parent: Span | None = None
    ) -> Span:
        raise RuntimeError("collector unreachable")


def test_a_tracer_that_fails_to_start_a_span_degrades_to_a_no_op() -> None:
    ran: list[str] = []
    with open_span(_StartFails(), "execute_tool") as span:
        span.set_attribute("k", "v")
        span.add_event("e")
        add_span_event("e2")
        ran.append("body")
    assert ran == ["body"]
    assert current_span() is None


class _BrokenSpan:
    def set_attribute(self, key: str, value: Any) -> None:
        raise RuntimeError("set_attribute")

    def add_event(self, name: str, attributes: Mapping[str, Any] | None = None) -> None:
        raise RuntimeError("add_event")

    def record_error(self, error: BaseException) -> None:
        raise RuntimeError("record_error")

    def end(self) -> None:
        raise RuntimeError("end")


class _SpansBreak:
    def start_span(
        self, name: str, attributes: Mapping[str, Any] | None = None, parent: Span | None = None
    ) -> Span:
        return _BrokenSpan()


def test_a_span_whose_every_method_raises_never_breaks_the_block() -> None:
    with open_span(_SpansBreak(), "execute_tool") as span:
        span.set_attribute("k", "v")
        span.add_event("e")
        add_span_event("e2")
    error = ValueError("the tool failed")
    with pytest.raises(ValueError) as info, open_span(_SpansBreak(), "execute_tool"):
        raise error
    assert info.value is error


def test_no_tracer_still_runs_the_block() -> None:
    with open_span(None, "execute_tool") as span:
        span.set_attribute("k", "v")
        assert current_span() is span
    assert current_span() is None


def test_an_exception_in_the_block_is_recorded_and_re_raised() -> None:
    tracer = RecordingTracer()
    error = KeyError("order A-1")
    with pytest.raises(KeyError) as info, open_span(tracer, "execute_tool"):
        raise error
    assert info.value is error
    (span,) = tracer.spans
    assert span.errors == [error]
    assert span.end_time is not None
    assert current_span() is None
