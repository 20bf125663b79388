"""HistoryPolicy: oldest whole turns go first; a tool call keeps its result; system
messages stay; the token estimate is about four characters per token."""

from __future__ import annotations

import pytest

from agentkit.agents import Agent, HistoryPolicy, estimate_tokens
from agentkit.core.contracts.types import Message, ToolCall
from agentkit.core.testing import FakeLLM, make_test_ctx

CALL_A = ToolCall("a", "lookup", {"order_id": "A-1"})
CALL_B = ToolCall("b", "lookup", {"order_id": "B-2"})

OLD = (
    Message("user", "where is A-1?"),
    Message("assistant", tool_calls=(CALL_A, CALL_B)),
    Message("tool", "A-1 shipped", tool_call_id="a", name="lookup"),
    Message("tool", "B-2 pending", tool_call_id="b", name="lookup"),
    Message("assistant", "A-1 shipped; B-2 is pending."),
)
NEW = (Message("user", "thanks"), Message("assistant", "Any time."))


def test_the_token_estimate_counts_four_characters_a_token_plus_four_a_message() -> None:
    assert estimate_tokens(Message("user", "")) == 4
    assert estimate_tokens(Message("user", "abcde")) == 4 + 2
    # name "lookup" (6) + '{"order_id": "A-1"}' (19) = 25 characters -> 7 tokens
    assert estimate_tokens(Message("assistant", tool_calls=(CALL_A,))) == 4 + 7
    assert estimate_tokens(Message("tool", "A-1 shipped", tool_call_id="a", name="lookup")) == (
        4 + 5
    )


def test_trimming_drops_whole_turns_so_no_tool_result_loses_its_call() -> None:
    history = OLD + NEW
    # Four messages would fit four of the old turn's five, which would orphan a result.
    assert HistoryPolicy(max_messages=4).trim(history) == NEW
    assert HistoryPolicy(max_messages=7).trim(history) == history
    assert HistoryPolicy(max_messages=1).trim(history) == ()
    for limit in range(8):
        kept = HistoryPolicy(max_messages=limit).trim(history)
        asked = {c.id for m in kept for c in m.tool_calls}
        assert all(m.tool_call_id in asked for m in kept if m.role == "tool")


def test_the_token_bound_counts_the_newest_turns_first() -> None:
    history = OLD + NEW
    new_tokens = sum(estimate_tokens(m) for m in NEW)
    all_tokens = sum(estimate_tokens(m) for m in history)
    assert (new_tokens, all_tokens) == (13, 67)
    assert HistoryPolicy(max_tokens=66).trim(history) == NEW
    assert HistoryPolicy(max_tokens=67).trim(history) == history
    assert HistoryPolicy(max_tokens=12).trim(history) == ()


def test_system_messages_in_the_history_are_never_dropped() -> None:
    rules = Message("system", "The customer is a VIP.")
    history = (rules, *OLD, *NEW)
    assert HistoryPolicy(max_messages=2).trim(history) == (rules, *NEW)
    assert HistoryPolicy(max_messages=0).trim(history) == (rules,)


def test_a_history_starting_with_orphan_results_loses_them() -> None:
    history = (OLD[3], OLD[4], *NEW)
    assert HistoryPolicy(max_messages=10).trim(history) == (OLD[4], *NEW)


async def test_the_agents_prompt_and_the_new_task_are_never_trimmed() -> None:
    llm = FakeLLM("ok")
    agent = Agent("chat", "fake", "You are terse.", history=HistoryPolicy(max_tokens=0))
    await agent.run("and now?", make_test_ctx(llm), history=OLD + NEW)
    assert llm.requests[0].system == "You are terse."
    assert llm.requests[0].messages == (Message("user", "and now?"),)


def test_bounds_must_be_non_negative_ints() -> None:
    with pytest.raises(ValueError) as caught:
        HistoryPolicy(max_messages=-1)
    assert str(caught.value) == (
        "HistoryPolicy.max_messages must be a non-negative int or None, got -1"
    )
    with pytest.raises(TypeError) as wrong:
        Agent("chat", "fake", "p", history=10)  # type: ignore[arg-type]
    assert str(wrong.value) == (
        "Agent(history=...) takes a HistoryPolicy(max_messages=..., max_tokens=...) or a "
        "Summarize(max_tokens=..., keep_last=...), got 10"
    )
