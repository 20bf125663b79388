"""The RunContext a served MCP call runs in: which run it belongs to, and that run's context.

A run is found from who is calling, and only from what the server itself vouches for:

* a session is a client connection the server made: one stdio process, one in-process
  client, or one streamable-HTTP session whose ``Mcp-Session-Id`` the server issued
  (and the SDK checks: an unknown id is refused, a stolen one only works with the
  credential that opened it). One session is one run.
* a client may name its own run in the request's ``_meta`` (``agentkit/runId``, as
  agentkit's own client does). Within a session that splits the session into runs.
  Without one (stateless HTTP, the 2026 single-exchange protocol, which has no
  sessions) the name counts over HTTP only on an authenticated server, bound to the
  caller's credential: two clients holding different tokens never share a run, and on
  a server without authentication a client-chosen run id is ignored. Off HTTP (stdio,
  in process) there is one client, the process that started or embeds the server, and
  its run ids are taken as they are.

A call with none of those is a run of its own. Contexts are kept per run (the most
recent ``_MAX_RUNS``), so what a run accumulates, such as its budget, holds across its
calls; idempotency keys embed the run id, so a replay never crosses runs.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from agentkit.core.assembly import make_ctx
from agentkit.core.contracts.ports import Store, ToolMiddleware
from agentkit.core.contracts.types import Scope
from agentkit.core.runtime.context import RunContext, new_run_id
from agentkit.integrations.mcp.client import RUN_ID_META
from agentkit.integrations.mcp.served_call import ClientModel, connection_of
from agentkit.state.stores.memory import InMemoryStore

__all__ = ["ContextFactory", "RunContexts", "default_contexts"]

ContextFactory = Callable[[str], RunContext]
"""Builds the RunContext for one served run, given its run id."""

_MAX_RUNS = 1024
_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.")


PRINCIPAL_SCOPE_KEY = "agentkit.mcp.principal"
"""Where the HTTP authentication layer leaves the caller's principal in the ASGI scope."""


def default_contexts(
    tool_middleware: Iterable[ToolMiddleware] | None, store: Store | None, scope: Scope | None
) -> ContextFactory:
    """``make_ctx`` contexts sharing one store (default: a new in-memory one), with
    ``tool_middleware`` (default: ``default_tool_chain()``) and the client's model
    (:class:`~agentkit.integrations.mcp.served_call.ClientModel`: MCP sampling when the
    calling client offers it, a clear refusal otherwise)."""
    shared = store if store is not None else InMemoryStore()
    chain = None if tool_middleware is None else list(tool_middleware)
    no_model = ClientModel()

    def contexts(run_id: str) -> RunContext:
        return make_ctx(
            no_model, store=shared, scope=scope, tool_middleware=chain, correlation_id=run_id
        )

    return contexts


class RunContexts:
    """The context of each served call: one per run, built by ``factory`` on first use."""

    __slots__ = ("_factory", "_runs", "_sessions")

    def __init__(self, factory: ContextFactory) -> None:
        self._factory = factory
        self._runs: OrderedDict[str, RunContext] = OrderedDict()
        # The server's own name for each live connection; it goes when the connection does.
        self._sessions: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()

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
        session = self._session(request_context)
        client_run = _token((request_context.meta or {}).get(RUN_ID_META))
        if session:
            return f"mcp-session-{session}" + (f"/run-{client_run}" if client_run else "")
        if client_run is None:
            return None
        if request_context.request is None:
            # Not over HTTP: the one client is the process that started the server
            # (stdio) or the application that embeds it (in process).
            return f"mcp-local/run-{client_run}"
        principal = _principal(request_context)
        return None if principal is None else f"mcp-principal-{principal}/run-{client_run}"

    def _session(self, request_context: Any) -> str | None:
        connection = connection_of(request_context)
        if connection is None or request_context.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return None  # the 2026 protocol has no sessions: each request stands alone
        # An HTTP connection without a session id lives for one request (stateless HTTP).
        if request_context.request is not None and getattr(connection, "session_id", None) is None:
            return None
        session = self._sessions.get(connection)
        if session is None:
            session = self._sessions[connection] = new_run_id()[:16]
        return session


def _principal(request_context: Any) -> str | None:
    scope = getattr(request_context.request, "scope", None)
    principal = scope.get(PRINCIPAL_SCOPE_KEY) if isinstance(scope, dict) else None
    return principal if isinstance(principal, str) else None


def _token(value: Any) -> str | None:
    """A client-supplied id, if it is a short plain token (it ends up inside keys)."""
    if isinstance(value, str) and 0 < len(value) <= 128 and set(value) <= _ID_CHARS:
        return value
    return None
