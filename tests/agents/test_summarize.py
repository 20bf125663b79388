"""Summarize: older turns become one summary, written once per cut and kept in the
session; tool calls keep their results; a context-length error compacts and retries."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentkit.agents import Agent, Summarize, estimate_tokens
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.errors import ProviderError
from agentkit.core.contracts.types import (
    ChatRequest,
    LLMResult,
    Message,
    Scope,
    StreamEvent,
    ToolCall,
)
from agentkit.core.runtime.context import RunContext
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.state.sessions import read_session
from agentkit.state.stores.sqlite import SQLiteStore
from agentkit.tools import tool

SCOPE = Scope("acme", "support")
SCOPE_DEFAULT = Scope(0, 0)  # make_test_ctx's


class ByModel:
    """A chat model that hands each request to the FakeLLM of its model id: the agent's
    model and the summariser are scripted apart."""

    def __init__(self, **models: FakeLLM) -> None:
        self.models = models

    async def chat(self, request: ChatRequest, ctx: RunContext) -> LLMResult:
        return await self.models[request.model].chat(request, ctx)

    def stream(self, request: ChatRequest, ctx: RunContext) -> AsyncIterator[StreamEvent]:
        return self.models[request.model].stream(request, ctx)


@tool(side_effecting=False, idempotent=True)
def order_status(order_id: str) -> str:
    """Look up the shipping status of one customer order by its id."""
    return f"order {order_id} shipped on day {int(order_id[2:]) % 28 + 1}"


def turn_script(n: int) -> list[Turn]:
    call = ToolCall(f"c{n}", "order_status", {"order_id": f"A-{n}"})
    return [Turn(tool_calls=(call,)), Turn(f"Order A-{n} has shipped; anything else?")]


def history_part(request: ChatRequest) -> tuple[Message, ...]:
    """The messages before the run's own task (the last user message)."""
    last_task = max(i for i, m in enumerate(request.messages) if m.role == "user"
                    and not m.content.startswith("Summary of"))
    return request.messages[:last_task]


async def test_a_200_turn_session_stays_under_its_budget_with_tool_pairs_intact(
    tmp_path: Path,
) -> None:
    policy = Summarize(max_tokens=600, keep_last=3, model="summariser")
    agent_llm = FakeLLM.script([t for n in range(200) for t in turn_script(n)])
    summariser = FakeLLM("The customer asked about many orders; every one has shipped.")
    llm = ByModel(support=agent_llm, summariser=summariser)
    agent = Agent("desk", "support", "You answer order questions.",
                  cognition=ReActCognition(tools=[order_status]), history=policy)
    store = SQLiteStore(tmp_path / "s.db")
    try:
        for n in range(200):
            ctx = make_test_ctx(llm=llm, store=store, scope=SCOPE)
            result = await agent.run(f"where is order A-{n}?", ctx, session="chat-1")
            assert result.output == f"Order A-{n} has shipped; anything else?"
        everything = await read_session(store, SCOPE, "chat-1")
    finally:
        store.close()
    for request in agent_llm.requests:
        history = history_part(request)
        assert sum(estimate_tokens(m) for m in history) <= 600
        asked = {c.id for m in request.messages for c in m.tool_calls}
        answered = {m.tool_call_id for m in request.messages if m.role == "tool"}
        assert answered <= asked  # no result without its call
        assert {c.id for m in history for c in m.tool_calls} <= answered  # nor a call alone
    summaries = [r for r in agent_llm.requests if r.messages[0].content.startswith("Summary")]
    assert len(summaries) > 100  # most runs started from a summary
    # One summary per cut, each written once, however many runs read it.
    cuts = policy.cuts(everything[:-4])
    assert len(summariser.requests) == len(cuts)
    assert len(everything) == 200 * 4  # the full history is still in the store
    agent_llm.assert_all_used()


def test_cuts_keep_the_last_turns_and_depend_only_on_the_messages() -> None:
    turn = (Message("user", "x" * 76), Message("assistant", "y" * 76))  # 24 + 24 tokens
    policy = Summarize(max_tokens=200, keep_last=2, summary_tokens=50)
    # Four turns (192 tokens) fit; the fifth overflows and cuts to the last two turns.
    # Beside the summary (50) three turns fit (194), a fourth (242) cuts again.
    assert policy.cuts(turn * 4) == []
    assert policy.cuts(turn * 5) == [3]
    assert policy.cuts(turn * 6) == [3]
    assert policy.cuts(turn * 7) == [3, 5]
    assert policy.cuts(turn * 9) == [3, 5, 7]
    # Turns too big for the budget: never fewer than the latest, however far over.
    assert Summarize(max_tokens=40, keep_last=2, summary_tokens=16).cuts(turn * 3) == [1, 2]


