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
from agentkit.integrations.mcp.contexts import RunContexts, default_contexts


def call(session_header: str | None = None, run: Any = None) -> Any:
    """A stand-in for the SDK's ServerRequestContext: the HTTP request and the ``_meta``."""
    headers = {} if session_header is None else {"mcp-session-id": session_header}
    return SimpleNamespace(
        request=SimpleNamespace(headers=headers), meta=None if run is None else {RUN_ID_META: run}
    )


def test_the_run_comes_from_the_session_and_the_callers_run_id() -> None:
    http = RunContexts(make_test_ctx_for)
    stdio = RunContexts(make_test_ctx_for, session="stdio-1")

    assert http.run_id(call("abc")) == "mcp-session-abc"
    assert http.run_id(call("abc", run="r1")) == "mcp-session-abc/run-r1"
    assert http.run_id(call(run="r1")) == "mcp-run-r1"
    assert http.run_id(call()) is None
    assert stdio.run_id(call()) == "mcp-session-stdio-1"
    assert stdio.run_id(call("ignored", run="r1")) == "mcp-session-stdio-1/run-r1"
    assert http.run_id(SimpleNamespace(request=None, meta=None)) is None  # in process


@pytest.mark.parametrize("bad", ["", "a:b", "x" * 129, "white space", 7, None])
def test_a_run_id_that_is_not_a_plain_token_is_ignored(bad: Any) -> None:
    assert RunContexts(make_test_ctx_for).run_id(call(run=bad)) is None


def test_one_context_per_run_and_a_fresh_one_for_an_unnamed_call() -> None:
    contexts = RunContexts(make_test_ctx_for)

    first = contexts.for_call(call(run="r1"))
    assert contexts.for_call(call(run="r1")) is first
    assert contexts.for_call(call(run="r2")) is not first
    unnamed = [contexts.for_call(call()) for _ in range(2)]
    assert unnamed[0].correlation_id != unnamed[1].correlation_id
    assert unnamed[0].correlation_id.startswith("mcp-call-")


async def test_the_default_context_has_no_model_and_shares_one_store() -> None:
    contexts = default_contexts(None, None, None)
    one, two = contexts("run-a"), contexts("run-b")

    assert (one.correlation_id, two.correlation_id) == ("run-a", "run-b")
    assert one.store is two.store
    assert [type(m) for m in one.invoker.tool_middleware] == [
        type(m) for m in default_tool_chain()
    ]
    with pytest.raises(ProviderError, match="this agentkit MCP server has no model"):
        await one.llm.chat(ChatRequest(model="any", messages=()), one)


def make_test_ctx_for(run_id: str) -> RunContext:
    return make_test_ctx(correlation_id=run_id)
