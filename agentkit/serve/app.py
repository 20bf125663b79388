"""The HTTP API: agentkit's runs, events, traces and approval inbox as JSON under ``/v1``.

Every route parses its request, calls one method of :class:`~agentkit.serve.runs.ServedRuns`
and renders what it returns; a :class:`~agentkit.serve.runs.ServeError` becomes
``{"error": {"type", "message"}}`` with its status. Three checks run before any route,
in this order: the ``Host`` and ``Origin`` headers (DNS rebinding), the bearer token
(401 without a known one), and the size of the body (413 past ``max_body``).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from agentkit.agents.agent import Agent
from agentkit.core.contracts.runs import MAX_PAGE, RunQuery
from agentkit.core.contracts.traits import traits_of
from agentkit.core.contracts.types import ModelSettings
from agentkit.core.contracts.types import Scope as RunScope
from agentkit.core.runtime.context import RunContext
from agentkit.integrations.http_hosts import (
    allowed_origins,
    host_refusal,
    is_loopback,
    origin_refusal,
)
from agentkit.serve.access import Access, Principal
from agentkit.serve.engine import Engine
from agentkit.serve.inputs import task_of
from agentkit.serve.openapi import openapi_document
from agentkit.serve.runs import ServedRuns, ServeError, StartRequest
from agentkit.serve.wire import INBOX_KINDS, jsonable, record_data, waiting_data
from agentkit.state.sessions import list_sessions, read_session

__all__ = ["build_app", "principal_of", "runs_of"]

_PRINCIPAL = "agentkit.principal"
_PUBLIC = frozenset({"/healthz", "/openapi.json"})
"""Paths answered without a token: they tell nothing about agents or runs."""


def _error(status: int, kind: str, message: str, **detail: Any) -> JSONResponse:
    return JSONResponse({"error": {"type": kind, "message": message, **detail}}, status)


async def _send_error(send: Send, status: int, kind: str, message: str,
                      headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    body = json.dumps({"error": {"type": kind, "message": message}}).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        *headers,
    ]})
    await send({"type": "http.response.body", "body": body})


def _no_browser(path: str) -> bool:
    return False


class _Guard:
    """Host/Origin, bearer token and body size, before any route sees a request."""

    def __init__(self, app: ASGIApp, access: Access, hosts: Sequence[str] | None,
                 origins: Sequence[str] | None, max_body: int,
                 browser: Callable[[str], bool] | None = None) -> None:
        self._app = app
        self._browser = browser or _no_browser
        self._access = access
        self._hosts = hosts
        self._origins = origins
        self._max_body = max_body

    def _refusal(self, headers: Mapping[bytes, bytes]) -> tuple[int, str] | None:
        """``(status, why)`` for a Host (421) or Origin (403) this server refuses."""
        host = headers.get(b"host", b"").decode("latin-1") or None
        origin_raw = headers.get(b"origin")
        origin = None if origin_raw is None else origin_raw.decode("latin-1")
        if self._hosts is None:  # the default: loopback names only, on any port
            name = (host or "").rpartition(":")[0] if not (host or "").endswith("]") else host
            if host is None or not is_loopback(name or host):
                return 421, (f"Host header {host!r} is not a loopback name; a server reached "
                             "by another name needs create_app(..., allowed_hosts=[...]) "
                             "(agentkit serve --allow-host)")
            hosts = [host]
        else:
            hosts = list(self._hosts)
            refused = host_refusal(host, hosts)
            if refused is not None:
                return 421, refused
        refused = origin_refusal(origin, allowed_origins(hosts, self._origins))
        return None if refused is None else (403, refused)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._app(scope, receive, send)
            return
        if scope["type"] != "http":
            # The API has no WebSocket channel: close one unseen rather than leave it
            # to a route that might accept it unchecked.
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008,
                            "reason": "this API serves HTTP only"})
            return
        headers = dict(scope.get("headers", ()))
        refusal = self._refusal(headers)
        if refusal is not None:
            status, why = refusal
            await _send_error(send, status, "forbidden_host" if status == 421 else
                              "forbidden_origin", why)
            return
        path = scope.get("path", "")
        principal = self._access.principal(headers.get(b"authorization"))
        # The console's pages sign a browser in by cookie and check it themselves
        # (agentkit.serve.console); every other path needs the bearer token here.
        if principal is None and path not in _PUBLIC and not self._browser(path):
            problem = "missing" if b"authorization" not in headers else "unknown"
            await _send_error(send, 401, "unauthorized",
                              f"{problem} bearer token: send Authorization: Bearer <token>",
                              [(b"www-authenticate", b'Bearer realm="agentkit"')])
            return
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self._max_body:
            await _send_error(send, 413, "body_too_large",
                              f"the request body is {int(length)} bytes; at most "
                              f"{self._max_body} are accepted")
            return
        state = dict(scope.get("state") or {})
        state[_PRINCIPAL] = principal
        await self._app({**scope, "state": state}, _limited(receive, self._max_body), send)


def _limited(receive: Receive, limit: int) -> Receive:
    seen = 0

    async def read() -> Any:
        nonlocal seen
        message = await receive()
        if message["type"] == "http.request":
            seen += len(message.get("body", b""))
            if seen > limit:
                raise _TooLarge(limit)
        return message

    return read


class _TooLarge(Exception):
    def __init__(self, limit: int) -> None:
        super().__init__(f"the request body is over {limit} bytes, the most accepted")


def principal_of(request: Request) -> Principal:
    """Who made ``request`` (the guard checked the token before any route)."""
    found: Principal = request.scope["state"][_PRINCIPAL]
    return found


def runs_of(request: Request) -> ServedRuns:
    """The runs the app serves, for any route mounted on it."""
    found: ServedRuns = request.app.state.runs
    return found


_principal, _runs = principal_of, runs_of


async def _body(request: Request) -> dict[str, Any]:
    try:
        raw = await request.body()
    except _TooLarge as error:
        raise ServeError(413, "body_too_large", str(error)) from None
    try:
        data = json.loads(raw or b"{}")
    except ValueError as error:
        raise ServeError(400, "bad_request", f"the body is not JSON: {error}") from None
    if not isinstance(data, dict):
        raise ServeError(400, "bad_request",
                         f"the body must be a JSON object, got {type(data).__name__}")
    return data


def _route(handler: Callable[[Request], Awaitable[Response]]) -> Callable[[Request], Any]:
    async def route(request: Request) -> Response:
        try:
            return await handler(request)
        except ServeError as error:
            return _error(error.status, error.kind, error.message, **jsonable(error.detail))
    return route


def _limit(request: Request) -> int:
    given = request.query_params.get("limit", "50")
    if not given.isdigit() or not 1 <= int(given) <= MAX_PAGE:
        raise ServeError(400, "bad_request",
                         f"limit must be an integer from 1 to {MAX_PAGE}, got {given!r}")
    return int(given)


def _query(request: Request, **fixed: Any) -> RunQuery:
    params = request.query_params
    try:
        return RunQuery(agent=params.get("agent"), status=params.get("status"),
                        session=params.get("session"), limit=_limit(request),
                        cursor=params.get("cursor"), **fixed)
    except ValueError as error:
        raise ServeError(400, "bad_request", str(error)) from None


# -- routes ---------------------------------------------------------------------------


async def healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


async def openapi(request: Request) -> Response:
    return JSONResponse(openapi_document())


async def list_agents(request: Request) -> Response:
    agents = [_agent_data(a) for a in _runs(request).agents.values()]
    if request.app.state.a2a:  # each agent's A2A base URL, where its card is found
        base = str(request.base_url).rstrip("/")
        agents = [{**a, "a2a": f"{base}/a2a/{a['name']}"} for a in agents]
    return JSONResponse({"agents": agents})


def _agent_data(agent: Agent) -> dict[str, Any]:
    if not isinstance(agent, Agent):  # a Workflow: its steps, not a model's tools
        return {"name": agent.name, "kind": "workflow", "model": None,
                "description": agent.description, "tools": []}
    registry = getattr(agent.cognition, "tools", None)
    tools = []
    for tool in () if registry is None else registry:
        schema = tool.schema
        traits = traits_of(tool)
        tools.append({
            "name": tool.name,
            "description": schema.description if schema is not None else tool.description,
            "parameters": jsonable(schema.parameters) if schema is not None else None,
            "traits": {"side_effecting": traits.side_effecting,
                       "idempotent": traits.idempotent,
                       "requires_approval": traits.requires_approval,
                       "asks_human": traits.asks_human},
        })
    return {"name": agent.name, "kind": "agent", "model": agent.model,
            "description": agent.description, "tools": tools}


def _text(value: Any, what: str) -> str | None:
    if value is None or (isinstance(value, str) and value):
        return value
    raise ServeError(400, "bad_request", f'"{what}" must be a non-empty string, got '
                     f"{json.dumps(value)[:80]}")


def _settings(value: Any) -> ModelSettings | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise ServeError(400, "bad_request", '"settings" must be an object of model settings')
    try:
        return ModelSettings(**value)
    except (TypeError, ValueError) as error:
        raise ServeError(400, "bad_request", f'"settings": {error}') from None


async def start_run(request: Request) -> Response:
    runs = _runs(request)
    agent = runs.agent(request.path_params["agent"])
    body = await _body(request)
    unknown = sorted(set(body) - {"input", "session", "settings", "run_id", "wait"})
    if unknown:
        raise ServeError(400, "bad_request", f"unknown field(s) {unknown}; accepted: "
                         "['input', 'run_id', 'session', 'settings', 'wait']")
    if "input" not in body:
        raise ServeError(400, "bad_request", 'the body needs "input": the text to run on')
    wait = body.get("wait", False)
    if not isinstance(wait, bool):
        raise ServeError(400, "bad_request", '"wait" must be true or false')
    start = StartRequest(agent=agent.name, task=task_of(body["input"]),
                         session=_text(body.get("session"), "session"),
                         settings=_settings(body.get("settings")),
                         run_id=_text(body.get("run_id"), "run_id"))
    principal = _principal(request)
    record, started = await runs.start(start, principal)
    if wait:
        record = await runs.wait(record.run_id, principal)
        return JSONResponse(record_data(record, await runs.decisions(record.run_id)))
    return JSONResponse({"run_id": record.run_id, "status": record.status},
                        202 if started else 200)


async def list_runs(request: Request) -> Response:
    page = await _runs(request).runs(_query(request), _principal(request))
    return JSONResponse({"runs": [record_data(r) for r in page.records],
                         "next_cursor": page.next_cursor})


async def get_run(request: Request) -> Response:
    runs = _runs(request)
    record = await runs.record(request.path_params["run_id"], _principal(request))
    return JSONResponse(record_data(record, await runs.decisions(record.run_id)))


async def run_events(request: Request) -> Response:
    last_id = request.headers.get("last-event-id", "0")
    if not last_id.isdigit():
        raise ServeError(400, "bad_request", f"Last-Event-ID must be an event id (a "
                         f"number), got {last_id!r}")
    events = await _runs(request).events(
        request.path_params["run_id"], _principal(request), int(last_id)
    )

    async def stream() -> AsyncIterator[bytes]:
        async for number, data in events:
            yield f"id: {number}\nevent: {data['kind']}\ndata: {json.dumps(data)}\n\n".encode()

    return StreamingResponse(stream(), media_type="text/event-stream",
                             headers={"cache-control": "no-store"})


async def run_trace(request: Request) -> Response:
    trace = await _runs(request).trace(request.path_params["run_id"], _principal(request))
    children: dict[int | None, list[Any]] = {}
    for span in trace.spans:
        children.setdefault(span.parent_id, []).append(span)

    def node(span: Any) -> dict[str, Any]:
        return {"name": span.name, "start": span.start, "duration": span.duration,
                "attributes": jsonable(span.attributes), "error": span.error,
                "children": [node(c) for c in children.get(span.span_id, ())]}

    return JSONResponse({"run_id": trace.run_id, "dropped": trace.dropped,
                         "spans": [node(s) for s in children.get(None, ())]})


async def approvals(request: Request) -> Response:
    kind = request.query_params.get("kind")
    if kind is not None and kind not in INBOX_KINDS:
        raise ServeError(400, "bad_request", f"kind must be one of {list(INBOX_KINDS)}, "
                         f"got {kind!r}")
    found, cursor = await _runs(request).inbox(
        _principal(request), agent=request.query_params.get("agent"), kind=kind,
        limit=_limit(request), cursor=request.query_params.get("cursor"),
    )
    return JSONResponse({"approvals": [waiting_data(r, c) for r, c in found],
                         "next_cursor": cursor})


async def decide(request: Request) -> Response:
    body = await _body(request)
    if set(body) != {"decisions"}:
        raise ServeError(400, "bad_request", 'the body must be {"decisions": {<call id>: '
                         '<decision>}}, as Agent.resume takes them')
    runs = _runs(request)
    record = await runs.decide(request.path_params["run_id"], body["decisions"],
                               _principal(request))
    return JSONResponse({"run_id": record.run_id, "status": record.status}, 202)


async def cancel(request: Request) -> Response:
    record = await _runs(request).cancel(request.path_params["run_id"], _principal(request))
    # A run waiting for a person ends at once; one advancing stops at its next safe point.
    status = "cancelled" if record.status == "cancelled" else "cancelling"
    return JSONResponse({"run_id": record.run_id, "status": status}, 202)


def _scope(request: Request) -> RunScope:
    return _runs(request).session_scope(_principal(request))


async def sessions(request: Request) -> Response:
    runs = _runs(request)
    ids = await list_sessions(runs.store, _scope(request))
    return JSONResponse({"sessions": list(ids)})


async def session(request: Request) -> Response:
    runs = _runs(request)
    scope = _scope(request)
    session_id = request.path_params["session_id"]
    if session_id not in await list_sessions(runs.store, scope):
        raise ServeError(404, "unknown_session", f"no session {session_id!r} is known here")
    messages = await read_session(runs.store, scope, session_id)
    return JSONResponse({"session": session_id, "messages": [
        {"role": m.role, "content": jsonable(m.content),
         "tool_calls": [{"id": c.id, "name": c.name, "arguments": jsonable(c.arguments)}
                        for c in m.tool_calls]}
        for m in messages
    ]})


def build_app(
    agents: Sequence[Agent],
    *,
    context: Callable[[], RunContext],
    auth: Mapping[str, Principal] | None = None,
    engine: Engine | None = None,
    allowed_hosts: Sequence[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
    max_body: int,
    routes: Sequence[Any] = (),
    a2a: bool = False,
    console: bool = True,
) -> ASGIApp:
    """The ASGI app (see :func:`agentkit.serve.create_app`); ``a2a``: whether ``routes``
    hold the A2A routes, so the agent listing names each agent's A2A URL."""
    runs = ServedRuns(agents, context, engine)
    access = Access(auth)
    pages: list[Any] = []
    browser = _no_browser
    if console:
        from agentkit.serve.console import console_paths, console_routes

        pages, browser = console_routes(access, runs), console_paths

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await runs.recover_all()
        try:
            yield
        finally:
            await runs.close()

    table = [
        ("/healthz", healthz, "GET"), ("/openapi.json", openapi, "GET"),
        ("/v1/agents", list_agents, "GET"), ("/v1/agents/{agent}/runs", start_run, "POST"),
        ("/v1/runs", list_runs, "GET"), ("/v1/runs/{run_id}", get_run, "GET"),
        ("/v1/runs/{run_id}/events", run_events, "GET"),
        ("/v1/runs/{run_id}/trace", run_trace, "GET"),
        ("/v1/runs/{run_id}/decisions", decide, "POST"),
        ("/v1/runs/{run_id}/cancel", cancel, "POST"),
        ("/v1/approvals", approvals, "GET"), ("/v1/sessions", sessions, "GET"),
        ("/v1/sessions/{session_id}", session, "GET"),
    ]
    app = Starlette(
        routes=[
            *(Route(path, _route(handler), methods=[method]) for path, handler, method in table),
            *routes,
            *pages,
        ],
        lifespan=lifespan,
        exception_handlers={404: _not_found, 405: _not_allowed},
    )
    app.state.runs = runs
    app.state.a2a = a2a
    app.state.auth_required = access.required
    return _Guard(app, access, allowed_hosts, allowed_origins, max_body, browser)


async def _not_found(request: Request, exc: Exception) -> Response:
    return _error(404, "not_found", f"no route {request.url.path!r}; see /openapi.json")


async def _not_allowed(request: Request, exc: Exception) -> Response:
    return _error(405, "method_not_allowed",
                  f"{request.method} is not allowed on {request.url.path!r}; see /openapi.json")
