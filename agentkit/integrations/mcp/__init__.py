"""MCP both ways: use the tools of any MCP server, and serve agentkit tools over MCP.

Consuming: ``async with connect_stdio([...]) as session: tools = await
session.list_tools()`` gives :class:`MCPTool` objects that work wherever a local tool
does, and ``MCPResources(session)`` recalls from the server's resources as a memory
source. Serving: ``serve(tools, name=...)`` (or ``agentkit mcp serve MODULE``) offers
agentkit tools to any MCP client, every call going through a RunContext and its
middleware chain; a served tool asks the client's user with ``elicit(...)``.

Needs the official SDK: ``pip install "agentkit-framework[mcp]"``. The names below
load on first use, so importing this package stays cheap.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
from typing import TYPE_CHECKING, Any


def _sdk_problem() -> str | None:
    """Why the installed SDK cannot be used, or None when it can."""
    try:
        installed = importlib.util.find_spec("mcp") is not None
    except (ImportError, ValueError):
        installed = False
    if not installed:
        return "the official MCP SDK is not installed"
    try:
        version = importlib.metadata.version("mcp")
    except importlib.metadata.PackageNotFoundError:
        return None  # a source checkout of the SDK: nothing to compare
    major = version.split(".", 1)[0]
    if major.isdigit() and int(major) < 2:
        return f"it is built on the 2.x API of the official MCP SDK, and mcp {version} is installed"
    return None


_PROBLEM = _sdk_problem()
if _PROBLEM is not None:
    raise ImportError(
        f"agentkit.integrations.mcp cannot load: {_PROBLEM}. "
        'Install it with: pip install -U "agentkit-framework[mcp]"'
    )

if TYPE_CHECKING:
    from agentkit.integrations.mcp.client import (
        RUN_ID_META,
        MCPSession,
        connect_http,
        connect_stdio,
    )
    from agentkit.integrations.mcp.errors import (
        MCPConnectionError,
        MCPTimeoutError,
        MCPToolError,
    )
    from agentkit.integrations.mcp.mcp_tool import MCPTool
    from agentkit.integrations.mcp.resources import MCPResources
    from agentkit.integrations.mcp.served_call import (
        ElicitationUnavailable,
        Elicited,
        elicit,
    )
    from agentkit.integrations.mcp.server import build_server, serve, serve_async

__all__ = [
    "RUN_ID_META",
    "ElicitationUnavailable",
    "Elicited",
    "MCPConnectionError",
    "MCPResources",
    "MCPSession",
    "MCPTimeoutError",
    "MCPTool",
    "MCPToolError",
    "build_server",
    "connect_http",
    "connect_stdio",
    "elicit",
    "serve",
    "serve_async",
]

_HOMES = {
    "RUN_ID_META": "client",
    "MCPSession": "client",
    "connect_http": "client",
    "connect_stdio": "client",
    "MCPConnectionError": "errors",
    "MCPTimeoutError": "errors",
    "MCPToolError": "errors",
    "MCPTool": "mcp_tool",
    "MCPResources": "resources",
    "ElicitationUnavailable": "served_call",
    "Elicited": "served_call",
    "elicit": "served_call",
    "build_server": "server",
    "serve": "server",
    "serve_async": "server",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
