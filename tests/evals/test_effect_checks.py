"""Side effects from the audit log (executed vs replayed), and runs that suspend."""

from __future__ import annotations

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ToolCall
from agentkit.core.policies import audit, idempotent
from agentkit.core.testing import Turn
from agentkit.evals import Case, NoDuplicateSideEffects, Score, SideEffectsAtMost, Suspended
from agentkit.tools import ask_human, tool

from .conftest import OneCase

refunds: list[str] = []


@tool(side_effecting=True)
def refund(order_id: str) -> str:
    """Refund a customer order in full and return the refund reference."""
    refunds.append(order_id)
    return f"refund R-{order_id}"


@tool(side_effecting=False)
def lookup(order_id: str) -> str:
    """Look up a customer order by its id and return its status line."""
    return f"{order_id}: delivered"


@tool(side_effecting=True, requires_approval=True)
def close_account(user: str) -> str:
    """Close a customer's account for good; a person approves every call."""
    return f"closed {user}"


AGENT = Agent("billing", "fake", "You refund.",
              cognition=ReActCognition(tools=[refund, lookup, close_account, ask_human]))
DOUBLE_REFUND = [
    Turn(tool_calls=(ToolCall("c1", "lookup", {"order_id": "A-1"}),
                     ToolCall("c2", "refund", {"order_id": "A-1"}))),
    Turn(tool_calls=(ToolCall("c3", "refund", {"order_id": "A-1"}),)),  # the same refund again
    Turn("Refunded A-1."),
]
CHECKS = [NoDuplicateSideEffects(), SideEffectsAtMost(1), SideEffectsAtMost(1, tool="lookup")]


async def test_a_double_refund_is_caught_from_the_audit_records(one_case: OneCase) -> None:
    refunds.clear()
    result = await one_case(Case("refund A-1"), CHECKS, agent=AGENT, script=DOUBLE_REFUND,
                            tool_middleware=[audit()])
    assert refunds == ["A-1", "A-1"]
    assert result.scores == {
        "NoDuplicateSideEffects": Score(0.0, False, "refund executed again with the same "
                                                    "arguments (call c3, first c2)"),
        "SideEffectsAtMost": Score(0.0, False, "2 side effects executed, more than 1: "
                                               "refund [c2], refund [c3]"),
        "SideEffectsAtMost(lookup)": Score(1.0, True, ""),
    }


async def test_the_same_refund_replayed_by_idempotent_is_no_duplicate(one_case: OneCase) -> None:
    refunds.clear()
    result = await one_case(Case("refund A-1"), CHECKS, agent=AGENT, script=DOUBLE_REFUND,
                            tool_middleware=[audit(), idempotent()])
    assert refunds == ["A-1"]
    assert all(s.passed for s in result.scores.values())
    assert result.passed


async def test_side_effect_checks_without_audit_are_errors_not_passes(one_case: OneCase) -> None:
    result = await one_case(Case("refund A-1"), [NoDuplicateSideEffects()], agent=AGENT,
                            script=[Turn("Nothing to do.")])
    assert result.scores["NoDuplicateSideEffects"].error == (
        "ValueError: NoDuplicateSideEffects reads the run's audit records, and the context's "
        "tool chain has no audit(); build the context with make_ctx (its default chain has "
        "one) or add audit() to tool_middleware"
    )
    assert not result.passed


async def test_a_suspended_run_is_scored_as_suspended_not_crashed(one_case: OneCase) -> None:
    result = await one_case(
        Case("close my account"),
        [Suspended("approval"), Suspended(), Suspended(["input"])],
        agent=AGENT, script=[Turn(tool_calls=(ToolCall("c1", "close_account", {"user": "u1"}),))],
    )
    assert (result.stop_reason, result.error, result.output) == ("suspended", None, None)
    assert [(s.passed, s.reason) for s in result.scores.values()] == [
        (True, ""), (True, ""), (False, "suspended waiting for ['approval'], expected ['input']"),
    ]


async def test_suspended_fails_a_run_that_completed(one_case: OneCase) -> None:
    result = await one_case(Case("hi"), [Suspended("input")], agent=AGENT,
                            script=[Turn("Hello!")])
    assert result.scores["Suspended"] == Score(
        0.0, False, "the run did not suspend: it stopped with 'complete'"
    )
