"""Who is looking at the console: a token pasted once, kept in a cookie, and CSRF tokens.

A browser signs in by pasting a bearer token into the sign-in form; the server checks it
with the API's own :class:`~agentkit.serve.access.Access` and keeps it in an
``HttpOnly``, ``SameSite=Strict`` cookie, so page scripts cannot read it and no other
site's page can send it. A server without tokens (loopback only, as the API allows) has
no sign-in: every browser is the principal ``local``.

Every POST carries a CSRF token, as the ``X-CSRF-Token`` header or the ``csrf_token``
form field, and is refused (403) without the right one. The token is an HMAC, under a
secret the server draws when it starts, of the signed-in token (or of "local" without
tokens, or of "sign-in" before signing in): a page of this server embeds it, and a page
of any other origin cannot read it.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from urllib.parse import parse_qs, quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from agentkit.serve.access import Access, Principal
from agentkit.serve.console._html import page

__all__ = ["COOKIE", "Viewer", "Visitors", "form_of", "local_target"]

COOKIE = "agentkit_console"
"""The cookie holding the signed-in token."""

_MAX_FORM = 1024 * 1024


class Viewer:
    """The principal behind one request and the CSRF token its forms carry."""

    def __init__(self, principal: Principal, csrf: str, signed_in: bool) -> None:
        self.principal = principal
        self.csrf = csrf
        self.signed_in = signed_in
        """Whether by a token (a sign-out button is shown)."""

    def page(self, title: str, body: str, *, current: str = "", status: int = 200) -> Response:
        """A whole page for this viewer (its name, sign-out button and CSRF token)."""
        return page(title, body, current=current, status=status, csrf=self.csrf,
                    signed=self.principal.name if self.signed_in else None)


class Visitors:
    """Signs browsers in and out, and tells who made a request."""

    def __init__(self, access: Access) -> None:
        self.access = access
        self._secret = secrets.token_bytes(32)

    def _csrf(self, subject: str) -> str:
        return hmac.new(self._secret, subject.encode("utf-8", "surrogatepass"),
                        hashlib.sha256).hexdigest()

    def viewer(self, request: Request) -> Viewer | None:
        """Who made ``request``: by the API's bearer header, the cookie, or (without
        tokens) ``local``; None for a browser that must sign in."""
        if not self.access.required:
            principal = self.access.principal(None)
            assert principal is not None  # without tokens every request is local
            return Viewer(principal, self._csrf("local"), False)
        header = request.headers.get("authorization")
        if header is not None:
            found = self.access.principal(header.encode("latin-1"))
            if found is not None:
                return Viewer(found, self._csrf("header:" + header), False)
        token = request.cookies.get(COOKIE)
        if token:
            found = self.access.principal(b"Bearer " + token.encode("utf-8", "surrogatepass"))
            if found is not None:
                return Viewer(found, self._csrf("cookie:" + token), True)
        return None

    def anonymous_csrf(self) -> str:
        """The CSRF token of the sign-in form."""
        return self._csrf("sign-in")

    def csrf_ok(self, request: Request, form: dict[str, str], expected: str) -> bool:
        """Whether the request carries ``expected`` as its header or form field."""
        given = request.headers.get("x-csrf-token") or form.get("csrf_token") or ""
        return hmac.compare_digest(given.encode(), expected.encode())

    def sign_in_redirect(self, request: Request) -> Response:
        """Send a browser that is not signed in to the sign-in page, and back after."""
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        where = f"/sign-in?next={quote(target, safe='')}"
        if request.headers.get("hx-request"):
            return Response(status_code=401, headers={"hx-redirect": where})
        return RedirectResponse(where, 303)

    def signed_in(self, token: str, target: str, secure: bool) -> Response:
        """The answer to a good sign-in: the cookie, and the page asked for."""
        response = RedirectResponse(local_target(target), 303)
        response.set_cookie(COOKIE, token, httponly=True, samesite="strict", secure=secure,
                            path="/")
        return response


def local_target(target: str) -> str:
    """``target`` if it is a path on this server, else ``/`` (no open redirect)."""
    if target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/"


async def form_of(request: Request) -> dict[str, str]:
    """An url-encoded form body as its fields (the last value of each)."""
    raw = await request.body()
    if len(raw) > _MAX_FORM:
        return {}
    fields = parse_qs(raw.decode("utf-8", "replace"), keep_blank_values=True)
    return {key: values[-1] for key, values in fields.items()}
