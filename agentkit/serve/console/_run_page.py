"""The Run page: what a run is, what was said and done, and its trace as a timeline.

The figures come from the run's registry record, the transcript from its last
checkpoint (``ServedRuns.state``), the timeline from its stored trace. The user's
attachments are shown (images inline, other files as links), served from the checkpoint
by :func:`attachment` rather than as data URLs, so the page's policy loads images only
from this server; media given by URL are shown as their address and never fetched.
While the run is running the page's body asks for itself again every second.
"""

from __future__ import annotations

import time

from starlette.requests import Request
from starlette.responses import Response

from agentkit.core.contracts.media import Media
from agentkit.core.contracts.runs import RecordedDecision, RunRecord
from agentkit.core.contracts.types import Message
from agentkit.serve.console._html import duration, e, fragment, money, pretty, status_badge, when
from agentkit.serve.console._signin import Viewer
from agentkit.serve.console._timeline import timeline
from agentkit.serve.runs import ServedRuns, ServeError

__all__ = ["attachment", "run_page", "transcript"]

_LIVE = frozenset({"running"})


def _media(run_id: str, index: int, part: int, media: Media) -> str:
    label = getattr(media, "name", None) or f"{media.kind} ({media.mime_type})"
    if media.url is not None:
        return f'<span class="media">{e(label)}: <code>{e(media.url)}</code> (by address)</span>'
    href = f"/runs/{e(run_id)}/attachments/{index}/{part}"
    if media.kind == "image":
        return f'<figure class="media"><img src="{href}" alt="{e(label)}"></figure>'
    return f'<a class="media" href="{href}">{e(label)}, {len(media.data):,} bytes</a>'


def _message(run_id: str, index: int, message: Message) -> str:
    role = message.role
    parts: list[str] = []
    for reasoning in message.reasoning:
        if reasoning.text:
            parts.append('<details class="reasoning"><summary>reasoning</summary>'
                         f"<pre>{e(reasoning.text)}</pre></details>")
    if message.content:
        parts.append(f'<div class="text">{e(message.content)}</div>')
    parts.extend(_media(run_id, index, n, m) for n, m in enumerate(message.attachments))
    for call in message.tool_calls:
        problem = (f'<p class="error">{e(call.arguments_error)}</p>'
                   if call.arguments_error else "")
        parts.append(f'<div class="call"><span class="tag">calls</span> '
                     f"<strong>{e(call.name)}</strong> <code>[{e(call.id)}]</code>"
                     f"<pre>{pretty(dict(call.arguments))}</pre>{problem}</div>")
    if role == "tool":
        what = "error from" if message.is_error else "result of"
        head = (f'<span class="tag">{what}</span> <strong>{e(message.name)}</strong> '
                f"<code>[{e(message.tool_call_id)}]</code>")
        css = "m-tool is-error" if message.is_error else "m-tool"
        return f'<li class="{css}">{head}{"".join(parts)}</li>'
    return f'<li class="m-{e(role)}"><span class="who">{e(role)}</span>{"".join(parts)}</li>'


def transcript(run_id: str, messages: tuple[Message, ...], first: int = 0) -> str:
    """The messages from index ``first`` as a list, oldest first."""
    shown = "".join(_message(run_id, i, m) for i, m in enumerate(messages) if i >= first)
    return f'<ol class="transcript">{shown}</ol>'


def _facts(record: RunRecord, steps: int, decisions: tuple[RecordedDecision, ...],
           now: float) -> str:
    usage = record.usage
    end = now if record.status in _LIVE else record.updated
    rows = [
        ("status", status_badge(record.status)), ("agent", e(record.agent)),
        ("session", f'<a href="/sessions/{e(record.session)}">{e(record.session)}</a>'
         if record.session else "—"),
        ("started", when(record.created)), ("duration", duration(end - record.created)),
        ("steps", str(steps)),
        ("tokens", f"{usage.input_tokens:,} in, {usage.output_tokens:,} out, "
                   f"{usage.cache_read_tokens:,} read from cache"),
        ("cost", money(record.cost_usd)),
        ("stop reason", e(record.stop_reason or "—")),
    ]
    if record.error:
        rows.append(("error", f'<span class="error">{e(record.error)}</span>'))
    if record.output is not None:
        output = record.output
        shown = e(output) if isinstance(output, str) else pretty(output)
        rows.append(("output", f"<pre>{shown}</pre>"))
    if record.pending:
        waiting = ", ".join(f"<code>{e(c.call_id)}</code> {e(c.tool)}" for c in record.pending)
        rows.append(("waits for", f'{waiting} — <a href="/inbox">decide in the inbox</a>'))
    for decision in decisions:
        rows.append(("decided", f"<code>{e(decision.call_id)}</code>: "
                     f"{e(decision.decision)} by {e(decision.by)}, {when(decision.at)}"))
    items = "".join(f"<dt>{e(k)}</dt><dd>{v}</dd>" for k, v in rows)
    return f'<dl class="facts">{items}</dl>'


async def _body(run_id: str, viewer: Viewer, runs: ServedRuns) -> str:
    record = await runs.record(run_id, viewer.principal)
    state = await runs.state(run_id, viewer.principal)
    trace = await runs.trace(run_id, viewer.principal)
    decisions = await runs.decisions(run_id)
    now = time.time()
    steps = state.steps if state is not None else record.usage.requests
    said = ("<p class=empty>No transcript is stored for this run.</p>" if state is None
            else transcript(run_id, state.messages, state.history_len))
    live = (f' hx-get="/runs/{e(run_id)}?live=1" hx-trigger="every 1s" hx-swap="outerHTML"'
            if record.status in _LIVE else "")
    return (f'<div id="run"{live}><h1>Run <code>{e(run_id)}</code></h1>'
            f"{_facts(record, steps, decisions, now)}"
            f"<h2>Trace</h2>{timeline(trace, now)}<h2>Transcript</h2>{said}</div>")


async def run_page(request: Request, viewer: Viewer, runs: ServedRuns) -> Response:
    """The Run page, or with ``?live=1`` its body alone (for the live refresh)."""
    body = await _body(request.path_params["run_id"], viewer, runs)
    if request.query_params.get("live"):
        return fragment(body)
    return viewer.page(f"Run {request.path_params['run_id']}", body, current="Runs")


async def attachment(request: Request, viewer: Viewer, runs: ServedRuns) -> Response:
    """The bytes of one attachment of the run's transcript."""
    run_id = request.path_params["run_id"]
    index, part = request.path_params["message"], request.path_params["part"]
    state = await runs.state(run_id, viewer.principal)
    try:
        media = state.messages[index].attachments[part] if state is not None else None
    except IndexError:
        media = None
    if media is None or media.url is not None:
        raise ServeError(404, "unknown_attachment", f"run {run_id!r} has no attachment "
                         f"{part} on message {index}")
    given = getattr(media, "name", None) or f"attachment-{index}-{part}"
    # A header is Latin-1 and the name is the user's: keep the plain printable part.
    name = "".join(c for c in given if " " <= c <= "~" and c not in '"\\') or "attachment"
    return Response(bytes(media.data), headers={
        "content-type": media.mime_type, "x-content-type-options": "nosniff",
        "content-disposition": f'inline; filename="{name}"',
        # A file opened from here runs nothing: no script, not even its own.
        "content-security-policy": "sandbox; default-src 'none'; img-src 'self'; "
                                   "style-src 'unsafe-inline'",
    })
