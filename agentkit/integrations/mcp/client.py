"""Connecting to MCP servers: connect_stdio, connect_http, and the session they yield.

The SDK's client lives in a task of its own for the life of the connection. Its
transport runs in a task group, and a transport that fails (a server killed
mid-response) cancels everything inside that group; owning the client from a
separate task keeps that failure out of the caller's run. The caller's pending
requests are then woken with "connection closed", which becomes a
:class:`MCPConnectionError` the model reads like any failed tool call, instead of a
cancelled run.

Cancellation reaches the server both ways a run is cancelled: cancelling the task
abandons the request (the SDK sends ``notifications/cancelled``), and setting the
run's cancel token does the same at once rather than at the next safe point.
"""

from __future__ import annotations

import asyncio
import logging
import shlex
import sys
from collections.abc import AsyncIterator, Awaitable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

import httpx2
import mcp.types as types
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from agentkit.core.contracts.errors import HumanInputRequired
from agentkit.core.runtime.current_call import current_call
from agentkit.integrations.mcp.calls import (
    Progress,
    is_validation_error,
    shape_error,
    shorten,
    until_answered,
)
from agentkit.integrations.mcp.connection import (
    AuthProbe,
    client_version,
    close_owner,
    wait_until_connected,
)
from agentkit.integrations.mcp.errors import (
    MCPConnectionError,
    MCPTimeoutError,
    MCPToolError,
)
from agentkit.integrations.mcp.mcp_tool import MCPTool, assign_names
from agentkit.integrations.mcp.server_requests import OpenCall, ServerRequests
from agentkit.integrations.mcp.tasks import call_as_task
from agentkit.tools.declarations.adapt import thaw

if TYPE_CHECKING:
    from agentkit.core.runtime.context import RunContext

__all__ = ["RUN_ID_META", "MCPSession", "connect_http", "connect_stdio"]

RUN_ID_META = "agentkit/runId"
"""Request ``_meta`` key carrying the calling run's id, so an agentkit server can keep
one run's calls together (idempotency) even without a transport session."""

_T = TypeVar("_T")
_log = logging.getLogger("agentkit.mcp")
_MAX_PAGES = 100
"""A paginated tools/list that never ends stops here instead of hanging."""


