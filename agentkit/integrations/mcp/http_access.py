"""Who may reach a served MCP endpoint over HTTP: a bearer token, and Host/Origin checks.

* With a token, every request must carry ``Authorization: Bearer <token>``; anything
  else is answered ``401`` with ``WWW-Authenticate: Bearer`` before the MCP layer sees
  it. Tokens are compared in constant time (:func:`hmac.compare_digest`). A WebSocket
  connection is closed unseen: the MCP endpoint has none.
* Without a token the server binds only to a loopback address, unless the caller says
  ``insecure_no_auth=True`` (``--insecure-no-auth``) out loud.
* DNS-rebinding protection is always on, with the hosts and origins
  :mod:`agentkit.integrations.http_hosts` allows (the bound address by default).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from agentkit.integrations.http_hosts import allowed_hosts as _allowed_hosts
from agentkit.integrations.http_hosts import allowed_origins as _allowed_origins
from agentkit.integrations.http_hosts import is_loopback
from agentkit.integrations.mcp.contexts import PRINCIPAL_SCOPE_KEY

__all__ = ["BearerAuth", "check_exposure", "is_loopback", "transport_security"]

_POLICY_VIOLATION = 1008
"""The WebSocket close code for a connection the server refuses on principle."""


def check_exposure(host: str, auth_token: str | None, insecure_no_auth: bool) -> None:
    """Refuse to serve a non-loopback address to anyone who connects, unless asked to.

    Raises ValueError saying what to pass instead.
    """
    if auth_token is not None and not auth_token.strip():
        raise ValueError("the bearer token is empty; set it to a long random secret")
    if auth_token is None and not insecure_no_auth and not is_loopback(host):
        raise ValueError(
            f"refusing to serve {host!r} without authentication: anyone who can reach it "
            "could call the tools. Give a bearer token (--token-env NAME, or "
            "serve(..., auth_token=...)), bind to 127.0.0.1, or pass --insecure-no-auth "
            "(insecure_no_auth=True) if something in front of the server authenticates"
        )


def transport_security(
    host: str,
    port: int,
    allowed_hosts: Sequence[str] | None,
    allowed_origins: Sequence[str] | None,
) -> TransportSecuritySettings:
    """The SDK's Host/Origin checks for a server bound to ``host:port``.

    Raises ValueError for a wildcard bind without ``allowed_hosts``.
    """
    hosts = _allowed_hosts(
        host, port, allowed_hosts, flag="--allow-host", example="mcp.example.com"
    )
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=_allowed_origins(hosts, allowed_origins),
    )


class BearerAuth:
    """ASGI middleware: requests without the right bearer token get 401.

    Only HTTP requests reach the app (and the server's lifespan events): a WebSocket
    connection is closed with code 1008 whatever it carries, since the MCP endpoint has
    no WebSocket channel a token could open.

    The token's principal (a digest, never the token) is left in the scope for the run
    binding of :mod:`~agentkit.integrations.mcp.contexts`.
    """

    def __init__(self, app: ASGIApp, token: str) -> None:
        self._app = app
        self._expected = f"Bearer {token}".encode()
        self._principal = "bearer-" + hashlib.sha256(token.encode()).hexdigest()[:16]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":  # the server's start and stop, not a client: the app needs it
            await self._app(scope, receive, send)
            return
        if kind != "http":
            # MCP's HTTP transport has no WebSocket (or other) channel, so a client that
            # opens one is closed here, before the app could accept it unchecked.
            if kind == "websocket":
                await send({"type": "websocket.close", "code": _POLICY_VIOLATION,
                            "reason": "this endpoint serves MCP over HTTP only"})
            return
        given = b""
        for name, value in scope.get("headers", ()):
            if name == b"authorization":
                given = value
                break
        if not hmac.compare_digest(given, self._expected):
            await _unauthorized(send, "missing" if not given else "invalid")
            return
        await self._app({**scope, PRINCIPAL_SCOPE_KEY: self._principal}, receive, send)


async def _unauthorized(send: Send, problem: str) -> None:
    body = (
        f'{{"error": "unauthorized", "error_description": "{problem} bearer token: send '
        f'Authorization: Bearer <token>"}}'
    ).encode()
    headers: list[Any] = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"www-authenticate", b'Bearer realm="mcp", error="invalid_token"'),
    ]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})
