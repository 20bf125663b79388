"""Run traces kept in the store: the spans of one served run, bounded.

A :class:`TraceRecorder` is a :class:`~agentkit.core.contracts.ports.Tracer` a face gives
a run's context; it keeps the run's spans (model calls, tool calls, sub-runs) as frozen
:class:`TraceSpan` values, up to :data:`MAX_SPANS`. Past the cap it drops new spans and
counts them, so a run that loops for hours costs a bounded row, and the stored
:class:`RunTrace` says how many were cut (``dropped``) rather than looking complete.
:func:`save_trace` writes the trace under the run's key in the store; :func:`load_trace`
reads it back.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.ports import Span, Store

__all__ = ["MAX_SPANS", "RunTrace", "TraceRecorder", "TraceSpan", "load_trace", "save_trace"]

MAX_SPANS = 2000
"""The most spans one run's trace keeps; later spans are counted in ``dropped``."""

_PREFIX = "agentkit:trace:"


@dataclass(frozen=True, slots=True, kw_only=True)
class TraceSpan:
    """One finished (or, when saved mid-run, still open) span of a run."""

    span_id: int
    """The span's number within the run, from 1."""
    parent_id: int | None
    """The enclosing span, or None for a root."""
    name: str
    """What it measured: ``chat``, ``execute_tool``, ``invoke_agent``, ..."""
    start: float
    """When it opened, in seconds since the epoch."""
    duration: float | None = None
    """How long it took, in seconds; None while it is open."""
    attributes: FrozenDict[str, Any] = field(default_factory=FrozenDict)
    """Its attributes (OTel GenAI names: tokens, cost, cache figures, tool name)."""
    error: str | None = None
    """The error it ended with, as ``"Type: message"``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunTrace:
    """The spans of one run, oldest first, and how many were cut past the cap."""

    run_id: str
    """The run."""
    spans: tuple[TraceSpan, ...] = ()
    """The spans kept."""
    dropped: int = 0
    """Spans not kept because the trace reached its cap."""


class _Open:
    """A span being recorded; it becomes a :class:`TraceSpan` when the trace is taken."""

    __slots__ = ("attributes", "error", "finish", "name", "parent_id", "span_id", "start",
                 "wall")

    def __init__(self, span_id: int, parent_id: int | None, name: str,
                 attributes: Mapping[str, Any] | None) -> None:
        self.span_id = span_id
        self.parent_id = parent_id
        self.name = name
        self.attributes: dict[str, Any] = dict(attributes or {})
        self.error: str | None = None
        self.wall = time.time()
        self.start = time.perf_counter()
        self.finish: float | None = None

    def set_attribute(self, key: str, value: Any) -> None:
        self.attributes[key] = value

    def add_event(self, name: str, attributes: Mapping[str, Any] | None = None) -> None:
        return None  # events (result previews) are the span's detail, not its figures

    def record_error(self, error: BaseException) -> None:
        self.error = f"{type(error).__name__}: {error}"

    def end(self) -> None:
        if self.finish is None:
            self.finish = time.perf_counter()

    def value(self) -> TraceSpan:
        return TraceSpan(
            span_id=self.span_id, parent_id=self.parent_id, name=self.name, start=self.wall,
            duration=None if self.finish is None else self.finish - self.start,
            attributes=FrozenDict(
                {k: v for k, v in self.attributes.items() if _plain(v)}
            ),
            error=self.error,
        )


class _Dropped:
    """The span handed out past the cap: it records nothing."""

    def set_attribute(self, key: str, value: Any) -> None:
        return None

    def add_event(self, name: str, attributes: Mapping[str, Any] | None = None) -> None:
        return None

    def record_error(self, error: BaseException) -> None:
        return None

    def end(self) -> None:
        return None


def _plain(value: Any) -> bool:
    # Attributes are figures and names; anything else would not be data in the store.
    return value is None or isinstance(value, str | int | float | bool)


class TraceRecorder:
    """A tracer that keeps one run's spans, at most ``cap`` of them."""

    def __init__(
        self, run_id: str, *, cap: int = MAX_SPANS, earlier: RunTrace | None = None
    ) -> None:
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
            raise ValueError(f"TraceRecorder(cap=...) must be a positive integer, got {cap!r}")
        self.run_id = run_id
        self.cap = cap
        # A resumed run's trace goes on from what its earlier stretches recorded.
        self._kept = () if earlier is None else earlier.spans
        self._spans: list[_Open] = []
        self._dropped = 0 if earlier is None else earlier.dropped
        self._ids = itertools.count(1 + max((s.span_id for s in self._kept), default=0))

    def start_span(
        self, name: str, attributes: Mapping[str, Any] | None = None, parent: Span | None = None
    ) -> Span:
        """Open a span under ``parent``; past the cap, one that records nothing."""
        if len(self._kept) + len(self._spans) >= self.cap:
            self._dropped += 1
            return _Dropped()
        inner = getattr(parent, "_span", parent)  # the runtime wraps spans in a guard
        parent_id = inner.span_id if isinstance(inner, _Open) else None
        span = _Open(next(self._ids), parent_id, name, attributes)
        self._spans.append(span)
        return span

    def trace(self) -> RunTrace:
        """The spans so far as one value."""
        return RunTrace(
            run_id=self.run_id, spans=(*self._kept, *(s.value() for s in self._spans)),
            dropped=self._dropped,
        )


async def save_trace(store: Store, trace: RunTrace) -> None:
    """Keep ``trace`` in ``store`` under its run, replacing an earlier save."""
    await store.set(_PREFIX + trace.run_id, trace)


async def load_trace(store: Store, run_id: str) -> RunTrace | None:
    """The trace saved for ``run_id``, or None."""
    found: RunTrace | None = await store.get(_PREFIX + run_id)
    return found
