"""Serving agentkit tools over MCP: build_server, serve, serve_async.

Every call goes through a RunContext and its tool chain, exactly as it would inside an
agent, so idempotency, audit, egress and budgets hold for MCP callers too; which
context a call gets is :mod:`~agentkit.integrations.mcp.contexts`' business, how its
value becomes MCP content is :mod:`~agentkit.integrations.mcp.results`', and the way
back to the client (progress, logs, elicitation, sampling) is
:mod:`~agentkit.integrations.mcp.served_call`'s.

Tool failures come back as ``isError`` results carrying the same text a model would
read inside agentkit. A call that needs a person (``ask_human``, or an approval by the
tool's declaration or the context's autonomy tier) is asked of the client's user through
elicitation when the client supports it, or decided by an ``approve`` callback; with
neither it is refused.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

import mcp.types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

from agentkit import __version__
from agentkit.agents.autonomy import should_gate
from agentkit.agents.tool_messages import describe_failure
from agentkit.core.contracts.errors import ToolNotFoundError
from agentkit.core.contracts.media import Audio, File, Image
from agentkit.core.contracts.ports import Store, Tool, ToolMiddleware
from agentkit.core.contracts.traits import traits_of
from agentkit.core.contracts.types import Scope, ToolRequest
from agentkit.core.runtime.context import RunContext
from agentkit.core.runtime.reporting import reporting_to
from agentkit.integrations.mcp.contexts import ContextFactory, RunContexts, default_contexts
from agentkit.integrations.mcp.mcp_tool import REQUIRES_APPROVAL_META
from agentkit.integrations.mcp.results import to_call_result
from agentkit.integrations.mcp.schemas import mcp_input_schema, tool_closed_structs
from agentkit.integrations.mcp.served_call import ServedCall, set_log_level
from agentkit.tools.declarations.adapt import adapt, is_structured, thaw
from agentkit.tools.registry import ToolRegistry

__all__ = ["Approve", "ContextFactory", "build_server", "serve", "serve_async"]

_log = logging.getLogger("agentkit.mcp.server")

Approve = Callable[[ToolRequest], "bool | Awaitable[bool]"]
"""Decides whether a call that needs a human may run (True) or is refused (False)."""

_APPROVAL_FORM = {
    "type": "object",
    "properties": {
        "approve": {
            "type": "boolean",
            "title": "Run it",
            "description": "true runs the call as shown; false refuses it",
        }
    },
    "required": ["approve"],
}
_ANSWER_FORM = {
    "type": "object",
    "properties": {"answer": {"type": "string", "title": "Your answer"}},
    "required": ["answer"],
}


_MEDIA_TYPES = (Image, Audio, File)


def _registry(tools: ToolRegistry | Iterable[Tool | Callable[..., Any]]) -> ToolRegistry:
    return tools if isinstance(tools, ToolRegistry) else ToolRegistry.from_tools(tools)


def _asks_human(tool: Tool) -> bool:
    return traits_of(tool).asks_human


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
        # Read once: which nested structs each tool refuses undeclared keys in.
        self._closed = {name: tool_closed_structs(tool) for name, tool in self._tools.items()}
        described = {name: _describe(tool, self._closed[name])
                     for name, tool in self._tools.items()}
        self._listing = types.ListToolsResult(tools=list(described.values()))
        # ask_human is answered through elicitation: a client that cannot elicit is not
        # offered it.
        self._listing_without_questions = types.ListToolsResult(
            tools=[d for name, d in described.items() if not _asks_human(self._tools[name])]
        )

    async def list_tools(
        self, ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        capabilities = ctx.session.client_capabilities
        can_ask = ctx.session.can_send_request  # False on the 2026 single exchange
        if capabilities is not None and capabilities.elicitation is not None and can_ask:
            return self._listing
        return self._listing_without_questions

    def input_schema(self, name: str) -> Mapping[str, Any] | None:
        tool = self._tools.get(name)
        return None if tool is None or tool.schema is None else mcp_input_schema(
            tool.schema.parameters, closed=self._closed[name]
        )

    async def set_level(self, ctx: Any, params: types.SetLevelRequestParams) -> types.EmptyResult:
        set_log_level(ctx, params.level)
        return types.EmptyResult()

    async def call_tool(
        self, ctx: Any, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = self._tools.get(params.name)
        if tool is None:
            return _error(str(ToolNotFoundError(params.name, list(self._tools))))
        run = self._contexts.for_call(ctx)
        side_effecting = traits_of(tool).side_effecting
        request = ToolRequest(
            params.name,
            params.arguments or {},
            tool,
            side_effecting,
            call_id=None if ctx.request_id is None else str(ctx.request_id),
            key_step=side_effecting,
            # The client's request is the unit of intent: a retried JSON-RPC request
            # (same id, same session) replays, a new request with the same arguments runs.
            meta={"idempotency_scope": "call"},
        )
        call = ServedCall(ctx, params.name)
        with reporting_to(call):
            if _asks_human(tool):
                return await self._ask(request, call)
            refusal = await self._refusal(request, run, call)
            if refusal is not None:
                return _error(refusal)
            try:
                value = await run.invoker.invoke_tool(request, run)
                return to_call_result(params.name, value)
            except Exception as exc:
                _log.info("tool %r failed for run %s: %r", params.name, run.correlation_id, exc)
                return _error(describe_failure(params.name, exc))

    async def _ask(self, request: ToolRequest, call: ServedCall) -> types.CallToolResult:
        """``ask_human`` over MCP: the question goes to the client's user as a form."""
        question = request.arguments.get("question")
        if not isinstance(question, str) or not question.strip():
            return _error(
                f"tool {request.name!r} call rejected: 'question' must be a non-empty string"
            )
        if not call.can_elicit:
            return _error(
                f"tool {request.name!r} asks the user a question, and this MCP client does not "
                "support elicitation, so nobody could be asked"
            )
        try:
            answer = await call.elicit(question, _ANSWER_FORM)
        except Exception as exc:
            _log.warning("asking the client's user failed for %r", request.name, exc_info=True)
            return _error(f"asking the user failed ({type(exc).__name__}: {exc})")
        if answer.action != "accept":
            verb = "declined" if answer.action == "decline" else "cancelled"
            return _error(f"the user {verb} the question instead of answering it")
        return types.CallToolResult(content=[types.TextContent(text=str(
            answer.content.get("answer", "")))])

    async def _refusal(self, request: ToolRequest, run: RunContext, call: ServedCall) -> str | None:
        tool = request.tool
        assert tool is not None
        if not should_gate(run.autonomy, request.traits.requires_approval, request.key_step):
            return None
        if self._approve is not None:
            return await self._ask_callback(request)
        if call.can_elicit:
            return await self._ask_user(request, call)
        return (
            f"tool {request.name!r} needs a human's approval and this MCP server has no "
            "way to ask for it (the client does not support elicitation), so the call did "
            "not run. A person can approve it through a client that supports elicitation, "
            "or when the server is started from Python with serve(..., approve=callback)"
        )

    async def _ask_callback(self, request: ToolRequest) -> str | None:
        assert self._approve is not None
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
        return None if decision is True else _not_approved(request.name)

    async def _ask_user(self, request: ToolRequest, call: ServedCall) -> str | None:
        arguments = json.dumps(thaw(request.arguments), ensure_ascii=False, default=str)
        if len(arguments) > 2000:
            arguments = arguments[:1997] + "..."
        try:
            answer = await call.elicit(
                f"Allow the tool {request.name!r} to run with these arguments? {arguments}",
                _APPROVAL_FORM,
            )
        except Exception as exc:
            _log.warning("asking the client to approve %r failed", request.name, exc_info=True)
            return (
                f"the call to {request.name!r} did not run: asking the user for approval "
                f"failed ({type(exc).__name__}: {exc})"
            )
        if answer.action == "accept" and answer.content.get("approve") is True:
            return None
        return _not_approved(request.name)


