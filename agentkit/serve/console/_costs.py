"""The Costs page: cost and tokens per agent and per day, as tables and SVG charts.

The figures are one summary of the run registry (``summarize_runs``: one aggregate query
on SQLite and PostgreSQL, over every run the viewer may see; a store without it is summed
from its listing). The cache share is the part of the prompt tokens the provider served
from its cache: cache reads over all input tokens (full-rate, cache reads and cache
writes). Charts are drawn on the server as SVG, so they need no script.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from starlette.requests import Request
from starlette.responses import Response

from agentkit.core.contracts.run_totals import RunTotals
from agentkit.core.contracts.runs import RunFilter
from agentkit.serve.console._html import e, money, table
from agentkit.serve.console._signin import Viewer
from agentkit.serve.runs import ServedRuns

__all__ = ["bar_chart", "costs_page"]


def bar_chart(title: str, items: Sequence[tuple[str, float]], shown: Callable[[float], str],
              short: Callable[[str], str] = lambda label: label[:10]) -> str:
    """Vertical bars, one per ``(label, value)``, with ``shown(value)`` above each and
    ``short(label)`` below."""
    if not items:
        return ""
    top = max(v for _, v in items) or 1.0
    step = 60
    width, height, base = max(step * len(items), 240), 180, 150
    bars = []
    for n, (label, value) in enumerate(items):
        tall = value / top * 120
        x = n * step + 10
        bars.append(
            f'<g><rect x="{x}" y="{base - tall:.1f}" width="40" height="{tall:.1f}">'
            f"<title>{e(label)}: {e(shown(value))}</title></rect>"
            f'<text x="{x + 20}" y="{base - tall - 4:.1f}" text-anchor="middle">'
            f"{e(shown(value))}</text>"
            f'<text x="{x + 20}" y="{base + 14}" text-anchor="middle">{e(short(label))}</text></g>'
        )
    return (f'<figure class="chart"><svg viewBox="0 0 {width} {height}" width="{width}" '
            f'height="{height}" role="img" aria-label="{e(title)}">'
            f'<line x1="0" y1="{base}" x2="{width}" y2="{base}"/>{"".join(bars)}</svg>'
            f"<figcaption>{e(title)}</figcaption></figure>")


def _day(day: str) -> str:
    return day[5:]  # "12-01" of "2026-12-01"


def _share(totals: RunTotals) -> str:
    share = totals.cache_share
    return "—" if share is None else f"{share:.0%}"


def _row(label: str, totals: RunTotals) -> str:
    usage = totals.usage
    return (f"<tr><td>{e(label)}</td><td>{totals.runs:,}</td><td>{money(usage.cost_usd)}</td>"
            f"<td>{usage.input_tokens:,}</td><td>{usage.output_tokens:,}</td>"
            f"<td>{usage.cache_read_tokens:,}</td><td>{_share(totals)}</td></tr>")


_HEAD = ("", "runs", "cost", "input tokens", "output tokens", "cache reads",
         "cache share of input")


async def costs_page(request: Request, viewer: Viewer, runs: ServedRuns) -> Response:
    """The Costs page."""
    summary = await runs.summary(RunFilter(), viewer.principal)
    everything, agents = summary.total, summary.by_agent
    ordered = list(summary.by_day.items())
    statuses = ", ".join(f"{count:,} {e(status)}" for status, count in summary.by_status.items())
    charts = (
        bar_chart("cost per day (US dollars)", [(d, t.usage.cost_usd) for d, t in ordered],
                  money, _day)
        + bar_chart("tokens per day", [(d, float(t.usage.input_tokens + t.usage.output_tokens))
                                       for d, t in ordered], lambda v: f"{v:,.0f}", _day)
        + bar_chart("cost per agent (US dollars)",
                    [(a, t.usage.cost_usd) for a, t in agents.items()], money)
    )
    body = (
        f"<h1>Costs</h1><p>{everything.runs:,} runs, {money(everything.usage.cost_usd)}; "
        f"cache share of input tokens: <strong>{_share(everything)}</strong>.</p>"
        + (f'<p class="statuses">{statuses}.</p>' if statuses else "")
        + f'<div class="charts">{charts}</div>'
        "<h2>Per agent</h2>"
        + table(_HEAD, (_row(a, t) for a, t in agents.items()), empty="no runs yet")
        + "<h2>Per day (UTC)</h2>"
        + table(_HEAD, (_row(d, t) for d, t in reversed(ordered)), empty="no runs yet")
    )
    return viewer.page("Costs", body, current="Costs")
