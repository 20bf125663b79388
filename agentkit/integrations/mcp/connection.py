"""The life of an MCP connection's owner task: its handshake, its close, and telling
refused credentials from other failures (the SDK reports both as internal errors)."""

from __future__ import annotations

import asyncio
import importlib.metadata
import logging

import httpx2

from agentkit.integrations.mcp.calls import explain
from agentkit.integrations.mcp.errors import MCPAuthError, MCPConnectionError, MCPTimeoutError

__all__ = ["AuthProbe", "client_version", "close_owner", "wait_until_connected"]

_log = logging.getLogger("agentkit.mcp")
_CLOSE_TIMEOUT = 10.0
"""Seconds a closing connection may take before it is cancelled (the SDK's stdio
shutdown itself escalates to killing the server within about six)."""


class AuthProbe:
    """Watches HTTP responses for a refusal of the credentials, which the SDK reports
    only as a generic internal error."""

    __slots__ = ("challenge", "refused")

    def __init__(self) -> None:
        self.refused: int | None = None
        self.challenge: str | None = None

    async def __call__(self, response: httpx2.Response) -> None:
        if response.status_code in (401, 403):
            self.refused = response.status_code
            self.challenge = response.headers.get("www-authenticate")
        elif response.is_success:
            self.refused = None
            self.challenge = None

    def error(self, server: str) -> MCPAuthError:
        return MCPAuthError(server, self.refused or 401, self.challenge)


def client_version() -> str:
    try:
        return importlib.metadata.version("agentkit-framework")
    except importlib.metadata.PackageNotFoundError:
        return "0"


async def wait_until_connected(
    owner: asyncio.Future[None],
    ready: asyncio.Event,
    label: str,
    timeout: float,
    probe: AuthProbe | None,
) -> None:
    """Wait for the connection's handshake; a typed error for a timeout, refused
    credentials or a connection that failed."""
    waiter = asyncio.ensure_future(ready.wait())
    try:
        await asyncio.wait((owner, waiter), timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
    if ready.is_set():
        return
    if not owner.done():
        raise MCPTimeoutError(label, "the connection handshake", timeout)
    error = owner.exception() if not owner.cancelled() else None
    if probe is not None and probe.refused is not None:
        raise probe.error(label) from error
    raise MCPConnectionError(
        label, f"could not connect to MCP server {label!r}: {explain(error)}"
    ) from error


async def close_owner(owner: asyncio.Future[None], label: str, *, graceful: bool) -> None:
    if not graceful:
        owner.cancel()
    await asyncio.wait((owner,), timeout=_CLOSE_TIMEOUT)
    if not owner.done():
        owner.cancel()
        await asyncio.wait((owner,))
    if graceful and not owner.cancelled() and (error := owner.exception()) is not None:
        # Every call that was open when the connection failed already raised
        # MCPConnectionError; raising again here would only hide the run's own outcome.
        _log.warning("connection to MCP server %r ended with %s", label, explain(error))