class MCPSession:
    """A live connection to one MCP server.

    ``await session.list_tools()`` returns the server's tools as :class:`MCPTool`
    objects, ready for a ``ToolRegistry`` or ``ReActCognition(tools=...)``.
    """

    __slots__ = (
        "_auth",
        "_client",
        "_output_schemas",
        "_requests",
        "_task_tools",
        "call_timeout",
        "prefix",
        "server_name",
        "timeout",
        "trust_hints",
    )

    def __init__(
        self,
        client: Client,
        *,
        server_name: str,
        prefix: str,
        trust_hints: bool,
        timeout: float,
        call_timeout: float,
        requests: ServerRequests | None = None,
        auth: AuthProbe | None = None,
    ) -> None:
        self._client = client
        self._requests = requests or ServerRequests(
            server_name, sampling=False, sampling_model=None, elicitation=False, roots=()
        )
        self._auth = auth
        self.server_name = server_name
        """The name used in errors and on the tools (``MCPTool.server``)."""
        self.prefix = prefix
        self.trust_hints = trust_hints
        self.timeout = timeout
        self.call_timeout = call_timeout
        self._output_schemas: dict[str, Any] = {}
        self._task_tools: frozenset[str] = frozenset()

    @property
    def client(self) -> Client:
        """The SDK's ``mcp.Client`` underneath, for what this wrapper does not cover."""
        return self._client

    async def list_tools(self) -> list[MCPTool]:
        """Every tool the server offers, adapted; names are prefixed with ``prefix``.

        Names are made provider-safe; two that collide afterwards are told apart by
        :func:`~agentkit.integrations.mcp.mcp_tool.assign_names` (a tool it cannot name
        uniquely is left out with a warning, never the whole server).
        """
        definitions: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            page = await self._guard(
                "the tools/list request",
                self._client.list_tools(cursor=cursor, cache_mode="refresh"),
                self.timeout,
            )
            definitions.extend(page.tools)
            cursor = page.next_cursor
            if cursor is None:
                break
        self._output_schemas = {
            d.name: d.output_schema for d in definitions if d.output_schema is not None
        }
        self._task_tools = frozenset(
            d.name for d in definitions
            if d.execution is not None and d.execution.task_support == "required"
        )
        tools: list[MCPTool] = []
        names = assign_names([d.name for d in definitions], self.prefix)
        for definition, name in zip(definitions, names, strict=True):
            if name is None:
                _log.warning(
                    "MCP server %r: tool %r left out: its name collides with another tool's "
                    "even after disambiguation", self.server_name, definition.name,
                )
                continue
            tools.append(
                MCPTool(definition, self, prefix=self.prefix, trust_hints=self.trust_hints,
                        name=name)
            )
        return tools

    async def list_resources(self) -> list[types.Resource]:
        """The resources the server lists (every page)."""
        resources: list[types.Resource] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):
            page = await self._guard(
                "the resources/list request",
                self._client.list_resources(cursor=cursor, cache_mode="refresh"),
                self.timeout,
            )
            resources.extend(page.resources)
            cursor = page.next_cursor
            if cursor is None:
                break
        return resources

    async def read_resource(
        self, uri: str
    ) -> list[types.TextResourceContents | types.BlobResourceContents]:
        """The contents of the resource at ``uri``."""
        result = await self._guard(
            f"the read of {uri!r}", self._client.read_resource(uri, cache_mode="refresh"),
            self.timeout,
        )
        return list(result.contents)

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any], ctx: RunContext | None = None
    ) -> types.CallToolResult:
        """Call the server's tool ``name`` and return the SDK's raw result.

        With ``ctx``, the run id travels in the request's ``_meta``, the run's cancel
        token aborts the request, and the server's progress notifications become
        ``tool.progress`` events (``ctx.emit``). A question the server asks a person
        mid-call raises :class:`~agentkit.core.contracts.errors.HumanInputRequired` (an
        agent run suspends on it). No argument check happens here; go through
        :class:`MCPTool` (``list_tools``) for that.
        """
        current = current_call.get()
        key = None if ctx is None or current is None else (ctx.correlation_id, current.call_id)
        open_call = None if key is None else self._requests.unpark(key)
        if open_call is not None:
            open_call.resume(ctx, current)  # the same request carries on, with the answer
        else:
            open_call = self._requests.open(name, ctx)
            open_call.request = asyncio.ensure_future(self._send(name, arguments, ctx, open_call))
        parked = False
        try:
            return await self._guard(
                f"the call to {name!r}",
                until_answered(open_call, ctx, parkable=key is not None),
                self.call_timeout,
            )
        except HumanInputRequired:
            if key is not None:
                self._requests.park(key, open_call)
                parked = True
            raise
        except MCPError as exc:
            detail = f"{exc.message} (MCP error {exc.code})"
            raise MCPToolError(name, self.server_name, detail) from exc
        except RuntimeError as exc:
            schema = self._output_schemas.get(name)
            if schema is None and not is_validation_error(exc.__cause__):
                raise
            # The SDK checks structured content against the listed outputSchema and
            # raises a bare RuntimeError (its cause the jsonschema error) when it fails.
            raise shape_error(name, schema, exc) from exc
        finally:
            if not parked:
                self._requests.close(open_call)

    async def _send(
        self, name: str, arguments: Mapping[str, Any], ctx: RunContext | None, open_call: OpenCall
    ) -> types.CallToolResult:
        # RequestParamsMeta is an open TypedDict (PEP 728), which type checkers cannot
        # yet build with a key of our own.
        meta: Any = None if ctx is None else {RUN_ID_META: ctx.correlation_id}
        if name in self._task_tools:
            return await call_as_task(self._client.session, name, thaw(arguments), meta,
                                      self.call_timeout, ctx, self.server_name)
        return await self._client.call_tool(
            name,
            thaw(arguments),
            read_timeout_seconds=self.call_timeout,
            progress_callback=Progress(self.server_name, name, open_call),
            meta=meta,
        )

    async def _guard(self, what: str, request: Awaitable[_T], timeout: float) -> _T:
        try:
            return await request
        except MCPError as exc:
            if self._auth is not None and self._auth.refused is not None:
                raise self._auth.error(self.server_name) from exc
            if exc.code == types.CONNECTION_CLOSED:
                raise MCPConnectionError(
                    self.server_name,
                    f"MCP server {self.server_name!r} closed the connection during {what} "
                    "(the server exited or the network dropped), so whether it took effect "
                    "is unknown. Connect again to keep using the server",
                ) from exc
            if exc.code == types.REQUEST_TIMEOUT:
                raise MCPTimeoutError(self.server_name, what, timeout) from exc
            raise

    def __repr__(self) -> str:
        return f"MCPSession(server={self.server_name!r}, trust_hints={self.trust_hints})"


@dataclass(frozen=True, slots=True)
class _Options:
    name: str | None
    prefix: str
    trust_hints: bool
    timeout: float
    call_timeout: float
    sampling: bool
    sampling_model: str | None
    elicitation: bool
    roots: tuple[str | Path, ...]


