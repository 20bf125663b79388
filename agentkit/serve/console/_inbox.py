"""The Inbox: every call that waits for a person, across runs, and the decisions on them.

The list is ``ServedRuns.inbox`` (the registry's suspended runs, a page at a time) and
a decision is ``ServedRuns.decide``, so it is checked, routed to a nested call by its
path id, recorded with who decided, and refused, exactly as over the JSON API. A
decision answers with the call's item again: what became of it, or, when refused, the
reason shown where the decision was entered (the edited arguments kept for a fix). A
decision someone else took first is the API's 409: the item says so and offers nothing
to overwrite it with. A principal that may not decide sees the inbox without buttons.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from agentkit.core.contracts.runs import RunRecord, WaitingCall
from agentkit.serve.console._html import e, fragment, pretty, status_badge, when
from agentkit.serve.console._signin import Viewer
from agentkit.serve.edits import tool_of
from agentkit.serve.runs import ServedRuns, ServeError
from agentkit.serve.wire import INBOX_KINDS, inbox_kind

__all__ = ["decide", "inbox_page"]

PAGE_SIZE = 50
"""Suspended runs per inbox page."""


def item_id(run_id: str, call_id: str) -> str:
    """The DOM id of a call's item (call ids hold ``/``)."""
    return "call-" + hashlib.sha256(f"{run_id}\0{call_id}".encode()).hexdigest()[:16]


def _forms(run_id: str, call: WaitingCall, viewer: Viewer, runs: ServedRuns,
           edited: str | None) -> str:
    target = (f'hx-post="/inbox/{e(run_id)}/decide" '
              f'hx-target="#{item_id(run_id, call.call_id)}" hx-swap="outerHTML"')

    def form(action: str, inner: str, css: str = "") -> str:
        return (f'<form method="post" action="/inbox/{e(run_id)}/decide" {target} '
                f'class="decide {css}"><input type="hidden" name="csrf_token" '
                f'value="{e(viewer.csrf)}"><input type="hidden" name="call_id" '
                f'value="{e(call.call_id)}"><input type="hidden" name="action" '
                f'value="{action}">{inner}</form>')

    kind = inbox_kind(call.kind)
    if kind == "question":
        return form("answer", '<label>Answer <input name="answer" required></label> '
                              "<button>Answer</button>")
    tool = tool_of(runs.agents, call)
    schema = getattr(tool, "schema", None)
    hint = (f"<details><summary>the tool's schema</summary><pre>"
            f"{pretty(dict(schema.parameters))}</pre></details>" if schema is not None else "")
    arguments = edited if edited is not None else json.dumps(dict(call.arguments), indent=2,
                                                              default=str)
    return (
        form("approve", "<button class=approve>Approve</button>")
        + form("reject", '<label>Reason <input name="reason" placeholder="why not (the '
                         'model is told)"></label> <button class=reject>Reject</button>')
        + form("edit", f'<label>Arguments (JSON)<textarea name="arguments" rows="4">'
                       f"{e(arguments)}</textarea></label>{hint}"
                       "<button class=edit>Approve with these arguments</button>", "edit")
    )


def call_item(run_id: str, call: WaitingCall, viewer: Viewer, runs: ServedRuns, *,
              problem: str = "", edited: str | None = None) -> str:
    """One waiting call, with its buttons (none for a viewer that may not decide)."""
    nested = ' <span class="tag">nested</span>' if "/" in call.call_id else ""
    alert = f'<div class="refused" role="alert">{e(problem)}</div>' if problem else ""
    actions = (_forms(run_id, call, viewer, runs, edited) if viewer.principal.can_decide
               else "")
    return (
        f'<li class="waiting" id="{item_id(run_id, call.call_id)}">'
        f"<div><code>{e(call.call_id)}</code> <strong>{e(call.tool)}</strong>{nested} "
        f'<span class="tag">{e(inbox_kind(call.kind))}</span></div>'
        f'<div class="meta">asked by {e(" › ".join(call.agents) or "—")}, '
        f"since {when(call.since)}</div>"
        f"<pre>{pretty(dict(call.arguments))}</pre>{alert}{actions}</li>"
    )


def _outcome(run_id: str, call_id: str, text: str, css: str) -> str:
    return (f'<li class="waiting {css}" id="{item_id(run_id, call_id)}"><div>'
            f"<code>{e(call_id)}</code></div><p role=status>{text}</p>"
            f'<a href="/runs/{e(run_id)}">follow run {e(run_id)}</a></li>')


