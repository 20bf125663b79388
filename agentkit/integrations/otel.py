"""OpenTelemetry: agentkit's Tracer seam on a real ``TracerProvider``.

Install with ``pip install "agentkit-framework[otel]"``. Then::

    ctx = make_ctx(llm, tracer=OTelTracer(provider))

and every ``invoke_agent``, ``chat`` and ``execute_tool`` span ``tracing()`` opens
becomes an OpenTelemetry span with the GenAI semantic-convention attributes, nested
as the calls were.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from agentkit.core.contracts.ports import Span
from agentkit.core.runtime.spans import TRACE_SEED

try:
    from opentelemetry import trace as _trace
except ImportError as exc:  # pragma: no cover - exercised without the extra installed
    raise ImportError(
        "agentkit.integrations.otel needs OpenTelemetry: "
        'pip install "agentkit-framework[otel]"'
    ) from exc

__all__ = ["OTelTracer", "trace_id_for"]

_SCALARS = (str, bool, int, float)


def _attribute(value: Any) -> Any:
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, Sequence) and all(isinstance(v, _SCALARS) for v in value):
        return list(value)
    return str(value)


def _attributes(values: Mapping[str, Any] | None) -> dict[str, Any]:
    return {k: _attribute(v) for k, v in (values or {}).items() if v is not None}


def _ids(seed: str) -> tuple[int, int]:
    digest = hashlib.sha256(seed.encode()).digest()
    return (int.from_bytes(digest[:16], "big") or 1, int.from_bytes(digest[16:24], "big") or 1)


def trace_id_for(seed: str) -> int:
    """The trace id of the spans opened with ``agentkit.trace_seed`` = ``seed`` and no
    parent (e.g. every activity span of the Temporal run whose run id is ``seed``)."""
    return _ids(seed)[0]


def _seeded(attributes: Mapping[str, Any] | None) -> Any:
    """For a span without an agentkit parent that carries ``agentkit.trace_seed`` (and
    no OpenTelemetry span is current), a context whose remote parent is the seed's:
    spans with one seed share one trace, whichever process opens them."""
    seed = (attributes or {}).get(TRACE_SEED)
    if not isinstance(seed, str) or not seed:
        return None
    if _trace.get_current_span().get_span_context().is_valid:
        return None  # an OpenTelemetry trace is already under way here: join it
    trace_id, span_id = _ids(seed)
    parent = _trace.SpanContext(trace_id, span_id, is_remote=True,
                                trace_flags=_trace.TraceFlags(_trace.TraceFlags.SAMPLED))
    return _trace.set_span_in_context(_trace.NonRecordingSpan(parent))


class _OTelSpan:
    __slots__ = ("span",)

    def __init__(self, span: Any) -> None:
        self.span = span

    def set_attribute(self, key: str, value: Any) -> None:
        self.span.set_attribute(key, _attribute(value))

    def add_event(self, name: str, attributes: Mapping[str, Any] | None = None) -> None:
        self.span.add_event(name, _attributes(attributes))

    def record_error(self, error: BaseException) -> None:
        self.span.record_exception(error)
        self.span.set_status(_trace.Status(_trace.StatusCode.ERROR, str(error)))

    def end(self) -> None:
        self.span.end()


class OTelTracer:
    """Opens OpenTelemetry spans for agentkit, as children of the span agentkit has open.

    ``provider`` defaults to the global tracer provider.
    """

    def __init__(self, provider: Any = None, *, name: str = "agentkit") -> None:
        source = provider if provider is not None else _trace.get_tracer_provider()
        self._tracer = source.get_tracer(name)

    def start_span(
        self,
        name: str,
        attributes: Mapping[str, Any] | None = None,
        parent: Span | None = None,
    ) -> _OTelSpan:
        inner = getattr(parent, "_span", parent)  # unwrap the runtime's guard
        context = None
        if isinstance(inner, _OTelSpan):
            context = _trace.set_span_in_context(inner.span)
        else:
            context = _seeded(attributes)
        kind = _trace.SpanKind.CLIENT if name.startswith("chat") else _trace.SpanKind.INTERNAL
        span = self._tracer.start_span(
            name, context=context, kind=kind, attributes=_attributes(attributes)
        )
        return _OTelSpan(span)
