"""make_ctx builds a production context; make_test_ctx a bare one for tests."""

from __future__ import annotations

import re
from typing import Any

import pytest

import agentkit
import agentkit.core.assembly
from agentkit.core.contracts.types import Autonomy, Scope, ToolRequest
from agentkit.core.policies import default_chat_chain, default_tool_chain, idempotent
from agentkit.core.runtime import RunContext
from agentkit.core.testing import FakeLLM, make_test_ctx
from agentkit.state.stores import InMemoryStore
from agentkit.tools import tool

RUN_ID = re.compile(r"[0-9a-f]{32}")


def make_send_email(sent: list[str]) -> Any:
    @tool(side_effecting=True)
    async def send_email(to: str, body: str) -> str:
        """Send one email to a single recipient and return the provider message id."""
        sent.append(to)
        return f"queued for {to}"

    return send_email


async def send_twice(ctx: RunContext) -> tuple[list[str], list[str | None]]:
    sent: list[str] = []
    send_email = make_send_email(sent)
    requests = [
        ToolRequest(name="send_email", arguments={"to": "ops@example.com", "body": "hi"},
                    tool=send_email)
        for _ in range(2)
    ]
    for request in requests:
        assert await ctx.invoker.invoke_tool(request, ctx) == "queued for ops@example.com"
    return sent, [r.meta.get("idempotency") for r in requests]


def test_make_ctx_is_exported_from_the_top_level_package() -> None:
    assert agentkit.make_ctx is agentkit.core.assembly.make_ctx


def test_an_unknown_top_level_attribute_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError) as info:
        agentkit.Agentz  # noqa: B018
    assert str(info.value) == "module 'agentkit' has no attribute 'Agentz'"


def test_the_default_tool_chain_ends_in_idempotent() -> None:
    chain = default_tool_chain()
    assert repr(chain[-1]) == repr(idempotent()) == "idempotent(store=None, ttl=None)"


def test_each_default_chain_is_a_fresh_list() -> None:
    assert default_tool_chain() is not default_tool_chain()
    assert default_chat_chain() is not default_chat_chain()


@pytest.mark.parametrize(
    "make_ctx", [agentkit.make_ctx, agentkit.core.assembly.make_ctx], ids=["top", "assembly"]
)
def test_make_ctx_defaults(make_ctx: Any) -> None:
    llm = FakeLLM()
    ctx = make_ctx(llm)
    assert ctx.llm is llm
    assert type(ctx.store) is InMemoryStore
    assert [repr(mw) for mw in ctx.invoker.tool_middleware] == [
        repr(mw) for mw in default_tool_chain()
    ]
    assert [repr(mw) for mw in ctx.invoker.chat_middleware] == [
        repr(mw) for mw in default_chat_chain()
    ]
    assert ctx.scope == Scope(org_id=0, domain_id=0)
    assert ctx.autonomy is Autonomy.AUTO
    assert (ctx.depth, ctx.budget, ctx.checkpointer, ctx.tracer, ctx.observer) == (
        0, None, None, None, None
    )
    assert RUN_ID.fullmatch(ctx.correlation_id)


def test_make_ctx_gives_every_run_a_fresh_id_and_store() -> None:
    contexts = [agentkit.make_ctx(FakeLLM()) for _ in range(3)]
    assert len({c.correlation_id for c in contexts}) == 3
    assert len({id(c.store) for c in contexts}) == 3


async def test_make_ctx_dedupes_a_side_effecting_call_within_a_run() -> None:
    sent, meta = await send_twice(agentkit.make_ctx(FakeLLM()))
    assert sent == ["ops@example.com"]
    assert meta == ["executed", "replayed"]


async def test_make_ctx_with_an_empty_tool_chain_installs_no_middleware() -> None:
    ctx = agentkit.make_ctx(FakeLLM(), tool_middleware=[], chat_middleware=[])
    assert (ctx.invoker.tool_middleware, ctx.invoker.chat_middleware) == ((), ())
    sent, meta = await send_twice(ctx)
    assert sent == ["ops@example.com", "ops@example.com"]
    assert meta == [None, None]


def test_make_ctx_uses_the_services_it_is_given() -> None:
    store = InMemoryStore()
    ctx = agentkit.make_ctx(
        FakeLLM(),
        store=store,
        scope=Scope(org_id=7, domain_id=1),
        autonomy="gated",
        correlation_id="run-42",
        max_depth=1,
    )
    assert ctx.store is store
    assert ctx.scope.key() == "org7:dom1"
    assert ctx.autonomy is Autonomy.GATED
    assert ctx.correlation_id == "run-42"
    assert ctx.max_depth == 1


async def test_make_test_ctx_has_no_middleware_by_default() -> None:
    ctx = make_test_ctx()
    assert (ctx.invoker.tool_middleware, ctx.invoker.chat_middleware) == ((), ())
    assert type(ctx.llm) is FakeLLM
    assert type(ctx.store) is InMemoryStore
    assert ctx.scope.key() == "org0:dom0"
    assert RUN_ID.fullmatch(ctx.correlation_id)
    assert make_test_ctx().correlation_id != ctx.correlation_id
    sent, meta = await send_twice(ctx)
    assert sent == ["ops@example.com", "ops@example.com"]
    assert meta == [None, None]
