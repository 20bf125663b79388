"""The RunContext a served MCP call runs in: which run it belongs to, and that run's context.

A run is found from who is calling:

* one stdio connection is one session, and one session is one run;
* over streamable HTTP a handshake-era client's ``Mcp-Session-Id`` is the session;
* a client may also name its own run in the request's ``_meta`` (``agentkit/runId``,
  as agentkit's own client does), which splits a session into runs, or joins the calls
  of one run on a transport with no sessions (the 2026 single-exchange HTTP).

A call with none of those is a run of its own. Contexts are kept per run (the most
recent ``_MAX_RUNS``), so what a run accumulates, such as its budget, holds across its
calls; idempotency keys embed the run id, so a replay never crosses runs.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

from agentkit.core.assembly import make_ctx
from agentkit.core.contracts.errors import ProviderError
from agentkit.core.contracts.ports import Store, ToolMiddleware
from agentkit.core.contracts.types import ChatRequest, LLMResult, Scope, StreamEvent
from agentkit.core.runtime.context import RunContext, new_run_id
from agentkit.integrations.mcp.client import RUN_ID_META
from agentkit.state.stores.memory import InMemoryStore

__all__ = ["ContextFactory", "RunContexts", "default_contexts"]

ContextFactory = Callable[[str], RunContext]
"""Builds the RunContext for one served run, given its run id."""

_MAX_RUNS = 1024
_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")


class _NoModel:
    """The model of a served context: a served tool that asks for one gets a clear error."""

    def _refuse(self) -> ProviderError:
        return ProviderError(
            "this agentkit MCP server has no model: a served tool called ctx.llm. Serve "
            "with serve(..., ctx_factory=...) returning a context built on a real model",
            provider="mcp-server",
            transient=False,
            kind="no_model",
        )

    async def chat(self, request: ChatRequest, ctx: RunContext) -> LLMResult:
        raise self._refuse()

    async def stream(self, request: ChatRequest, ctx: RunContext) -> AsyncIterator[StreamEvent]:
        raise self._refuse()
        yield  # an async generator, like every stream()


def default_contexts(
    tool_middleware: Iterable[ToolMiddleware] | None, store: Store | None, scope: Scope | None
) -> ContextFactory:
    """``make_ctx`` contexts sharing one store (default: a new in-memory one), with
    ``tool_middleware`` (default: ``default_tool_chain()``) and a model that refuses."""
    shared = store if store is not None else InMemoryStore()
    chain = None if tool_middleware is None else list(tool_middleware)
    no_model = _NoModel()

    def contexts(run_id: str) -> RunContext:
        return make_ctx(
            no_model, store=shared, scope=scope, tool_middleware=chain, correlation_id=run_id
        )

    return contexts


class RunContexts:
    """The context of each served call: one per run, built by ``factory`` on first use.

    ``session`` fixes the session for every call (a stdio server); without it the
    session is read from the HTTP request, when there is one.
    """

    __slots__ = ("_factory", "_runs", "_session")

    def __init__(self, factory: ContextFactory, session: str | None = None) -> None:
        self._factory = factory
        self._session = session
        self._runs: OrderedDict[str, RunContext] = OrderedDict()

    def for_call(self, request_context: Any) -> RunContext:
        """The context for a call, given the SDK's ``ServerRequestContext``."""
        run_id = self.run_id(request_context)
        if run_id is None:
            return self._factory(f"mcp-call-{new_run_id()}")
        run = self._runs.get(run_id)
        if run is None:
            run = self._runs[run_id] = self._factory(run_id)
            if len(self._runs) > _MAX_RUNS:
                self._runs.popitem(last=False)
        else:
            self._runs.move_to_end(run_id)
        return run

    def run_id(self, request_context: Any) -> str | None:
        """The run a call belongs to, or None when nothing ties it to other calls."""
        session = self._session
        if session is None:
            headers = getattr(request_context.request, "headers", None)
            session = _token(headers.get("mcp-session-id") if headers is not None else None)
        client_run = _token((request_context.meta or {}).get(RUN_ID_META))
        if session and client_run:
            return f"mcp-session-{session}/run-{client_run}"
        if session:
            return f"mcp-session-{session}"
        if client_run:
            return f"mcp-run-{client_run}"
        return None


def _token(value: Any) -> str | None:
    """A client-supplied id, if it is a short plain token (it ends up inside keys)."""
    if isinstance(value, str) and 0 < len(value) <= 128 and set(value) <= _ID_CHARS:
        return value
    return None
