"""Scope keys keep tenants apart in a store: a string id that reads as a number is not
that number's tenant."""

from __future__ import annotations

import pytest

from agentkit.agents import Agent
from agentkit.core.contracts.types import Scope, ToolRequest
from agentkit.core.policies import idempotent
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.state.sessions import list_sessions, read_session
from agentkit.state.stores import InMemoryStore
from agentkit.tools import tool


def test_int_and_plain_string_ids_keep_their_keys() -> None:
    assert Scope(7, 1).key() == "org7:dom1"
    assert Scope("acme", "support").key() == "orgacme:domsupport"
    assert Scope("007", "-0").key() == "org007:dom-0"


def test_a_string_id_that_reads_as_an_int_is_marked_in_the_key() -> None:
    assert Scope("1", "2").key() == "org#1:dom#2"
    assert Scope("-3", 4).key() == "org#-3:dom4"
    # A leading '#' is doubled, so no string id can spell another one's key.
    assert Scope("#1", "#x").key() == "org##1:dom##x"


@pytest.mark.parametrize(
    "ids",
    [(1, "1"), (-3, "-3"), ("1", "#1"), ("#1", "##1"), ("x", "#x"), (0, "0"), (12, "12")],
)
def test_distinct_ids_have_distinct_keys(ids: tuple[int | str, int | str]) -> None:
    first, second = ids
    assert Scope(first, 5).key() != Scope(second, 5).key()
    assert Scope(5, first).key() != Scope(5, second).key()


agent = Agent(name="chat", model="fake", prompt="You answer.")


async def test_sessions_of_an_int_scope_and_its_string_twin_stay_apart() -> None:
    store = InMemoryStore()
    numbers, strings = Scope(1, 2), Scope("1", "2")
    llm = FakeLLM.script([Turn("hello, numbers"), Turn("hello, strings")])

    await agent.run("I am numbers", make_test_ctx(llm, store=store, scope=numbers),
                    session="s")
    await agent.run("I am strings", make_test_ctx(llm, store=store, scope=strings),
                    session="s")

    # The second tenant's model saw only its own task, not the first tenant's turn.
    assert [m.content for m in llm.requests[1].messages] == ["I am strings"]
    assert [m.content for m in await read_session(store, numbers, "s")] == [
        "I am numbers", "hello, numbers"]
    assert [m.content for m in await read_session(store, strings, "s")] == [
        "I am strings", "hello, strings"]
    assert await list_sessions(store, numbers) == ("s",)
    assert await list_sessions(store, strings) == ("s",)


async def test_idempotency_records_of_an_int_scope_and_its_string_twin_stay_apart() -> None:
    sent: list[str] = []

    @tool(side_effecting=True)
    def send(to: str) -> str:
        """Send a notification to one recipient and say to whom it went."""
        sent.append(to)
        return f"sent to {to} ({len(sent)})"

    store = InMemoryStore()
    results = []
    for scope in (Scope(1, 2), Scope("1", "2")):
        ctx = make_test_ctx(store=store, scope=scope, correlation_id="run-1",
                            tool_middleware=[idempotent()])
        results.append(await ctx.invoker.invoke_tool(
            ToolRequest("send", {"to": "ops"}, send), ctx))
    assert results == ["sent to ops (1)", "sent to ops (2)"]