@asynccontextmanager
async def connect_stdio(
    command: Sequence[str],
    *,
    name: str | None = None,
    prefix: str = "",
    trust_hints: bool = False,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    stderr: TextIO | None = None,
    timeout: float = 30.0,
    call_timeout: float = 120.0,
    sampling: bool = True,
    sampling_model: str | None = None,
    elicitation: bool = True,
    roots: Sequence[str | Path] = (),
) -> AsyncIterator[MCPSession]:
    """Start ``command`` (e.g. ``["npx", "-y", "@modelcontextprotocol/server-memory"]``)
    and talk MCP to it over its stdin and stdout.

    ``name`` labels the server in errors (default: what it calls itself). ``prefix``
    is put before every tool name. ``trust_hints=True`` lets the server's
    ``readOnlyHint`` / ``idempotentHint`` annotations relax agentkit's safeguards;
    without it every tool counts as side-effecting. ``env`` is added to a minimal
    inherited environment; the server's stderr goes to ``stderr`` (default: ours).
    ``timeout`` bounds connecting and listing, ``call_timeout`` each tool call.

    What the client offers the server (see ``server_requests``): ``sampling`` (the
    calling run's model answers, or ``sampling_model``; ``False`` to refuse),
    ``elicitation`` (questions go to the run's human: it suspends; ``False`` to
    refuse), ``roots`` (directories or URIs the server may work in; none by default,
    and then the capability is not declared).

    Raises :class:`MCPConnectionError` when the command cannot start or does not
    complete the MCP handshake.
    """
    if isinstance(command, str) or not command:
        raise ValueError(
            f"connect_stdio needs the command as a list of strings, e.g. "
            f"['python', 'server.py']; got {command!r}"
        )
    parameters = StdioServerParameters(
        command=command[0],
        args=list(command[1:]),
        env=dict(env) if env is not None else None,
        cwd=cwd,
    )
    transport = stdio_client(parameters, errlog=stderr if stderr is not None else sys.stderr)
    label = name or shorten(shlex.join(command))
    options = _Options(name, prefix, trust_hints, timeout, call_timeout, sampling,
                       sampling_model, elicitation, tuple(roots))
    async with _connected(transport, label, options, None) as session:
        yield session


@asynccontextmanager
async def connect_http(
    url: str,
    *,
    name: str | None = None,
    prefix: str = "",
    trust_hints: bool = False,
    headers: Mapping[str, str] | None = None,
    bearer_token: str | None = None,
    auth: httpx2.Auth | None = None,
    timeout: float = 30.0,
    call_timeout: float = 120.0,
    sampling: bool = True,
    sampling_model: str | None = None,
    elicitation: bool = True,
    roots: Sequence[str | Path] = (),
) -> AsyncIterator[MCPSession]:
    """Connect to the MCP server at ``url`` over streamable HTTP.

    ``headers`` go with every request; ``bearer_token="..."`` is the same as an
    ``Authorization: Bearer ...`` header. ``auth`` takes any ``httpx.Auth`` of the
    SDK's HTTP client, notably the official SDK's OAuth client provider
    (``mcp.client.auth.OAuthClientProvider``), which discovers the authorization
    server, registers, obtains and refreshes tokens. The other options are those of
    :func:`connect_stdio`.

    Raises :class:`MCPAuthError` when the server refuses the credentials (HTTP 401 or
    403), and :class:`MCPConnectionError` when nothing answers at ``url`` or the
    handshake fails.
    """
    all_headers = dict(headers or {})
    if bearer_token is not None:
        all_headers["Authorization"] = f"Bearer {bearer_token}"
    probe = AuthProbe()
    options = _Options(name, prefix, trust_hints, timeout, call_timeout, sampling,
                       sampling_model, elicitation, tuple(roots))
    transport = _http_transport(url, all_headers, auth, probe)
    async with _connected(transport, url, options, probe) as session:
        yield session


@asynccontextmanager
async def _http_transport(
    url: str, headers: Mapping[str, str], auth: httpx2.Auth | None, probe: AuthProbe
) -> AsyncIterator[Any]:
    timeouts = httpx2.Timeout(30.0, read=300.0)  # the SDK's defaults: SSE streams stay open
    async with (
        httpx2.AsyncClient(
            headers=dict(headers), timeout=timeouts, auth=auth,
            event_hooks={"response": [probe]},
        ) as http,
        streamable_http_client(url, http_client=http) as streams,
    ):
        yield streams


@asynccontextmanager
async def _connected(
    transport: Any, label: str, options: _Options, probe: AuthProbe | None
) -> AsyncIterator[MCPSession]:
    requests = ServerRequests(
        options.name or label,
        sampling=options.sampling,
        sampling_model=options.sampling_model,
        elicitation=options.elicitation,
        roots=options.roots,
    )
    client = Client(
        transport,
        read_timeout_seconds=options.timeout,
        # The initialize handshake (protocol 2025-11-25): in the 2026-07-28 era an SDK
        # server over stdio has no back-channel for sampling or elicitation requests.
        mode="legacy",
        client_info=types.Implementation(name="agentkit", version=client_version()),
        **requests.client_options(),
    )
    ready = asyncio.Event()
    stop = asyncio.Event()

    async def own() -> None:
        async with client:
            ready.set()
            await stop.wait()

    owner = asyncio.ensure_future(own())
    try:
        await wait_until_connected(owner, ready, label, options.timeout, probe)
        info = client.server_info
        server_name = options.name or (info.name if info is not None and info.name else label)
        requests.server = server_name
        session = MCPSession(
            client,
            server_name=server_name,
            prefix=options.prefix,
            trust_hints=options.trust_hints,
            timeout=options.timeout,
            call_timeout=options.call_timeout,
            requests=requests,
            auth=probe,
        )
        yield session
    finally:
        requests.close_all()
        stop.set()
        await close_owner(owner, label, graceful=ready.is_set())