async def test_a_resumed_run_reads_its_summary_back_instead_of_writing_another() -> None:
    @tool(side_effecting=True, requires_approval=True)
    def refund(order_id: str) -> str:
        """Refund one customer order in full and return the receipt line."""
        return f"refunded {order_id}"

    policy = Summarize(max_tokens=120, keep_last=1, model="summariser")
    words = "the customer asked about an order " * 8  # a turn is 77 tokens
    agent_llm = FakeLLM.script([
        Turn(f"first: {words}"), Turn(f"second: {words}"),
        Turn(tool_calls=(ToolCall("r1", "refund", {"order_id": "A-1"}),)),
        Turn("Refunded."),
    ])
    summariser = FakeLLM("Two questions about orders were answered.")
    llm = ByModel(desk=agent_llm, summariser=summariser)
    agent = Agent("desk", "desk", "p", cognition=ReActCognition(tools=[refund]), history=policy)
    store = make_test_ctx().store
    for task in ("one", "two"):
        await agent.run(task, make_test_ctx(llm=llm, store=store), session="s")
    paused = await agent.run("refund A-1", make_test_ctx(llm=llm, store=store), session="s")
    assert paused.stop_reason == "suspended"
    assert len(summariser.requests) == 1
    done = await agent.resume(paused.run_id, {"r1": "approve"},
                              make_test_ctx(llm=llm, store=store))
    assert done.output == "Refunded."
    assert len(summariser.requests) == 1
    assert agent_llm.requests[-1].messages[:3] == agent_llm.requests[-2].messages[:3]
    assert agent_llm.requests[-1].messages[0].content == (
        "Summary of the earlier conversation:\nTwo questions about orders were answered."
    )


async def test_a_context_length_error_compacts_the_history_once_and_retries() -> None:
    too_long = ProviderError(
        "anthropic: HTTP 400 (context_length): prompt is too long", provider="anthropic",
        transient=False, status=400, kind="context_length")
    agent_llm = FakeLLM.script([
        Turn("a"), Turn("b"), Turn(error=too_long), Turn("c"),
    ])
    summariser = FakeLLM("Said a and b.")
    llm = ByModel(desk=agent_llm, summariser=summariser)
    policy = Summarize(max_tokens=10_000, model="summariser")
    agent = Agent("desk", "desk", "p", history=policy)
    store = make_test_ctx().store
    for task in ("one", "two"):
        await agent.run(task, make_test_ctx(llm=llm, store=store), session="s")
    result = await agent.run("three", make_test_ctx(llm=llm, store=store), session="s")
    assert (result.stop_reason, result.output) == ("complete", "c")
    assert [m.content for m in agent_llm.requests[-1].messages] == [
        "Summary of the earlier conversation:\nSaid a and b.", "three",
    ]
    assert len(summariser.requests) == 1
    assert [m.content for m in result.messages] == [
        "Summary of the earlier conversation:\nSaid a and b.", "three", "c",
    ]
    assert len(await read_session(store, SCOPE_DEFAULT, "s")) == 6


async def test_a_second_context_length_error_fails_the_run() -> None:
    too_long = ProviderError("openai: HTTP 400 (context_length): too long", provider="openai",
                             transient=False, status=400, kind="context_length")
    agent_llm = FakeLLM.script([Turn("a"), Turn(error=too_long), Turn(error=too_long)])
    llm = ByModel(desk=agent_llm, summariser=FakeLLM("Said a."))
    agent = Agent("desk", "desk", "p", history=Summarize(max_tokens=10_000, model="summariser"))
    store = make_test_ctx().store
    await agent.run("one", make_test_ctx(llm=llm, store=store), session="s")
    with pytest.raises(ProviderError) as info:
        await agent.run("two", make_test_ctx(llm=llm, store=store), session="s")
    assert info.value is too_long
    agent_llm.assert_all_used()


def test_bad_settings_say_what_is_accepted() -> None:
    with pytest.raises(ValueError) as zero:
        Summarize(max_tokens=0)
    assert str(zero.value) == "Summarize.max_tokens must be a positive int, got 0"
    with pytest.raises(ValueError) as small:
        Summarize(max_tokens=40)
    assert str(small.value) == (
        "Summarize: the summary's allowance (10 tokens) must be at least 16 to hold a "
        "summary; set summary_tokens= or a larger max_tokens (the allowance is a quarter "
        "of it unless set)"
    )
    with pytest.raises(ValueError) as room:
        Summarize(max_tokens=100, summary_tokens=100)
    assert str(room.value) == (
        "Summarize.summary_tokens (100) must be less than max_tokens (100): the kept turns "
        "need room too"
    )


async def test_deleting_a_session_erases_its_summaries_for_good() -> None:
    from agentkit.state.sessions import (
        SessionSummary,
        delete_session,
        load_summaries,
        store_summary,
    )

    policy = Summarize(max_tokens=64, keep_last=1, model="summariser")
    llm = ByModel(desk=FakeLLM("an answer long enough to need a summary soon " * 2 + "!" * 12),
                  summariser=FakeLLM("Asked twice."))
    agent = Agent("desk", "desk", "p", history=policy)
    ctx = make_test_ctx(llm=llm)
    for task in ("one", "two", "three"):
        await agent.run(task, ctx, session="s")
    assert list(await load_summaries(ctx.store, ctx.scope, "s", (1, 2))) == [1]
    assert await delete_session(ctx.store, ctx.scope, "s") is True
    assert await load_summaries(ctx.store, ctx.scope, "s", (1, 2)) == {}
    late = SessionSummary(1, Message("user", "Summary of the earlier conversation:\nold"))
    assert await store_summary(ctx.store, ctx.scope, "s", late) is late  # returned, not kept
    assert await load_summaries(ctx.store, ctx.scope, "s", (1,)) == {}
