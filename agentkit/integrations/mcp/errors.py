"""What can go wrong talking to an MCP server, by who can fix it.

::

    AgentkitError
    ├── MCPToolError                      the server ran the tool and reported a failure
    └── MCPConnectionError (ConnectionError)
        ├── MCPTimeoutError (TimeoutError)  no answer in time; the request was cancelled
        └── MCPAuthError (PermissionError)  the server refused the credentials (401/403)

None of them is retried by ``retry()``: an ``isError`` result is the server's verdict,
and after a dropped connection or a timeout the call's effect is unknown, so only a
caller that knows the tool is safe to repeat should try again (on a new connection).
"""

from __future__ import annotations

from agentkit.core.contracts.errors import AgentkitError

__all__ = ["MCPAuthError", "MCPConnectionError", "MCPTimeoutError", "MCPToolError"]


class MCPToolError(AgentkitError):
    """The server answered a call with ``isError: true``; its text is the message."""

    def __init__(self, tool: str, server: str, detail: str) -> None:
        self.tool = tool
        self.server = server
        self.detail = detail
        super().__init__(
            f"tool {tool!r} on MCP server {server!r} reported an error: "
            f"{detail or '(no message)'}"
        )


class MCPConnectionError(AgentkitError, ConnectionError):
    """The server could not be reached, or the connection ended while a call was open."""

    def __init__(self, server: str, message: str) -> None:
        self.server = server
        super().__init__(message)


class MCPTimeoutError(MCPConnectionError, TimeoutError):
    """The server did not answer within the timeout; the request was cancelled."""

    def __init__(self, server: str, what: str, timeout: float) -> None:
        self.what = what
        self.timeout = timeout
        super().__init__(
            server,
            f"MCP server {server!r} did not answer {what} within {timeout:g}s, so the "
            "request was cancelled; whether it took effect is unknown. Raise call_timeout= "
            "on connect_stdio()/connect_http() if the tool is legitimately slow",
        )


class MCPAuthError(MCPConnectionError, PermissionError):
    """The HTTP server refused the request's credentials (401: none or invalid; 403:
    not enough), so nothing was done."""

    def __init__(self, server: str, status: int, challenge: str | None = None) -> None:
        self.status = status
        self.challenge = challenge
        """The server's ``WWW-Authenticate`` header, when it sent one."""
        what = "rejected the credentials" if status == 401 else "refused access"
        hint = f" (WWW-Authenticate: {challenge})" if challenge else ""
        super().__init__(
            server,
            f"MCP server {server!r} {what} (HTTP {status}){hint}. Pass a token with "
            "connect_http(..., bearer_token=...) or headers=, or an OAuth client provider "
            "with auth=",
        )
