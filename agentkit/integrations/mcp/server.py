"""Serving agentkit tools over MCP: build_server, serve, serve_async.

Every call goes through a RunContext and its tool chain, exactly as it would inside an
agent, so idempotency, audit, egress and budgets hold for MCP callers too; which
context a call gets is :mod:`~agentkit.integrations.mcp.contexts`' business.

Tool failures come back as ``isError`` results carrying the same text a model would
read inside agentkit. A tool that needs approval (by its declaration or the context's
autonomy tier) is refused unless the server was given an ``approve`` callback.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import os
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

import mcp.types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

import agentkit
from agentkit.agents.autonomy import should_gate
from agentkit.agents.tool_messages import describe_failure, render_value
from agentkit.core.contracts.errors import ToolNotFoundError
from agentkit.core.contracts.ports import Store, Tool, ToolMiddleware
from agentkit.core.contracts.types import Scope, ToolRequest
from agentkit.core.runtime.context import RunContext, new_run_id
from agentkit.integrations.mcp.contexts import ContextFactory, RunContexts, default_contexts
from agentkit.integrations.mcp.mcp_tool import REQUIRES_APPROVAL_META
from agentkit.tools.declarations.adapt import adapt, is_structured, thaw
from agentkit.tools.registry import ToolRegistry

__all__ = ["Approve", "ContextFactory", "build_server", "serve", "serve_async"]

_log = logging.getLogger("agentkit.mcp.server")

Approve = Callable[[ToolRequest], "bool | Awaitable[bool]"]
"""Decides whether a call that needs a human may run (True) or is refused (False)."""


def _registry(tools: ToolRegistry | Iterable[Tool | Callable[..., Any]]) -> ToolRegistry:
    return tools if isinstance(tools, ToolRegistry) else ToolRegistry.from_tools(tools)


class _ServedTools:
    """The handlers behind the MCP server: list the tools, run one call."""

    def __init__(
        self, registry: ToolRegistry, contexts: RunContexts, approve: Approve | None
    ) -> None:
        # A snapshot: what is listed and what can be called stay the same set even if
        # the registry changes later (clients are never told the list changed).
        self._tools = {tool.name: tool for tool in _advertised(registry)}
        self._contexts = contexts
        self._approve = approve
        self._listing = types.ListToolsResult(tools=[_describe(t) for t in self._tools.values()])

    async def list_tools(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return self._listing

    def input_schema(self, name: str) -> Mapping[str, Any] | None:
        tool = self._find(name)
        return None if tool is None or tool.schema is None else thaw(tool.schema.parameters)

    def _find(self, name: str) -> Tool | None:
        return self._tools.get(name)

    async def call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = self._find(params.name)
        if tool is None:
            return _error(str(ToolNotFoundError(params.name, list(self._tools))))
        run = self._contexts.for_call(ctx)
        request = ToolRequest(
            params.name,
            params.arguments or {},
            tool,
            bool(tool.side_effecting),
            call_id=None if ctx.request_id is None else str(ctx.request_id),
            key_step=bool(tool.side_effecting),
        )
        refusal = await self._refusal(request, run)
        if refusal is not None:
            return _error(refusal)
        try:
            value = await run.invoker.invoke_tool(request, run)
        except Exception as exc:
            _log.info("tool %r failed for run %s: %r", params.name, run.correlation_id, exc)
            return _error(describe_failure(params.name, exc))
        return _success(value)

    async def _refusal(self, request: ToolRequest, run: RunContext) -> str | None:
        tool = request.tool
        assert tool is not None
        if not should_gate(run.autonomy, bool(tool.requires_approval), request.key_step):
            return None
        if self._approve is None:
            return (
                f"tool {request.name!r} needs a human's approval and this MCP server has no "
                "way to ask for it, so the call did not run. A person can approve it only when "
                "the server is started from Python with serve(..., approve=callback); the "
                "agentkit mcp serve command cannot ask anyone"
            )
        try:
            decision = self._approve(request)
            if inspect.isawaitable(decision):
                decision = await decision
        except Exception as exc:
            _log.warning("approval callback failed for %r", request.name, exc_info=True)
            return (
                f"the call to {request.name!r} did not run: asking for approval failed "
                f"({type(exc).__name__}: {exc})"
            )
        if decision is True:
            return None
        return (
            f"the call to {request.name!r} was not approved by a human, so it did not run. "
            "Do not retry it unchanged"
        )


def _advertised(registry: ToolRegistry) -> list[Tool]:
    return [tool for tool in registry if tool.schema is not None]


def _describe(tool: Tool) -> types.Tool:
    schema = tool.schema
    assert schema is not None
    side_effecting = bool(tool.side_effecting)
    return types.Tool(
        name=schema.name,
        description=schema.description,
        input_schema=thaw(schema.parameters),
        output_schema=_output_schema(tool),
        annotations=types.ToolAnnotations(
            read_only_hint=not side_effecting,
            # agentkit cannot tell a destructive effect from an additive one, so every
            # side effect is declared destructive: the reading that makes clients careful.
            destructive_hint=side_effecting,
            idempotent_hint=bool(getattr(tool, "idempotent", False)),
        ),
        _meta={REQUIRES_APPROVAL_META: True} if tool.requires_approval else None,
    )


def _output_schema(tool: Tool) -> dict[str, Any] | None:
    declared = tool.output_schema
    if declared is None or not is_structured(declared):
        return None
    schema = thaw(adapt(declared).schema)
    return schema if isinstance(schema, dict) and schema.get("type") == "object" else None


def _success(value: Any) -> types.CallToolResult:
    text = render_value(value)
    structured: Any = None
    if text.startswith("{") and not isinstance(value, str):
        try:
            structured = json.loads(text)
        except ValueError:
            structured = None
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        structured_content=structured if isinstance(structured, dict) else None,
    )


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


def build_server(
    tools: ToolRegistry | Iterable[Tool | Callable[..., Any]],
    *,
    name: str = "agentkit",
    instructions: str | None = None,
    ctx_factory: ContextFactory | None = None,
    tool_middleware: Iterable[ToolMiddleware] | None = None,
    store: Store | None = None,
    scope: Scope | None = None,
    approve: Approve | None = None,
) -> Server[Any]:
    """The SDK's low-level ``mcp.server.Server`` serving ``tools``, for embedding (e.g.
    ``build_server(...).streamable_http_app()`` inside your ASGI app) or in-process
    tests with ``mcp.Client(server)``.

    Each run's context comes from ``ctx_factory(run_id)`` when given; otherwise from
    ``make_ctx`` with ``tool_middleware`` (default: ``default_tool_chain()``), one
    shared ``store`` (default: a new in-memory store), ``scope`` and a model that
    refuses to be called. ``approve(request)`` (sync or async) decides calls that need
    a human: exactly ``True`` runs the call; without a callback they are refused.
    """
    return _build(
        tools,
        None,
        name=name,
        instructions=instructions,
        ctx_factory=ctx_factory,
        tool_middleware=tool_middleware,
        store=store,
        scope=scope,
        approve=approve,
    )


def _build(
    tools: ToolRegistry | Iterable[Tool | Callable[..., Any]],
    session: str | None,
    *,
    name: str,
    instructions: str | None,
    ctx_factory: ContextFactory | None,
    tool_middleware: Iterable[ToolMiddleware] | None,
    store: Store | None,
    scope: Scope | None,
    approve: Approve | None,
) -> Server[Any]:
    factory = ctx_factory or default_contexts(tool_middleware, store, scope)
    served = _ServedTools(_registry(tools), RunContexts(factory, session), approve)
    return Server(
        name,
        version=agentkit.__version__,
        instructions=instructions,
        get_tool_input_schema=served.input_schema,
        on_list_tools=served.list_tools,
        on_call_tool=served.call_tool,
    )


async def serve_async(
    tools: ToolRegistry | Iterable[Tool | Callable[..., Any]],
    *,
    name: str = "agentkit",
    http: str | None = None,
    instructions: str | None = None,
    ctx_factory: ContextFactory | None = None,
    tool_middleware: Iterable[ToolMiddleware] | None = None,
    store: Store | None = None,
    scope: Scope | None = None,
    approve: Approve | None = None,
) -> None:
    """Serve ``tools`` until the client disconnects (stdio) or the task is cancelled.

    Over stdio by default; ``http="HOST:PORT"`` serves streamable HTTP at
    ``http://HOST:PORT/mcp`` instead. The other options are :func:`build_server`'s.
    """
    address = None if http is None else parse_host_port(http)
    # A stdio server has exactly one client for its whole life: that is the session.
    session = f"stdio-{os.getpid()}-{new_run_id()[:12]}" if address is None else None
    server = _build(
        tools,
        session,
        name=name,
        instructions=instructions,
        ctx_factory=ctx_factory,
        tool_middleware=tool_middleware,
        store=store,
        scope=scope,
        approve=approve,
    )
    if address is None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    else:
        await _serve_http(server, *address)


async def _serve_http(server: Server[Any], host: str, port: int) -> None:
    import uvicorn

    app = server.streamable_http_app(host=host)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()


def parse_host_port(value: str) -> tuple[str, int]:
    """``"127.0.0.1:8000"`` → ``("127.0.0.1", 8000)``; ``[::1]:8000`` for IPv6.

    Raises ValueError naming the accepted form.
    """
    host, sep, port = value.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"expected HOST:PORT such as 127.0.0.1:8000, got {value!r}")
    return host, int(port)


def serve(
    tools: ToolRegistry | Iterable[Tool | Callable[..., Any]],
    *,
    name: str = "agentkit",
    http: str | None = None,
    instructions: str | None = None,
    ctx_factory: ContextFactory | None = None,
    tool_middleware: Iterable[ToolMiddleware] | None = None,
    store: Store | None = None,
    scope: Scope | None = None,
    approve: Approve | None = None,
) -> None:
    """Serve ``tools`` over MCP and block until done; see :func:`serve_async`.

    The tools keep the names, descriptions and input schemas an agentkit model sees;
    their annotations say ``readOnlyHint = not side_effecting``, ``destructiveHint =
    side_effecting`` and ``idempotentHint = idempotent``.
    """
    asyncio.run(
        serve_async(
            tools,
            name=name,
            http=http,
            instructions=instructions,
            ctx_factory=ctx_factory,
            tool_middleware=tool_middleware,
            store=store,
            scope=scope,
            approve=approve,
        )
    )