def _group(record: RunRecord, calls: list[WaitingCall], viewer: Viewer,
           runs: ServedRuns) -> str:
    items = "".join(call_item(record.run_id, c, viewer, runs) for c in calls)
    return (f'<section class="card run-group" data-run="{e(record.run_id)}"><h2>'
            f'<a href="/runs/{e(record.run_id)}"><code>{e(record.run_id)}</code></a> '
            f"{status_badge(record.status)} {e(record.agent)}</h2><ul>{items}</ul></section>")


async def inbox_page(request: Request, viewer: Viewer, runs: ServedRuns,
                     notice: str = "") -> Response:
    """The Inbox page: the waiting calls, grouped under their runs."""
    params = request.query_params
    kind = params.get("kind") or None
    if kind is not None and kind not in INBOX_KINDS:
        raise ServeError(400, "bad_request", f"kind must be one of {list(INBOX_KINDS)}, "
                         f"got {kind!r}")
    found, cursor = await runs.inbox(viewer.principal, agent=params.get("agent") or None,
                                     kind=kind, limit=PAGE_SIZE, cursor=params.get("cursor"))
    groups: dict[str, tuple[RunRecord, list[WaitingCall]]] = {}
    for record, call in found:
        groups.setdefault(record.run_id, (record, []))[1].append(call)
    note = ""
    if not viewer.principal.can_decide:
        note = (f'<p class="note" role="note">Read-only: {e(viewer.principal.name)} may not '
                "decide for runs.</p>")
    shown = "".join(_group(r, calls, viewer, runs) for r, calls in groups.values())
    more = (f'<p class="pages"><a rel="next" href="/inbox?cursor={e(cursor)}">next page</a></p>'
            if cursor else "")
    banner = f'<p class="note" role="status">{notice}</p>' if notice else ""
    body = (f"<h1>Inbox</h1>{banner}{note}"
            f"{shown or '<p class=empty>Nothing waits for a person.</p>'}{more}")
    return viewer.page("Inbox", body, current="Inbox")


def _decision(form: Mapping[str, str]) -> Any:
    action = form.get("action")
    if action == "approve":
        return "approve"
    if action == "reject":
        reason = form.get("reason", "").strip()
        return f"reject: {reason}" if reason else "reject"
    if action == "answer":
        return {"answer": form.get("answer", "")}
    if action == "edit":
        try:
            edited = json.loads(form.get("arguments", ""))
        except ValueError as error:
            raise ServeError(400, "bad_request", f"the arguments are not JSON: {error}; "
                             'write an object, e.g. {"order_id": "A1"}') from None
        if not isinstance(edited, dict):
            raise ServeError(400, "bad_request", "the arguments must be a JSON object of "
                             f"argument names to values, got {json.dumps(edited)[:60]}")
        return edited
    raise ServeError(400, "bad_request", f"action must be approve, reject, edit or answer, "
                     f"got {action!r}")


_DONE = {"approve": "Approved", "reject": "Rejected", "edit": "Approved with edited arguments",
         "answer": "Answered"}


async def decide(request: Request, viewer: Viewer, runs: ServedRuns) -> Response:
    """Take one decision; answer with the call's item (or, without htmx, the inbox)."""
    run_id = request.path_params["run_id"]
    form: dict[str, str] = request.state.form
    call_id = form.get("call_id", "")
    try:
        await runs.decide(run_id, {call_id: _decision(form)}, viewer.principal)
    except ServeError as error:
        text = await _refused(run_id, call_id, error, viewer, runs, form.get("arguments"))
        if not request.headers.get("hx-request"):
            return await inbox_page(request, viewer, runs, notice=e(error.message))
        return fragment(text, status=error.status)
    said = (f"{_DONE.get(form.get('action', ''), 'Decided')} by {e(viewer.principal.name)}; "
            "the run goes on.")
    if not request.headers.get("hx-request"):
        return await inbox_page(request, viewer, runs, notice=f"{e(call_id)}: {said}")
    return fragment(_outcome(run_id, call_id, said, "decided"))


async def _refused(run_id: str, call_id: str, error: ServeError, viewer: Viewer,
                   runs: ServedRuns, edited: str | None) -> str:
    """The call's item after a refusal: with its buttons and the reason, while it still
    waits; else what happened to it in the meantime."""
    try:
        record = await runs.record(run_id, viewer.principal)
    except ServeError:
        return _outcome(run_id, call_id, e(error.message), "refused")
    call = next((c for c in record.pending if c.call_id == call_id), None)
    if call is None or error.status == 409:
        return _outcome(run_id, call_id, "Decided elsewhere in the meantime, so not "
                        f"changed here: {e(error.message)} The run is now "
                        f"{status_badge(record.status)}.", "refused")
    return call_item(run_id, call, viewer, runs, problem=f"Refused, nothing ran: "
                     f"{error.message}", edited=edited)
