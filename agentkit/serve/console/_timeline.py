"""A run's trace as a timeline: one bar per model call, tool call and sub-run, nested.

Each span of the stored trace (:class:`~agentkit.state.traces.RunTrace`) is a row,
indented under its parent, with a bar placed on the run's time axis and the span's
figures beside it: duration, tokens, cost, cache hits (the provider's prompt cache and
agentkit's own idempotency and memoize caches), its stop reason and its error. Bars are
SVG rectangles, placed by attributes, so the page needs no inline style.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentkit.serve.console._html import duration, e, money
from agentkit.state.traces import RunTrace, TraceSpan

__all__ = ["timeline"]

_MAX_DEPTH_CLASS = 9
"""Rows deeper than this are indented as this deep."""


def _label(span: TraceSpan) -> tuple[str, str]:
    """``(kind, label)``: what the bar stands for, in words."""
    attributes = span.attributes
    operation = attributes.get("gen_ai.operation.name")
    if operation == "chat":
        model = attributes.get("gen_ai.response.model") or attributes.get("gen_ai.request.model")
        return "chat", f"model call · {model}"
    if operation == "execute_tool":
        call = attributes.get("gen_ai.tool.call.id")
        return "tool", f"tool {attributes.get('gen_ai.tool.name')}" + (f" [{call}]" if call else "")
    if operation == "invoke_agent":
        return "agent", f"agent {attributes.get('gen_ai.agent.name')}"
    return "other", span.name


def _figures(span: TraceSpan) -> list[str]:
    attributes: Mapping[str, Any] = span.attributes
    shown = [duration(span.duration)]
    tokens_in = attributes.get("gen_ai.usage.input_tokens")
    tokens_out = attributes.get("gen_ai.usage.output_tokens")
    if tokens_in is not None or tokens_out is not None:
        shown.append(f"{tokens_in or 0:,} in / {tokens_out or 0:,} out tokens")
    cached = attributes.get("gen_ai.usage.cache_read.input_tokens")
    if cached:
        shown.append(f"{cached:,} cached")
    if "agentkit.cost_usd" in attributes:
        shown.append(money(attributes["agentkit.cost_usd"]))
    for key in ("agentkit.idempotency", "agentkit.memoize"):
        if key in attributes:
            shown.append(f"{key.rpartition('.')[2]}: {attributes[key]}")
    if "agentkit.waiting" in attributes:
        shown.append(f"waits for {attributes['agentkit.waiting']}")
    if "agentkit.stop_reason" in attributes:
        shown.append(f"stopped: {attributes['agentkit.stop_reason']}")
    return shown


def timeline(trace: RunTrace, now: float) -> str:
    """The trace as nested rows of bars (a note when the run has no stored trace)."""
    if not trace.spans:
        return ('<p class="empty">No trace is stored for this run (runs this server '
                "started or resumed are traced).</p>")
    start = min(s.start for s in trace.spans)
    end = max(s.start + (s.duration if s.duration is not None else now - s.start)
              for s in trace.spans)
    total = max(end - start, 1e-6)
    children: dict[int | None, list[TraceSpan]] = {}
    for span in trace.spans:
        children.setdefault(span.parent_id, []).append(span)
    rows: list[str] = []
    known = {s.span_id for s in trace.spans}

    def walk(span: TraceSpan, depth: int) -> None:
        kind, label = _label(span)
        length = span.duration if span.duration is not None else now - span.start
        x = (span.start - start) / total * 1000
        width = max(length / total * 1000, 2.0)
        error = (f'<span class="error">{e(span.error)}</span>' if span.error else "")
        rows.append(
            f'<li class="span k-{kind} d{min(depth, _MAX_DEPTH_CLASS)}" '
            f'data-depth="{depth}"><span class="label">{e(label)}</span>'
            '<svg class="bar" viewBox="0 0 1000 10" preserveAspectRatio="none" '
            f'role="img" aria-label="{e(duration(span.duration))}"><rect x="{x:.1f}" y="0" '
            f'width="{width:.1f}" height="10"/></svg>'
            f'<span class="figures">{e(" · ".join(_figures(span)))}</span>{error}</li>'
        )
        for child in children.get(span.span_id, ()):
            walk(child, depth + 1)

    for root in trace.spans:  # roots, and spans whose parent was cut past the cap
        if root.parent_id is None or root.parent_id not in known:
            walk(root, 0)
    cut = (f'<p class="note">{trace.dropped:,} later spans were not kept (the trace '
           "reached its cap).</p>" if trace.dropped else "")
    return f'<ol class="timeline">{"".join(rows)}</ol>{cut}'
