"""Which run a served call belongs to, and that run's context."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from agentkit.core.contracts.errors import ProviderError
from agentkit.core.contracts.types import ChatRequest
from agentkit.core.policies import default_tool_chain
from agentkit.core.runtime import RunContext
from agentkit.core.testing import make_test_ctx
from agentkit.integrations.mcp import RUN_ID_META
from agentkit.integrations.mcp.contexts import PRINCIPAL_SCOPE_KEY, RunContexts, default_contexts


class Connection:
    """A stand-in for the SDK's per-client connection (what the server created)."""

    def __init__(self, session_id: str | None = None) -> None:
        self.session_id = session_id


def call(
    connection: Connection | None = None,
    run: Any = None,
    *,
    http: bool = False,
    headers: dict[str, str] | None = None,
    principal: str | None = None,
    protocol: str = "2025-11-25",
) -> Any:
    """A stand-in for the SDK's ServerRequestContext: its connection, the HTTP request
    (headers and ASGI scope, when over HTTP) and the ``_meta``."""
    scope = {} if principal is None else {PRINCIPAL_SCOPE_KEY: principal}
    request = SimpleNamespace(headers=headers or {}, scope=scope) if http else None
    return SimpleNamespace(
        session=SimpleNamespace(_connection=connection),
        request=request,
        meta=None if run is None else {RUN_ID_META: run},
        protocol_version=protocol,
    )


def test_the_run_comes_from_the_servers_own_session_and_the_callers_run_id() -> None:
    contexts = RunContexts(make_test_ctx_for)
    stdio, other = Connection(), Connection()

    session = contexts.run_id(call(stdio))
    assert session is not None and session.startswith("mcp-session-")
    assert contexts.run_id(call(stdio)) == session
    assert contexts.run_id(call(stdio, run="r1")) == f"{session}/run-r1"
    assert contexts.run_id(call(other)) not in (None, session)
    http_session = Connection(session_id="4f1c")
    assert contexts.run_id(call(http_session, http=True)) not in (None, session)


def test_a_session_id_header_never_names_the_run() -> None:
    """Session-less HTTP: a client that sends another client's Mcp-Session-Id (or any
    header) does not join that client's run, and without authentication a run id it
    chooses ties nothing together."""
    contexts = RunContexts(make_test_ctx_for)
    victim = Connection(session_id="4f1c")
    victims_run = contexts.run_id(call(victim, http=True, headers={"mcp-session-id": "4f1c"}))

    stolen = {"mcp-session-id": "4f1c"}
    assert contexts.run_id(call(Connection(), http=True, headers=stolen)) is None
    assert contexts.run_id(call(Connection(), "r1", http=True, headers=stolen)) is None
    assert contexts.run_id(call(None, "r1", http=True, headers=stolen)) is None
    assert victims_run is not None and victims_run.startswith("mcp-session-")


def test_the_2026_protocol_has_no_sessions_and_local_callers_name_their_runs() -> None:
    contexts = RunContexts(make_test_ctx_for)
    modern = "2026-07-28"

    assert contexts.run_id(call(Connection(), protocol=modern)) is None
    assert contexts.run_id(call(Connection(), "r1", protocol=modern)) == "mcp-local/run-r1"
    assert contexts.run_id(call(Connection(), "r1", http=True, protocol=modern)) is None


def test_without_a_session_a_run_id_is_bound_to_the_authenticated_principal() -> None:
    contexts = RunContexts(make_test_ctx_for)

    alice = contexts.run_id(call(Connection(), "r1", http=True, principal="bearer-a1"))
    again = contexts.run_id(call(Connection(), "r1", http=True, principal="bearer-a1"))
    mallory = contexts.run_id(call(Connection(), "r1", http=True, principal="bearer-m9"))

    assert alice == again == "mcp-principal-bearer-a1/run-r1"
    assert mallory == "mcp-principal-bearer-m9/run-r1"


@pytest.mark.parametrize("bad", ["", "a:b", "x" * 129, "white space", 7, None])
def test_a_run_id_that_is_not_a_plain_token_is_ignored(bad: Any) -> None:
    contexts = RunContexts(make_test_ctx_for)
    assert contexts.run_id(call(None, bad, http=True, principal="bearer-a1")) is None


def test_one_context_per_run_and_a_fresh_one_for_an_unnamed_call() -> None:
    contexts = RunContexts(make_test_ctx_for)
    connection = Connection()

    first = contexts.for_call(call(connection, run="r1"))
    assert contexts.for_call(call(connection, run="r1")) is first
    assert contexts.for_call(call(connection, run="r2")) is not first
    unnamed = [contexts.for_call(call(None, http=True)) for _ in range(2)]
    assert unnamed[0].correlation_id != unnamed[1].correlation_id
    assert unnamed[0].correlation_id.startswith("mcp-call-")


async def test_the_default_context_asks_the_clients_model_and_shares_one_store() -> None:
    contexts = default_contexts(None, None, None)
    one, two = contexts("run-a"), contexts("run-b")

    assert (one.correlation_id, two.correlation_id) == ("run-a", "run-b")
    assert one.store is two.store
    assert [type(m) for m in one.invoker.tool_middleware] == [
        type(m) for m in default_tool_chain()
    ]
    with pytest.raises(ProviderError, match="this agentkit MCP server has no model, and the MCP"):
        await one.llm.chat(ChatRequest(model="any", messages=()), one)


def make_test_ctx_for(run_id: str) -> RunContext:
    return make_test_ctx(correlation_id=run_id)
