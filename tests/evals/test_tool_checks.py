"""Evaluators of the tool calls: ToolTrajectory, ToolArguments, MaxToolCalls, NoToolCall."""

from __future__ import annotations

import pytest

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ToolCall
from agentkit.core.testing import Turn
from agentkit.evals import Case, MaxToolCalls, NoToolCall, ToolArguments, ToolTrajectory
from agentkit.tools import tool

from .conftest import OneCase


@tool(side_effecting=False)
def lookup(order_id: str) -> str:
    """Look up a customer order by its id and return its status line."""
    return f"{order_id}: delivered"


@tool(side_effecting=True)
def refund(order_id: str, amount_usd: float) -> str:
    """Refund an amount in US dollars on a customer order; returns the receipt."""
    return f"refunded {amount_usd} on {order_id}"


AGENT = Agent("support", "fake", "You help.",
              cognition=ReActCognition(tools=[lookup, refund]))
SCRIPT = [
    Turn(tool_calls=(ToolCall("c1", "lookup", {"order_id": "A-1"}),)),
    Turn(tool_calls=(ToolCall("c2", "refund", {"order_id": "A-1", "amount_usd": 20.0}),)),
    Turn("Refunded $20 on A-1."),
]


async def test_trajectory_modes(one_case: OneCase) -> None:
    result = await one_case(Case("refund A-1"), [
        ToolTrajectory(["lookup", "refund"]),
        ToolTrajectory(["refund", "lookup"]),
        ToolTrajectory(["refund"], mode="in_order"),
        ToolTrajectory(["refund", "lookup"], mode="in_order"),
        ToolTrajectory(["refund", "lookup"], mode="any_order"),
        ToolTrajectory([("refund", {"amount_usd": 20.0})], mode="any_order"),
        ToolTrajectory([("refund", {"amount_usd": 25.0})], mode="any_order"),
    ], agent=AGENT, script=SCRIPT)
    assert [(s.passed, s.reason) for s in result.scores.values()] == [
        (True, ""),
        (False, "expected calls ['refund', 'lookup'] (exact), got ['lookup', 'refund']"),
        (True, ""),
        (False, "expected calls ['refund', 'lookup'] (in_order), got ['lookup', 'refund']"),
        (True, ""),
        (True, ""),
        (False, "expected calls [\"refund({'amount_usd': 25.0})\"] (any_order), got "
                "['lookup', 'refund']"),
    ]
    assert [c.name for c in result.trajectory] == ["lookup", "refund"]


def test_an_unknown_trajectory_mode_is_refused() -> None:
    with pytest.raises(ValueError) as exc:
        ToolTrajectory(["a"], mode="some")  # type: ignore[arg-type]
    assert str(exc.value) == (
        "unknown ToolTrajectory mode 'some'; expected one of ('exact', 'in_order', 'any_order')"
    )


async def test_tool_arguments_max_tool_calls_and_no_tool_call(one_case: OneCase) -> None:
    result = await one_case(Case("refund A-1"), [
        ToolArguments("refund", lambda a: a["amount_usd"] <= 20),
        ToolArguments("refund", lambda a: a["amount_usd"] < 10),
        ToolArguments("cancel", lambda a: True),
        MaxToolCalls(2),
        MaxToolCalls(1),
        NoToolCall("cancel"),
        NoToolCall("refund"),
    ], agent=AGENT, script=SCRIPT)
    assert [(n, s.passed, s.reason) for n, s in result.scores.items()] == [
        ("ToolArguments(refund)", True, ""),
        ("ToolArguments(refund)#2", False,
         "arguments of 'refund' rejected: c2 {'order_id': 'A-1', 'amount_usd': 20.0}"),
        ("ToolArguments(cancel)", False,
         "no call to 'cancel' was made; calls: ['lookup', 'refund']"),
        ("MaxToolCalls", True, ""),
        ("MaxToolCalls#2", False, "2 tool calls, more than 1: ['lookup', 'refund']"),
        ("NoToolCall(cancel)", True, ""),
        ("NoToolCall(refund)", False, "'refund' was called (c2)"),
    ]
