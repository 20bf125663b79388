"""The Costs page: cost and tokens per agent and per day, as tables and SVG charts.

The figures are summed from the run registry's records (each run's usage and cost), a
page of :data:`~agentkit.core.contracts.runs.MAX_PAGE` records at a time, over every
run the viewer may see. The cache share is the part of the prompt tokens the provider
served from its cache: cache reads over all input tokens (full-rate, cache reads and
cache writes). Charts are drawn on the server as SVG, so they need no script.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from agentkit.core.contracts.runs import MAX_PAGE, RunQuery, RunRecord
from agentkit.serve.console._html import e, money, table
from agentkit.serve.console._signin import Viewer
from agentkit.serve.runs import ServedRuns

__all__ = ["Totals", "bar_chart", "costs_page"]


@dataclass(slots=True)
class Totals:
    """Summed usage of some runs."""

    runs: int = 0
    cost_usd: float = 0.0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def add(self, record: RunRecord) -> None:
        usage = record.usage
        self.runs += 1
        self.cost_usd += record.cost_usd or 0.0
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cache_read_tokens += usage.cache_read_tokens
        self.cache_write_tokens += usage.cache_write_tokens

    @property
    def cache_share(self) -> float | None:
        """Cache reads over all input tokens; None without input tokens."""
        prompt = self.input_tokens + self.cache_read_tokens + self.cache_write_tokens
        return None if prompt == 0 else self.cache_read_tokens / prompt


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


def _share(totals: Totals) -> str:
    share = totals.cache_share
    return "—" if share is None else f"{share:.0%}"


def _row(label: str, totals: Totals) -> str:
    return (f"<tr><td>{e(label)}</td><td>{totals.runs:,}</td><td>{money(totals.cost_usd)}</td>"
            f"<td>{totals.input_tokens:,}</td><td>{totals.output_tokens:,}</td>"
            f"<td>{totals.cache_read_tokens:,}</td><td>{_share(totals)}</td></tr>")


_HEAD = ("", "runs", "cost", "input tokens", "output tokens", "cache reads",
         "cache share of input")


async def totals(viewer: Viewer, runs: ServedRuns) -> tuple[
        Totals, dict[str, Totals], dict[str, Totals]]:
    """All runs, per agent and per day (UTC), summed."""
    everything = Totals()
    agents: dict[str, Totals] = {}
    days: dict[str, Totals] = {}
    cursor: str | None = None
    while True:
        page = await runs.runs(RunQuery(limit=MAX_PAGE, cursor=cursor), viewer.principal)
        for record in page.records:
            everything.add(record)
            agents.setdefault(record.agent, Totals()).add(record)
            day = time.strftime("%Y-%m-%d", time.gmtime(record.created))
            days.setdefault(day, Totals()).add(record)
        cursor = page.next_cursor
        if cursor is None:
            return everything, agents, days


async def costs_page(request: Request, viewer: Viewer, runs: ServedRuns) -> Response:
    """The Costs page."""
    everything, agents, days = await totals(viewer, runs)
    ordered = sorted(days.items())
    charts = (
        bar_chart("cost per day (US dollars)", [(d, t.cost_usd) for d, t in ordered], money,
                  _day)
        + bar_chart("tokens per day", [(d, float(t.input_tokens + t.output_tokens))
                                       for d, t in ordered], lambda v: f"{v:,.0f}", _day)
        + bar_chart("cost per agent (US dollars)",
                    [(a, t.cost_usd) for a, t in sorted(agents.items())], money)
    )
    body = (
        f"<h1>Costs</h1><p>{everything.runs:,} runs, {money(everything.cost_usd)}; "
        f"cache share of input tokens: <strong>{_share(everything)}</strong>.</p>"
        f'<div class="charts">{charts}</div>'
        "<h2>Per agent</h2>"
        + table(_HEAD, (_row(a, t) for a, t in sorted(agents.items())), empty="no runs yet")
        + "<h2>Per day (UTC)</h2>"
        + table(_HEAD, (_row(d, t) for d, t in reversed(ordered)), empty="no runs yet")
    )
    return viewer.page("Costs", body, current="Costs")
