"""Who may reach a served MCP endpoint over HTTP: a bearer token, and Host/Origin checks.

* With a token, every request must carry ``Authorization: Bearer <token>``; anything
  else is answered ``401`` with ``WWW-Authenticate: Bearer`` before the MCP layer sees
  it. Tokens are compared in constant time (:func:`hmac.compare_digest`). A WebSocket
  connection is closed unseen: the MCP endpoint has none.
* Without a token the server binds only to a loopback address, unless the caller says
  ``insecure_no_auth=True`` (``--insecure-no-auth``) out loud.
* DNS-rebinding protection is always on: the ``Host`` header must be one of the allowed
  hosts and a browser's ``Origin`` one of the allowed origins. They default to the bound
  address (a loopback bind also accepts its other loopback spellings, ``localhost``,
  ``127.0.0.1`` and ``[::1]``, on the same port). A wildcard bind (``0.0.0.0``, ``::``)
  has no address of its own for clients to name, so it needs ``allowed_hosts``.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from collections.abc import Sequence
from typing import Any

from mcp.server.transport_security import TransportSecuritySettings
from starlette.types import ASGIApp, Receive, Scope, Send

from agentkit.integrations.mcp.contexts import PRINCIPAL_SCOPE_KEY

__all__ = ["BearerAuth", "check_exposure", "is_loopback", "transport_security"]

_LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
_POLICY_VIOLATION = 1008
"""The WebSocket close code for a connection the server refuses on principle."""


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback IP addresses."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _is_wildcard(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.strip("[]")).is_unspecified
    except ValueError:
        return False


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


def _host_header(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"


def transport_security(
    host: str,
    port: int,
    allowed_hosts: Sequence[str] | None,
    allowed_origins: Sequence[str] | None,
) -> TransportSecuritySettings:
    """The SDK's Host/Origin checks for a server bound to ``host:port``.

    Raises ValueError for a wildcard bind without ``allowed_hosts``.
    """
    if allowed_hosts is None:
        if _is_wildcard(host):
            raise ValueError(
                f"{host!r} listens on every address, so there is no one Host value to "
                "accept: name the host names clients use, e.g. --allow-host "
                f"mcp.example.com:{port} (allowed_hosts=[...])"
            )
        names = _LOOPBACK_NAMES if is_loopback(host) else (host,)
        allowed_hosts = [_host_header(name, port) for name in names]
    hosts = list(dict.fromkeys(allowed_hosts))
    if allowed_origins is None:
        allowed_origins = [f"{scheme}://{h}" for h in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=hosts,
        allowed_origins=list(dict.fromkeys(allowed_origins)),
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
