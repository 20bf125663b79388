"""The open span, tracked per task, and best-effort ways to write to it.

Tracing must never break a call: every write to a span goes through a guard that logs
the tracer's failure and carries on.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from agentkit.core.contracts.ports import Span, Tracer
from agentkit.core.contracts.types import Usage

TRACE_SEED = "agentkit.trace_seed"
"""A span attribute: root spans (no parent in this process) with the same seed belong
to one trace, for tracers that can say so (``OTelTracer`` derives the trace id from
it). A Temporal run's activity spans carry the run id as their seed."""

_log = logging.getLogger("agentkit.tracing")
_current: ContextVar[Span | None] = ContextVar("agentkit_current_span", default=None)


def current_span() -> Span | None:
    """The span opened most recently in this task, if any."""
    return _current.get()


def add_span_event(name: str, attributes: Mapping[str, Any] | None = None) -> None:
    """Add an event to the open span, if there is one; a failing tracer is logged, not raised."""
    span = _current.get()
    if span is None:
        return
    try:
        span.add_event(name, attributes)
    except Exception:
        _log.warning("tracer failed to record event %r; continuing", name, exc_info=True)


def set_cost(span: Span, usage: Usage) -> None:
    """Record what ``usage`` cost on ``span``: ``agentkit.cost_usd``, and the models
    whose price was unknown (``agentkit.unpriced_models``), so a 0 is not read as free."""
    span.set_attribute("agentkit.cost_usd", usage.cost_usd)
    if usage.unpriced_models:
        span.set_attribute("agentkit.unpriced_models", list(usage.unpriced_models))


class _NoSpan:
    """Stands in for a span the tracer failed to open."""

    def set_attribute(self, key: str, value: Any) -> None:
        pass

    def add_event(self, name: str, attributes: Mapping[str, Any] | None = None) -> None:
        pass

    def record_error(self, error: BaseException) -> None:
        pass

    def end(self) -> None:
        pass


class _GuardedSpan:
    """Forwards to a real span, swallowing (and logging) anything it raises."""

    __slots__ = ("_span",)

    def __init__(self, span: Span) -> None:
        self._span = span

    def set_attribute(self, key: str, value: Any) -> None:
        try:
            self._span.set_attribute(key, value)
        except Exception:
            _log.warning("tracer failed to set attribute %r; continuing", key, exc_info=True)

    def add_event(self, name: str, attributes: Mapping[str, Any] | None = None) -> None:
        try:
            self._span.add_event(name, attributes)
        except Exception:
            _log.warning("tracer failed to record event %r; continuing", name, exc_info=True)

    def record_error(self, error: BaseException) -> None:
        try:
            self._span.record_error(error)
        except Exception:
            _log.warning("tracer failed to record an error; continuing", exc_info=True)

    def end(self) -> None:
        try:
            self._span.end()
        except Exception:
            _log.warning("tracer failed to end a span; continuing", exc_info=True)


@contextmanager
def open_span(
    tracer: Tracer | None, name: str, attributes: Mapping[str, Any] | None = None
) -> Iterator[Span]:
    """Open a span as a child of the current one and make it current until the block ends.

    A tracer that raises degrades to a no-op span. An exception leaving the block is
    recorded on the span and re-raised.
    """
    span: Span
    if tracer is None:
        span = _NoSpan()
    else:
        try:
            span = _GuardedSpan(tracer.start_span(name, attributes, _current.get()))
        except Exception:
            _log.warning("tracer failed to open span %r; continuing untraced", name, exc_info=True)
            span = _NoSpan()
    token = _current.set(span)
    try:
        yield span
    except BaseException as error:
        span.record_error(error)
        raise
    finally:
        _current.reset(token)
        span.end()
