"""RecordingTracer: a tracer that keeps every span in memory, for tests."""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentkit.core.contracts.ports import Span

__all__ = ["RecordedSpan", "RecordingTracer"]


@dataclass(slots=True, eq=False)
class RecordedSpan:
    """A span as the RecordingTracer saw it."""

    name: str
    span_id: int
    parent_id: int | None
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    errors: list[BaseException] = field(default_factory=list)
    start: float = field(default_factory=time.perf_counter)
    end_time: float | None = None

    def set_attribute(self, key: str, value: Any) -> None:
        self.attributes[key] = value

    def add_event(self, name: str, attributes: Mapping[str, Any] | None = None) -> None:
        self.events.append((name, dict(attributes or {})))

    def record_error(self, error: BaseException) -> None:
        self.errors.append(error)

    def end(self) -> None:
        self.end_time = time.perf_counter()


class RecordingTracer:
    """Keeps every span it opened, in order, with parents, attributes and events."""

    def __init__(self) -> None:
        self.spans: list[RecordedSpan] = []
        self._ids = itertools.count(1)

    def start_span(
        self,
        name: str,
        attributes: Mapping[str, Any] | None = None,
        parent: Span | None = None,
    ) -> RecordedSpan:
        parent_id = _span_id(parent)
        span = RecordedSpan(name, next(self._ids), parent_id, dict(attributes or {}))
        self.spans.append(span)
        return span

    def named(self, name: str) -> list[RecordedSpan]:
        """Every span called ``name``."""
        return [s for s in self.spans if s.name == name]


def _span_id(span: Span | None) -> int | None:
    if span is None:
        return None
    inner = getattr(span, "_span", span)  # unwrap the runtime's guard
    return getattr(inner, "span_id", None)
