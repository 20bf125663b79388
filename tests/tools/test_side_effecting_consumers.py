"""The side_effecting= flag is read by idempotent() and memoize(), from the tool object."""

from typing import Any

from agentkit.core.contracts.types import Scope, ToolRequest
from agentkit.core.policies import idempotent, memoize
from agentkit.core.runtime import RunContext
from agentkit.core.testing import FakeLLM, make_test_ctx
from agentkit.state.stores import InMemoryStore
from agentkit.tools import FunctionTool, tool


def email_tool(sent: list[str], *, side_effecting: bool = True) -> FunctionTool:
    def send_email(to: str, body: str) -> str:
        """Send one email to a single recipient and return the provider message id."""
        sent.append(to)
        return f"queued for {to}"

    return tool(side_effecting=side_effecting)(send_email)


def context(
    store: InMemoryStore, middleware: Any, correlation_id: str, org_id: int = 1
) -> RunContext:
    return make_test_ctx(
        llm=FakeLLM(),
        store=store,
        scope=Scope(org_id=org_id, domain_id=1),
        tool_middleware=[middleware],
        correlation_id=correlation_id,
    )


REQUEST_ARGS = {"to": "ops@example.com", "body": "prod is down"}


async def test_idempotent_replays_a_retried_side_effecting_call_within_a_run() -> None:
    sent: list[str] = []
    send_email = email_tool(sent)
    ctx = context(InMemoryStore(), idempotent(), "run-1")
    request = ToolRequest(name="send_email", arguments=REQUEST_ARGS, tool=send_email)

    assert await ctx.invoker.invoke_tool(request, ctx) == "queued for ops@example.com"
    assert await ctx.invoker.invoke_tool(request, ctx) == "queued for ops@example.com"
    assert sent == ["ops@example.com"]


async def test_idempotent_replay_is_confined_to_one_run() -> None:
    sent: list[str] = []
    send_email = email_tool(sent)
    store = InMemoryStore()
    request = ToolRequest(name="send_email", arguments=REQUEST_ARGS, tool=send_email)

    for run_id in ("run-1", "run-2"):
        ctx = context(store, idempotent(), run_id)
        await ctx.invoker.invoke_tool(request, ctx)

    assert sent == ["ops@example.com", "ops@example.com"]


async def test_idempotent_replay_never_crosses_a_tenant() -> None:
    sent: list[str] = []
    send_email = email_tool(sent)
    store = InMemoryStore()
    request = ToolRequest(name="send_email", arguments=REQUEST_ARGS, tool=send_email)

    for org_id in (1, 2):
        ctx = context(store, idempotent(), "run-1", org_id=org_id)
        await ctx.invoker.invoke_tool(request, ctx)

    assert sent == ["ops@example.com", "ops@example.com"]


async def test_idempotent_passes_read_only_calls_straight_through() -> None:
    sent: list[str] = []
    read_only = email_tool(sent, side_effecting=False)
    ctx = context(InMemoryStore(), idempotent(), "run-1")
    request = ToolRequest(name="send_email", arguments=REQUEST_ARGS, tool=read_only)

    await ctx.invoker.invoke_tool(request, ctx)
    await ctx.invoker.invoke_tool(request, ctx)

    assert sent == ["ops@example.com", "ops@example.com"]


async def test_idempotent_key_includes_the_arguments() -> None:
    sent: list[str] = []
    send_email = email_tool(sent)
    ctx = context(InMemoryStore(), idempotent(), "run-1")

    for to in ("a@example.com", "b@example.com"):
        request = ToolRequest(name="send_email", arguments={"to": to, "body": "x"}, tool=send_email)
        await ctx.invoker.invoke_tool(request, ctx)

    assert sent == ["a@example.com", "b@example.com"]


async def test_memoize_declines_side_effecting_calls() -> None:
    sent: list[str] = []
    send_email = email_tool(sent)
    ctx = context(InMemoryStore(), memoize(), "run-1")
    request = ToolRequest(name="send_email", arguments=REQUEST_ARGS, tool=send_email)

    await ctx.invoker.invoke_tool(request, ctx)
    await ctx.invoker.invoke_tool(request, ctx)

    assert sent == ["ops@example.com", "ops@example.com"]


async def test_memoize_caches_read_only_calls() -> None:
    looked_up: list[str] = []

    @tool(side_effecting=False, idempotent=True)
    def city_population(city: str) -> int:
        """Look up the most recent census population for a named city."""
        looked_up.append(city)
        return 545_000

    ctx = context(InMemoryStore(), memoize(), "run-1")
    request = ToolRequest(
        name="city_population", arguments={"city": "Lisbon"}, tool=city_population
    )

    assert await ctx.invoker.invoke_tool(request, ctx) == 545_000
    assert await ctx.invoker.invoke_tool(request, ctx) == 545_000
    assert looked_up == ["Lisbon"]


async def test_the_tool_object_is_the_declaration_of_record() -> None:
    sent: list[str] = []
    send_email = email_tool(sent)
    ctx = context(InMemoryStore(), memoize(), "run-1")
    positional = ToolRequest("send_email", REQUEST_ARGS, send_email)

    assert positional.side_effecting is False
    assert positional.is_side_effecting is True
    await ctx.invoker.invoke_tool(positional, ctx)
    await ctx.invoker.invoke_tool(positional, ctx)
    assert sent == ["ops@example.com", "ops@example.com"]


async def test_a_side_effecting_request_flag_is_ored_with_a_read_only_tool() -> None:
    sent: list[str] = []
    send_email = email_tool(sent, side_effecting=False)
    ctx = context(InMemoryStore(), memoize(), "run-1")
    request = ToolRequest("send_email", REQUEST_ARGS, send_email, side_effecting=True)

    assert request.is_side_effecting is True
    await ctx.invoker.invoke_tool(request, ctx)
    await ctx.invoker.invoke_tool(request, ctx)
    assert sent == ["ops@example.com", "ops@example.com"]
