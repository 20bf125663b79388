"""The Runs page: every run the viewer may see, newest first, filtered, a page at a time.

A page is one indexed query of the run registry (``ServedRuns.runs``), continued by the
registry's opaque cursor, so the tenth thousand run costs what the first does. The
table's body asks for itself again every two seconds (htmx), so statuses change in
place as runs progress; with JavaScript off the page is the same table, without the
refresh.
"""

from __future__ import annotations

import time
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

from agentkit.core.contracts.runs import RunQuery, RunRecord
from agentkit.serve.console._html import (
    STATUS_WORDS,
    duration,
    e,
    fragment,
    money,
    status_badge,
    table,
    when,
)
from agentkit.serve.console._signin import Viewer
from agentkit.serve.runs import ServedRuns, ServeError

__all__ = ["run_row", "runs_page"]

PAGE_SIZE = 50
"""Runs per page."""

_HEAD = ("run", "status", "agent", "session", "started", "duration", "steps", "tokens",
         "cost")
_SETTLED = frozenset({"complete", "error", "cancelled", "max_iterations", "budget_exceeded",
                      "suspended"})


def run_row(record: RunRecord, now: float) -> str:
    """One run as a table row."""
    usage = record.usage
    end = record.updated if record.status in _SETTLED else now
    session = (f'<a href="/sessions/{e(record.session)}">{e(record.session)}</a>'
               if record.session else "—")
    return (
        f'<tr data-run="{e(record.run_id)}">'
        f'<td><a href="/runs/{e(record.run_id)}"><code>{e(record.run_id)}</code></a></td>'
        f"<td>{status_badge(record.status)}</td><td>{e(record.agent)}</td>"
        f"<td>{session}</td><td>{when(record.created)}</td>"
        f"<td>{duration(max(end - record.created, 0.0))}</td><td>{usage.requests}</td>"
        f"<td>{usage.input_tokens + usage.output_tokens:,}</td>"
        f"<td>{money(record.cost_usd)}</td></tr>"
    )


def _filters(request: Request, runs: ServedRuns) -> dict[str, str]:
    params = request.query_params
    return {k: params[k] for k in ("status", "agent", "session", "run") if params.get(k)}


def _select(name: str, chosen: str | None, options: list[tuple[str, str]]) -> str:
    items = "".join(
        f'<option value="{e(value)}"{" selected" if value == (chosen or "") else ""}>'
        f"{e(label)}</option>" for value, label in options
    )
    return f'<select name="{name}">{items}</select>'


def _form(filters: dict[str, str], runs: ServedRuns) -> str:
    statuses = [("", "any status"), *STATUS_WORDS.items()]
    agents = [("", "any agent"), *((name, name) for name in sorted(runs.agents))]
    return (
        '<form method="get" action="/" class="filters">'
        f'<label>Status {_select("status", filters.get("status"), statuses)}</label>'
        f'<label>Agent {_select("agent", filters.get("agent"), agents)}</label>'
        f'<label>Session <input name="session" value="{e(filters.get("session", ""))}">'
        f'</label><label>Run id <input name="run" value="{e(filters.get("run", ""))}" '
        'placeholder="exact run id"></label><button>Show</button>'
        '<a href="/">clear</a></form>'
    )


async def _records(
    request: Request, viewer: Viewer, runs: ServedRuns, filters: dict[str, str]
) -> tuple[list[RunRecord], str | None]:
    if "run" in filters:  # a search by id: that run or none
        try:
            return [await runs.record(filters["run"], viewer.principal)], None
        except ServeError:
            return [], None
    try:
        query = RunQuery(agent=filters.get("agent"), status=filters.get("status"),
                         session=filters.get("session"), limit=PAGE_SIZE,
                         cursor=request.query_params.get("cursor"))
    except ValueError as error:
        raise ServeError(400, "bad_request", str(error)) from None
    found = await runs.runs(query, viewer.principal)
    return list(found.records), found.next_cursor


async def runs_page(request: Request, viewer: Viewer, runs: ServedRuns) -> Response:
    """The Runs page, or with ``?rows=1`` its table body alone (for the live refresh)."""
    filters = _filters(request, runs)
    records, cursor = await _records(request, viewer, runs, filters)
    now = time.time()
    query = dict(filters)
    if request.query_params.get("cursor"):
        query["cursor"] = request.query_params["cursor"]
    refresh = urlencode({**query, "rows": "1"})
    body = table(
        _HEAD, (run_row(r, now) for r in records), empty="no runs match",
        body_attrs=(f'id="runs" hx-get="/?{e(refresh)}" hx-trigger="every 2s" '
                    'hx-swap="outerHTML"'),
    )
    if request.query_params.get("rows"):
        start = body.index("<tbody")
        return fragment(body[start:body.index("</tbody>") + len("</tbody>")])
    pages = ""
    if request.query_params.get("cursor"):
        pages += f'<a href="/?{e(urlencode(filters))}">first page</a> '
    if cursor is not None:
        after = urlencode({**filters, "cursor": cursor})
        pages += f'<a rel="next" href="/?{e(after)}">next page</a>'
    text = (f"<h1>Runs</h1>{_form(filters, runs)}{body}"
            f'<p class="pages">{pages}</p>')
    return viewer.page("Runs", text, current="Runs")