def _not_approved(name: str) -> str:
    return (
        f"the call to {name!r} was not approved by a human, so it did not run. "
        "Do not retry it unchanged"
    )


def _advertised(registry: ToolRegistry) -> list[Tool]:
    return [tool for tool in registry if tool.schema is not None]


def _describe(tool: Tool, closed: frozenset[str]) -> types.Tool:
    schema = tool.schema
    assert schema is not None
    traits = traits_of(tool)
    side_effecting = traits.side_effecting
    return types.Tool(
        name=schema.name,
        description=schema.description,
        input_schema=mcp_input_schema(schema.parameters, closed=closed),
        output_schema=_output_schema(tool),
        annotations=types.ToolAnnotations(
            read_only_hint=not side_effecting,
            # agentkit cannot tell a destructive effect from an additive one, so every
            # side effect is declared destructive: the reading that makes clients careful.
            destructive_hint=side_effecting,
            idempotent_hint=traits.idempotent,
        ),
        _meta={REQUIRES_APPROVAL_META: True} if traits.requires_approval else None,
    )


def _output_schema(tool: Tool) -> dict[str, Any] | None:
    declared = tool.output_schema
    if declared is None or declared in _MEDIA_TYPES or not is_structured(declared):
        return None
    schema = thaw(adapt(declared).schema)
    return schema if isinstance(schema, dict) and schema.get("type") == "object" else None


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
    shared ``store`` (default: a new in-memory store), ``scope`` and the calling
    client's model (MCP sampling; refused when the client does not offer it).
    ``approve(request)`` (sync or async) decides calls that need a human: exactly
    ``True`` runs the call. Without a callback the client's user is asked through
    elicitation, and a client that cannot elicit has such calls refused.
    """
    factory = ctx_factory or default_contexts(tool_middleware, store, scope)
    served = _ServedTools(_registry(tools), RunContexts(factory), approve)
    server: Server[Any] = Server(
        name,
        version=__version__,
        instructions=instructions,
        get_tool_input_schema=served.input_schema,
        on_list_tools=served.list_tools,
        on_call_tool=served.call_tool,
    )
    # Registered directly: the constructor's on_set_logging_level warns that logging is
    # deprecated in the 2026 protocol, and handshake-era clients still use it.
    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, served.set_level)
    return server


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
    auth_token: str | None = None,
    insecure_no_auth: bool = False,
    allowed_hosts: Sequence[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
) -> None:
    """Serve ``tools`` until the client disconnects (stdio) or the task is cancelled.

    Over stdio by default; ``http="HOST:PORT"`` serves streamable HTTP at
    ``http://HOST:PORT/mcp`` instead. Over HTTP, ``auth_token`` makes every request
    need ``Authorization: Bearer <auth_token>`` (401 otherwise); without one only a
    loopback address is served, unless ``insecure_no_auth=True``. ``allowed_hosts`` /
    ``allowed_origins`` are the ``Host`` / ``Origin`` values accepted (DNS-rebinding
    protection; default: the bound address). Raises ValueError for an exposure refused
    this way. The other options are :func:`build_server`'s.
    """
    server = build_server(
        tools,
        name=name,
        instructions=instructions,
        ctx_factory=ctx_factory,
        tool_middleware=tool_middleware,
        store=store,
        scope=scope,
        approve=approve,
    )
    if http is None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
        return
    host, port = parse_host_port(http)
    app = http_app(server, host, port, auth_token=auth_token, insecure_no_auth=insecure_no_auth,
                   allowed_hosts=allowed_hosts, allowed_origins=allowed_origins)
    import uvicorn

    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    await uvicorn.Server(config).serve()


def http_app(
    server: Server[Any],
    host: str,
    port: int,
    *,
    auth_token: str | None = None,
    insecure_no_auth: bool = False,
    allowed_hosts: Sequence[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
) -> Any:
    """The ASGI app serving ``server`` at ``/mcp`` on ``host:port``, with the access
    rules of :func:`serve_async`. Raises ValueError for an exposure it refuses."""
    from agentkit.integrations.mcp.http_access import (
        BearerAuth,
        check_exposure,
        transport_security,
    )

    check_exposure(host, auth_token, insecure_no_auth)
    security = transport_security(host, port, allowed_hosts, allowed_origins)
    app: Any = server.streamable_http_app(host=host, transport_security=security)
    return app if auth_token is None else BearerAuth(app, auth_token)


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
    auth_token: str | None = None,
    insecure_no_auth: bool = False,
    allowed_hosts: Sequence[str] | None = None,
    allowed_origins: Sequence[str] | None = None,
) -> None:
    """Serve ``tools`` over MCP and block until done; see :func:`serve_async`.

    The tools keep the names and descriptions an agentkit model sees; their input
    schemas are the MCP-facing form (JSON Schema 2020-12, ``additionalProperties:
    false``, nested structs in ``$defs``); their annotations say ``readOnlyHint = not
    side_effecting``, ``destructiveHint = side_effecting`` and ``idempotentHint =
    idempotent``.
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
            auth_token=auth_token,
            insecure_no_auth=insecure_no_auth,
            allowed_hosts=allowed_hosts,
            allowed_origins=allowed_origins,
        )
    )
