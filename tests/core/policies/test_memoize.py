"""memoize(): a result cache for read-only calls, per scope, that refuses side effects."""

from __future__ import annotations

import importlib
from typing import Any

from agentkit.core.contracts.types import Scope, ToolRequest
from agentkit.core.policies import memoize
from agentkit.core.runtime import RunContext
from agentkit.core.testing import make_test_ctx
from agentkit.state.stores.memory import InMemoryStore
from agentkit.tools import tool


def make_lookup(looked_up: list[str], name: str = "city_population") -> Any:
    @tool(side_effecting=False, idempotent=True, name=name)
    async def city_population(city: str) -> int:
        """Look up the most recent census population for a named city."""
        looked_up.append(city)
        return {"lisbon": 545_000, "porto": 231_000}.get(city.lower(), 0)

    return city_population


def lookup(the_tool: Any, city: str = "Lisbon", **flags: Any) -> ToolRequest:
    return ToolRequest(name=the_tool.name, arguments={"city": city}, tool=the_tool, **flags)


def ctx_for(
    store: InMemoryStore, run: str = "run-1", scope: Scope | None = None, **options: Any
) -> RunContext:
    return make_test_ctx(
        store=store,
        scope=scope or Scope(org_id=1, domain_id=1),
        correlation_id=run,
        tool_middleware=[memoize(**options)],
    )


async def test_a_read_only_call_is_cached_across_runs_in_one_scope() -> None:
    looked_up: list[str] = []
    city_population = make_lookup(looked_up)
    store = InMemoryStore()
    first, second = lookup(city_population), lookup(city_population)

    one = ctx_for(store, run="run-1")
    two = ctx_for(store, run="run-2")
    assert await one.invoker.invoke_tool(first, one) == 545_000
    assert await two.invoker.invoke_tool(second, two) == 545_000

    assert looked_up == ["Lisbon"]
    assert (first.meta["memoize"], second.meta["memoize"]) == ("miss", "hit")


async def test_the_cache_never_crosses_scopes() -> None:
    looked_up: list[str] = []
    city_population = make_lookup(looked_up)
    store = InMemoryStore()
    requests = []
    for scope in (Scope(1, 1), Scope(1, 2), Scope(2, 1)):
        ctx = ctx_for(store, scope=scope)
        request = lookup(city_population)
        requests.append(request)
        await ctx.invoker.invoke_tool(request, ctx)
    assert looked_up == ["Lisbon"] * 3
    assert [r.meta["memoize"] for r in requests] == ["miss"] * 3


async def test_different_arguments_or_tools_miss() -> None:
    looked_up: list[str] = []
    city_population = make_lookup(looked_up)
    census = make_lookup(looked_up, name="census")
    ctx = ctx_for(InMemoryStore())
    assert await ctx.invoker.invoke_tool(lookup(city_population, "Lisbon"), ctx) == 545_000
    assert await ctx.invoker.invoke_tool(lookup(city_population, "Porto"), ctx) == 231_000
    assert await ctx.invoker.invoke_tool(lookup(census, "Lisbon"), ctx) == 545_000
    assert looked_up == ["Lisbon", "Porto", "Lisbon"]


async def test_a_side_effecting_tool_is_declined_and_runs_every_time() -> None:
    sent: list[str] = []

    @tool(side_effecting=True)
    async def send_email(to: str) -> dict[str, bool]:
        """Send one email to a single recipient and report whether it was sent."""
        sent.append(to)
        return {"sent": True}

    ctx = ctx_for(InMemoryStore())
    requests = [
        ToolRequest(name="send_email", arguments={"to": "ops@example.com"}, tool=send_email)
        for _ in range(2)
    ]
    for request in requests:
        assert await ctx.invoker.invoke_tool(request, ctx) == {"sent": True}
    assert sent == ["ops@example.com", "ops@example.com"]
    assert [r.meta["memoize"] for r in requests] == ["skipped"] * 2


async def test_the_request_flag_alone_declines_a_read_only_tool() -> None:
    looked_up: list[str] = []
    city_population = make_lookup(looked_up)
    ctx = ctx_for(InMemoryStore())
    requests = [lookup(city_population, side_effecting=True) for _ in range(2)]
    for request in requests:
        await ctx.invoker.invoke_tool(request, ctx)
    assert looked_up == ["Lisbon", "Lisbon"]
    assert [r.meta["memoize"] for r in requests] == ["skipped"] * 2


async def test_entries_expire_after_ttl() -> None:
    now = [100.0]
    looked_up: list[str] = []
    city_population = make_lookup(looked_up)
    ctx = ctx_for(InMemoryStore(clock=lambda: now[0]), ttl=30)

    await ctx.invoker.invoke_tool(lookup(city_population), ctx)
    now[0] = 129.5
    still_fresh = lookup(city_population)
    await ctx.invoker.invoke_tool(still_fresh, ctx)
    now[0] = 130.0
    expired = lookup(city_population)
    await ctx.invoker.invoke_tool(expired, ctx)

    assert looked_up == ["Lisbon", "Lisbon"]
    assert (still_fresh.meta["memoize"], expired.meta["memoize"]) == ("hit", "miss")


async def test_an_explicit_store_is_used_instead_of_the_contexts() -> None:
    looked_up: list[str] = []
    city_population = make_lookup(looked_up)
    middleware = [memoize(store=InMemoryStore())]
    for _ in range(2):
        ctx = make_test_ctx(store=InMemoryStore(), tool_middleware=middleware)
        await ctx.invoker.invoke_tool(lookup(city_population), ctx)
    assert looked_up == ["Lisbon"]


def test_the_module_docstring_records_the_send_email_failure() -> None:
    module = importlib.import_module("agentkit.core.policies.memoize")
    doc = module.__doc__ or ""
    assert "send_email" in doc
    assert "{'sent': True}" in doc


def test_repr_names_the_factory_and_its_settings() -> None:
    assert repr(memoize(ttl=30)) == "memoize(store=None, ttl=30)"


class Opaque:
    """A result no store can keep."""


async def test_a_result_the_store_cannot_keep_is_returned_uncached() -> None:
    looked_up: list[str] = []
    result = Opaque()

    @tool(side_effecting=False)
    async def fetch_report(name: str) -> Opaque:
        """Fetch a report object from the reporting service by its name."""
        looked_up.append(name)
        return result

    ctx = ctx_for(InMemoryStore())
    for _ in range(2):
        request = ToolRequest("fetch_report", {"name": "q3"}, fetch_report)
        assert await ctx.invoker.invoke_tool(request, ctx) is result
        assert request.meta["memoize"] == "unstorable"
    assert looked_up == ["q3", "q3"]
