"""The Sessions pages: the conversations of the served scope, each as a chat whose turns
link to the runs that made them.

A session's rows (:func:`agentkit.state.sessions.load_session`) hold its messages and,
per completed turn, the checkpoint key of its run (``"<run id>:<agent>"``); a turn is
the messages from one user message to the next.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from agentkit.core.contracts.types import Message
from agentkit.serve.console._html import e
from agentkit.serve.console._run_page import transcript
from agentkit.serve.console._signin import Viewer
from agentkit.serve.runs import ServedRuns, ServeError
from agentkit.state.sessions import list_sessions, load_session

__all__ = ["session_page", "sessions_page", "turns_of"]


def turns_of(messages: tuple[Message, ...]) -> list[tuple[Message, ...]]:
    """The messages cut into turns, each starting at a user message."""
    turns: list[list[Message]] = []
    for message in messages:
        if message.role == "user" or not turns:
            turns.append([])
        turns[-1].append(message)
    return [tuple(t) for t in turns]


async def sessions_page(request: Request, viewer: Viewer, runs: ServedRuns) -> Response:
    """Every session of the served scope."""
    ids = await list_sessions(runs.store, runs.session_scope(viewer.principal))
    items = "".join(f'<li><a href="/sessions/{e(i)}">{e(i)}</a></li>' for i in ids)
    body = (f"<h1>Sessions</h1><ul class=sessions>{items}</ul>" if items else
            "<h1>Sessions</h1><p class=empty>No conversations yet: runs started with a "
            "session appear here.</p>")
    return viewer.page("Sessions", body, current="Sessions")


def _bubble(message: Message) -> str:
    if message.role in ("user", "assistant") and message.content and not message.tool_calls:
        return f'<div class="bubble b-{message.role}">{e(message.content)}</div>'
    return ""


async def session_page(request: Request, viewer: Viewer, runs: ServedRuns) -> Response:
    """One conversation as a chat, turn by turn, each linked to its run."""
    session_id = request.path_params["session_id"]
    scope = runs.session_scope(viewer.principal)
    if session_id not in await list_sessions(runs.store, scope):
        raise ServeError(404, "unknown_session", f"no session {session_id!r} is known here")
    record, _ = await load_session(runs.store, scope, session_id)
    parts: list[str] = []
    for number, turn in enumerate(turns_of(record.messages), start=1):
        key = record.turns[number - 1] if number <= len(record.turns) else ""
        run_id = key.rpartition(":")[0] or key
        link = (f' · <a href="/runs/{e(run_id)}">run <code>{e(run_id)}</code></a>'
                if run_id else "")
        steps = ('<details><summary>what the agent did</summary>'
                 f"{transcript(run_id, turn)}</details>"
                 if any(m.tool_calls or m.role == "tool" for m in turn) else "")
        parts.append(f'<section class="turn"><h2>turn {number}{link}</h2>'
                     f'{"".join(_bubble(m) for m in turn)}{steps}</section>')
    body = f"<h1>Session <code>{e(session_id)}</code></h1><div class=chat>{''.join(parts)}</div>"
    return viewer.page(f"Session {session_id}", body, current="Sessions")
