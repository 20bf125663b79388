"""idempotent(): a retried side-effecting call replays its first result, within one run."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentkit.core.contracts.state_errors import NotStorable
from agentkit.core.contracts.types import Scope, ToolRequest
from agentkit.core.policies import idempotent
from agentkit.core.runtime import RunContext
from agentkit.core.testing import FakeLLM, make_test_ctx
from agentkit.state.stores.memory import InMemoryStore
from agentkit.tools import tool

DEADLINE = 5.0
"""Seconds a concurrent test may wait on an event before it fails instead of hanging."""


def make_send_email(sent: list[str], name: str = "send_email") -> Any:
    @tool(side_effecting=True, name=name)
    async def send_email(to: str, body: str) -> str:
        """Send one email to a single recipient and return the provider message id."""
        sent.append(to)
        return f"queued for {to}"

    return send_email


def email(the_tool: Any, to: str = "ops@example.com", body: str = "prod is down") -> ToolRequest:
    return ToolRequest(name=the_tool.name, arguments={"to": to, "body": body}, tool=the_tool)


def ctx_for(
    store: InMemoryStore,
    run: str = "run-1",
    scope: Scope | None = None,
) -> RunContext:
    return make_test_ctx(
        store=store,
        scope=scope or Scope(org_id=1, domain_id=1),
        correlation_id=run,
        tool_middleware=[idempotent()],
    )


async def test_the_spec_example_sends_one_email_for_two_identical_calls() -> None:
    sent: list[str] = []

    @tool(side_effecting=True)
    def send_email(to: str, body: str) -> str:
        """Send one email to a single recipient and return the provider message id."""
        sent.append(to)
        return f"queued for {to}"

    ctx = make_test_ctx(
        llm=FakeLLM(),
        store=InMemoryStore(),
        scope=Scope(org_id=1, domain_id=1),
        tool_middleware=[idempotent()],
    )
    request = ToolRequest(
        name="send_email",
        arguments={"to": "ops@example.com", "body": "prod is down"},
        tool=send_email,
    )
    first = await ctx.invoker.invoke_tool(request, ctx)
    second = await ctx.invoker.invoke_tool(request, ctx)

    assert (first, second) == ("queued for ops@example.com", "queued for ops@example.com")
    assert sent == ["ops@example.com"]


async def test_meta_says_executed_then_replayed() -> None:
    sent: list[str] = []
    send = make_send_email(sent)
    ctx = ctx_for(InMemoryStore())
    first, second = email(send), email(send)

    await ctx.invoker.invoke_tool(first, ctx)
    await ctx.invoker.invoke_tool(second, ctx)

    assert first.meta["idempotency"] == "executed"
    assert second.meta["idempotency"] == "replayed"
    # The key is on the request before the call runs, so an outer retry() can tell
    # that a repeat would be replayed rather than performed.
    assert first.meta["idempotency_key"] == second.meta["idempotency_key"]
    assert first.meta["idempotency_key"].startswith("idempotency:run-1:org1:dom1:send_email:")


async def test_a_different_run_executes_again() -> None:
    sent: list[str] = []
    send = make_send_email(sent)
    store = InMemoryStore()
    for run in ("run-1", "run-2", "run-1"):
        ctx = ctx_for(store, run=run)
        await ctx.invoker.invoke_tool(email(send), ctx)
    assert sent == ["ops@example.com", "ops@example.com"]


async def test_a_different_scope_executes_again() -> None:
    sent: list[str] = []
    send = make_send_email(sent)
    store = InMemoryStore()
    for scope in (Scope(1, 1), Scope(1, 2), Scope(2, 1), Scope(1, 1)):
        ctx = ctx_for(store, scope=scope)
        await ctx.invoker.invoke_tool(email(send), ctx)
    assert sent == ["ops@example.com"] * 3


async def test_different_arguments_execute_again() -> None:
    sent: list[str] = []
    send = make_send_email(sent)
    ctx = ctx_for(InMemoryStore())
    await ctx.invoker.invoke_tool(email(send, to="a@example.com"), ctx)
    await ctx.invoker.invoke_tool(email(send, to="b@example.com"), ctx)
    await ctx.invoker.invoke_tool(email(send, to="a@example.com", body="other"), ctx)
    await ctx.invoker.invoke_tool(email(send, to="a@example.com"), ctx)
    assert sent == ["a@example.com", "b@example.com", "a@example.com"]


async def test_a_different_tool_with_the_same_arguments_executes_again() -> None:
    sent: list[str] = []
    paged: list[str] = []
    send = make_send_email(sent)
    page = make_send_email(paged, name="page_oncall")
    ctx = ctx_for(InMemoryStore())
    await ctx.invoker.invoke_tool(email(send), ctx)
    await ctx.invoker.invoke_tool(email(page), ctx)
    assert (sent, paged) == (["ops@example.com"], ["ops@example.com"])


async def test_argument_key_order_does_not_matter() -> None:
    sent: list[str] = []
    send = make_send_email(sent)
    ctx = ctx_for(InMemoryStore())
    forwards = ToolRequest(
        name="send_email", arguments={"to": "ops@example.com", "body": "hi"}, tool=send
    )
    backwards = ToolRequest(
        name="send_email", arguments={"body": "hi", "to": "ops@example.com"}, tool=send
    )
    await ctx.invoker.invoke_tool(forwards, ctx)
    await ctx.invoker.invoke_tool(backwards, ctx)
    assert sent == ["ops@example.com"]
    assert backwards.meta["idempotency"] == "replayed"


async def test_a_read_only_tool_runs_every_time() -> None:
    looked_up: list[str] = []

    @tool(side_effecting=False, idempotent=True)
    async def city_population(city: str) -> int:
        """Look up the most recent census population for a named city."""
        looked_up.append(city)
        return 545_000

    ctx = ctx_for(InMemoryStore())
    requests = [
        ToolRequest(name="city_population", arguments={"city": "Lisbon"}, tool=city_population)
        for _ in range(2)
    ]
    for request in requests:
        assert await ctx.invoker.invoke_tool(request, ctx) == 545_000
    assert looked_up == ["Lisbon", "Lisbon"]
    assert [r.meta.get("idempotency") for r in requests] == [None, None]


async def test_the_request_flag_makes_a_read_only_tool_cached() -> None:
    looked_up: list[str] = []

    @tool(side_effecting=False)
    async def city_population(city: str) -> int:
        """Look up the most recent census population for a named city."""
        looked_up.append(city)
        return 545_000

    ctx = ctx_for(InMemoryStore())
    for _ in range(2):
        request = ToolRequest(
            name="city_population",
            arguments={"city": "Lisbon"},
            tool=city_population,
            side_effecting=True,
        )
        assert await ctx.invoker.invoke_tool(request, ctx) == 545_000
    assert looked_up == ["Lisbon"]
    assert request.meta["idempotency"] == "replayed"


async def test_the_tool_flag_alone_makes_a_call_cached() -> None:
    sent: list[str] = []
    send = make_send_email(sent)
    ctx = ctx_for(InMemoryStore())
    for _ in range(2):
        request = ToolRequest("send_email", {"to": "ops@example.com", "body": "hi"}, send)
        assert request.side_effecting is False
        await ctx.invoker.invoke_tool(request, ctx)
    assert sent == ["ops@example.com"]


async def test_twenty_concurrent_identical_calls_run_the_body_once() -> None:
    calls = 20
    runs: list[str] = []
    arrived: list[int] = []
    all_arrived = asyncio.Event()
    release = asyncio.Event()

    @tool(side_effecting=True)
    async def send_email(to: str, body: str) -> str:
        """Send one email to a single recipient and return the provider message id."""
        runs.append(to)
        await release.wait()
        return f"queued for {to}"

    ctx = make_test_ctx(tool_middleware=[idempotent()])

    async def call(request: ToolRequest) -> Any:
        arrived.append(1)
        if len(arrived) == calls:
            all_arrived.set()
        return await ctx.invoker.invoke_tool(request, ctx)

    requests = [email(send_email) for _ in range(calls)]
    async with asyncio.timeout(DEADLINE):
        tasks = [asyncio.create_task(call(r)) for r in requests]
        await all_arrived.wait()
        assert runs == ["ops@example.com"]  # the first is inside the body, the rest wait
        release.set()
        results = await asyncio.gather(*tasks)

    assert results == ["queued for ops@example.com"] * calls
    assert runs == ["ops@example.com"]
    outcomes = sorted(r.meta["idempotency"] for r in requests)
    assert outcomes == ["executed"] + ["replayed"] * (calls - 1)


async def test_a_call_that_raises_stores_nothing_and_the_retry_runs_again() -> None:
    attempts: list[str] = []

    @tool(side_effecting=True)
    async def send_email(to: str, body: str) -> str:
        """Send one email to a single recipient and return the provider message id."""
        attempts.append(to)
        if len(attempts) == 1:
            raise ConnectionError("SMTP relay refused the connection")
        return f"queued for {to}"

    ctx = ctx_for(InMemoryStore())
    failing, retry, replay = email(send_email), email(send_email), email(send_email)
    with pytest.raises(ConnectionError) as info:
        await ctx.invoker.invoke_tool(failing, ctx)
    assert str(info.value) == "SMTP relay refused the connection"

    assert await ctx.invoker.invoke_tool(retry, ctx) == "queued for ops@example.com"
    assert await ctx.invoker.invoke_tool(replay, ctx) == "queued for ops@example.com"
    assert attempts == ["ops@example.com", "ops@example.com"]
    assert [r.meta.get("idempotency") for r in (failing, retry, replay)] == [
        None,
        "executed",
        "replayed",
    ]


async def test_an_explicit_store_is_used_instead_of_the_contexts() -> None:
    sent: list[str] = []
    send = make_send_email(sent)
    shared = InMemoryStore()
    middleware = [idempotent(store=shared)]
    # Same run and scope, but each context has a store of its own: only the explicit
    # store can carry the first result over to the second context.
    first = make_test_ctx(store=InMemoryStore(), correlation_id="run-1", tool_middleware=middleware)
    second = make_test_ctx(
        store=InMemoryStore(), correlation_id="run-1", tool_middleware=middleware
    )
    await first.invoker.invoke_tool(email(send), first)
    replay = email(send)
    await second.invoker.invoke_tool(replay, second)
    assert sent == ["ops@example.com"]
    assert replay.meta["idempotency"] == "replayed"


async def test_without_a_store_each_contexts_own_store_is_used() -> None:
    sent: list[str] = []
    send = make_send_email(sent)
    middleware = [idempotent()]
    for _ in range(2):
        ctx = make_test_ctx(
            store=InMemoryStore(), correlation_id="run-1", tool_middleware=middleware
        )
        await ctx.invoker.invoke_tool(email(send), ctx)
    assert sent == ["ops@example.com", "ops@example.com"]


async def test_ttl_lets_a_replay_expire() -> None:
    now = [0.0]
    sent: list[str] = []
    send = make_send_email(sent)
    ctx = make_test_ctx(
        store=InMemoryStore(clock=lambda: now[0]), tool_middleware=[idempotent(ttl=60)]
    )
    await ctx.invoker.invoke_tool(email(send), ctx)
    now[0] = 59.0
    await ctx.invoker.invoke_tool(email(send), ctx)
    now[0] = 60.0
    await ctx.invoker.invoke_tool(email(send), ctx)
    assert sent == ["ops@example.com", "ops@example.com"]


def test_repr_names_the_factory_and_its_settings() -> None:
    assert repr(idempotent()) == "idempotent(store=None, ttl=None)"
    assert repr(idempotent(ttl=5)) == "idempotent(store=None, ttl=5)"


async def test_a_call_scoped_tool_replays_retries_but_runs_new_calls() -> None:
    from agentkit.tools import tool

    reads: list[int] = []

    @tool(side_effecting=True)
    def read_counter(name: str) -> int:
        """Read a counter by name and bump it, returning the value before the bump."""
        reads.append(1)
        return len(reads)

    class CallScoped:
        """A duck-typed wrapper declaring per-call idempotency."""

        idempotency_scope = "call"

        def __getattr__(self, attr: str) -> object:
            return getattr(read_counter, attr)

    scoped = CallScoped()
    ctx = ctx_for(InMemoryStore())
    first = ToolRequest("read_counter", {"name": "a"}, scoped, call_id="c1")  # type: ignore[arg-type]
    retry_of_first = ToolRequest("read_counter", {"name": "a"}, scoped, call_id="c1")  # type: ignore[arg-type]
    new_call = ToolRequest("read_counter", {"name": "a"}, scoped, call_id="c2")  # type: ignore[arg-type]
    assert await ctx.invoker.invoke_tool(first, ctx) == 1
    assert await ctx.invoker.invoke_tool(retry_of_first, ctx) == 1
    assert await ctx.invoker.invoke_tool(new_call, ctx) == 2
    assert retry_of_first.meta["idempotency"] == "replayed"
    assert new_call.meta["idempotency"] == "executed"


class Opaque:
    """A result no store can keep."""


async def test_a_result_that_cannot_be_recorded_says_the_call_ran() -> None:
    """The body acted: the error must say so, since a repeat would act again."""
    acted: list[str] = []

    @tool(side_effecting=True)
    async def open_ticket(title: str) -> Opaque:
        """Open a ticket in the tracker and return the tracker's ticket object."""
        acted.append(title)
        return Opaque()

    ctx = ctx_for(InMemoryStore())
    request = ToolRequest("open_ticket", {"title": "disk full"}, open_ticket)
    with pytest.raises(NotStorable) as info:
        await ctx.invoker.invoke_tool(request, ctx)
    assert acted == ["disk full"]
    assert str(info.value) == (
        "tool 'open_ticket' ran, but idempotent() could not record its result, so repeating "
        "this call would act again: cannot store $: type Opaque is not storable. Stores keep "
        "JSON data: None, bool, int, float, str, bytes, bytearray, list, tuple, dict, set, "
        "frozenset, datetime, date, time, timedelta, Decimal, UUID and agentkit's own values "
        "(Message, ToolCall, Usage, media, ...). Return plain data from the tool, or register "
        "the type with agentkit.state.codec.register(...)"
    )
