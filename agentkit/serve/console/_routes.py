"""The console's routes: who may see a page, the CSRF check on every POST, static files.

Each page handler takes the request, the :class:`~._signin.Viewer` and the served runs,
and returns a response; :func:`_page` signs the browser in first (or sends it to the
sign-in page) and turns a :class:`~agentkit.serve.runs.ServeError` into an error page
with its status. A POST without the viewer's CSRF token is refused (403) before its
handler runs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from importlib import resources
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from agentkit.serve.access import Access
from agentkit.serve.console import _costs, _inbox, _run_page, _runs_page, _sessions
from agentkit.serve.console._html import e, fragment, page
from agentkit.serve.console._signin import COOKIE, Viewer, Visitors, form_of, local_target
from agentkit.serve.runs import ServedRuns, ServeError

__all__ = ["Handler", "routes"]

Handler = Callable[[Request, Viewer, ServedRuns], Awaitable[Response]]
"""A page: the request, who asks, the served runs."""

_STATIC = {
    "htmx.min.js": "text/javascript; charset=utf-8",
    "htmx.LICENSE": "text/plain; charset=utf-8",
    "console.css": "text/css; charset=utf-8",
}


def error_page(viewer: Viewer | None, error: ServeError, request: Request) -> Response:
    """A refusal as a page (or, for htmx, as the fragment shown where the form was)."""
    text = (f'<div class="refused" role="alert"><strong>{e(error.status)} '
            f"{e(error.kind)}</strong>: {e(error.message)}</div>")
    if request.headers.get("hx-request"):
        return fragment(text, status=error.status)
    if viewer is None:
        return page("Refused", text, status=error.status)
    return viewer.page("Refused", text, status=error.status)


def _page(visitors: Visitors, runs: ServedRuns, handler: Handler, *,
          post: bool = False) -> Callable[..., Any]:
    async def route(request: Request) -> Response:
        viewer = visitors.viewer(request)
        if viewer is None:
            return visitors.sign_in_redirect(request)
        try:
            if post:
                form = await form_of(request)
                if not visitors.csrf_ok(request, form, viewer.csrf):
                    raise ServeError(403, "csrf", "this form lacks its CSRF token (the "
                                     "X-CSRF-Token header or the csrf_token field); reload "
                                     "the page and try again")
                request.state.form = form
            return await handler(request, viewer, runs)
        except ServeError as error:
            return error_page(viewer, error, request)
    return route


async def _static(request: Request) -> Response:
    name = request.path_params["name"]
    kind = _STATIC.get(name)
    if kind is None:
        return Response(f"no static file {name!r}", 404, media_type="text/plain")
    data = resources.files("agentkit.serve.console").joinpath("static", name).read_bytes()
    return Response(data, headers={"content-type": kind, "cache-control": "max-age=3600",
                                   "x-content-type-options": "nosniff"})


def _sign_in_page(visitors: Visitors, request: Request, problem: str = "",
                  status: int = 200) -> Response:
    target = local_target(request.query_params.get("next", "/"))
    alert = f'<div class="refused" role="alert">{e(problem)}</div>' if problem else ""
    body = (
        "<h1>Sign in</h1><p>Paste a bearer token this server accepts (its "
        "<code>--token-env</code> or <code>--tokens</code> file). It is kept in an "
        "HttpOnly cookie for this site only.</p>"
        f'{alert}<form method="post" action="/sign-in" class="card">'
        f'<input type="hidden" name="csrf_token" value="{e(visitors.anonymous_csrf())}">'
        f'<input type="hidden" name="next" value="{e(target)}">'
        '<label>Token <input type="password" name="token" autocomplete="off" required '
        'autofocus></label> <button>Sign in</button></form>'
    )
    return page("Sign in", body, status=status)


def routes(access: Access, runs: ServedRuns) -> list[Route]:
    """The console's routes over ``runs``, for ``access``'s tokens."""
    visitors = Visitors(access)

    async def sign_in(request: Request) -> Response:
        if not access.required:
            return RedirectResponse("/", 303)
        if request.method == "GET":
            return _sign_in_page(visitors, request)
        form = await form_of(request)
        if not visitors.csrf_ok(request, form, visitors.anonymous_csrf()):
            return _sign_in_page(visitors, request, "This form lacks its CSRF token; reload "
                                 "the page and try again.", 403)
        token = form.get("token", "").strip()
        if access.principal(b"Bearer " + token.encode("utf-8", "surrogatepass")) is None:
            return _sign_in_page(visitors, request, "This server accepts no such token.", 401)
        return visitors.signed_in(token, form.get("next", "/"), request.url.scheme == "https")

    async def sign_out(request: Request, viewer: Viewer, runs: ServedRuns) -> Response:
        response = RedirectResponse("/sign-in" if access.required else "/", 303)
        response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
        return response

    def get(path: str, handler: Handler) -> Route:
        return Route(path, _page(visitors, runs, handler), methods=["GET"])

    def post(path: str, handler: Handler) -> Route:
        return Route(path, _page(visitors, runs, handler, post=True), methods=["POST"])

    return [
        Route("/sign-in", sign_in, methods=["GET", "POST"]),
        post("/sign-out", sign_out),
        Route("/static/{name}", _static, methods=["GET"]),
        get("/", _runs_page.runs_page),
        get("/runs/{run_id}", _run_page.run_page),
        get("/runs/{run_id}/attachments/{message:int}/{part:int}", _run_page.attachment),
        get("/inbox", _inbox.inbox_page),
        post("/inbox/{run_id}/decide", _inbox.decide),
        get("/sessions", _sessions.sessions_page),
        get("/sessions/{session_id}", _sessions.session_page),
        get("/costs", _costs.costs_page),
    ]
