"""Approval gating: should_gate's table, and the same table through real runs, where one
gated call holds back every call of its turn."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit.agents import Agent, AgentResult, Autonomy, Suspended, should_gate
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.types import ToolCall
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.tools import tool

# (autonomy, requires_approval, key_step) -> gated
TABLE = [
    ("auto", False, False, False),
    ("auto", False, True, False),
    ("auto", True, False, True),
    ("auto", True, True, True),
    ("gated", False, False, False),
    ("gated", False, True, True),
    ("gated", True, False, True),
    ("gated", True, True, True),
    ("manual", False, False, True),
    ("manual", False, True, True),
    ("manual", True, False, True),
    ("manual", True, True, True),
]


@pytest.mark.parametrize(("autonomy", "requires_approval", "key_step", "gated"), TABLE)
def test_should_gate_table(
    autonomy: str, requires_approval: bool, key_step: bool, gated: bool
) -> None:
    assert should_gate(autonomy, requires_approval, key_step) is gated
    assert should_gate(Autonomy(autonomy), requires_approval, key_step) is gated


def test_should_gate_refuses_an_unknown_tier() -> None:
    with pytest.raises(ValueError) as info:
        should_gate("yolo", False, False)
    assert str(info.value) == "'yolo' is not a valid Autonomy"


class World:
    """Three tools that record every execution: read-only, side-effecting, and one that
    requires approval whatever the tier."""

    def __init__(self) -> None:
        self.effects: list[tuple[str, dict[str, Any]]] = []

        @tool(side_effecting=False)
        def lookup(order_id: str) -> str:
            """Look up a customer order and return its current status."""
            self.effects.append(("lookup", {"order_id": order_id}))
            return "shipped"

        @tool(side_effecting=True)
        def send_email(to: str, body: str) -> str:
            """Send one email to a single recipient and return the provider message id."""
            self.effects.append(("send_email", {"to": to, "body": body}))
            return "msg-1"

        @tool(side_effecting=False, requires_approval=True)
        def export_report(quarter: str) -> str:
            """Export the quarterly revenue report; a human must always approve this."""
            self.effects.append(("export_report", {"quarter": quarter}))
            return "exported"

        self.tools = [lookup, send_email, export_report]

    def agent(self) -> Agent:
        return Agent("clerk", "fake", "You handle orders.", cognition=ReActCognition(self.tools))


CALLS = {
    "lookup": ToolCall("c-look", "lookup", {"order_id": "A1"}),
    "send_email": ToolCall("c-mail", "send_email", {"to": "a@example.com", "body": "hi"}),
    "export_report": ToolCall("c-exp", "export_report", {"quarter": "Q3"}),
}


async def run_one(autonomy: str, name: str) -> tuple[AgentResult, World]:
    world = World()
    llm = FakeLLM.script([Turn(tool_calls=(CALLS[name],)), Turn(content="done")])
    ctx = make_test_ctx(llm=llm, autonomy=autonomy, correlation_id="run-1")
    return await world.agent().run("go", ctx), world


# (autonomy, tool) -> suspends; every cell of the table through the loop.
RUNS = [
    ("auto", "lookup", False),
    ("auto", "send_email", False),
    ("auto", "export_report", True),
    ("gated", "lookup", False),
    ("gated", "send_email", True),
    ("gated", "export_report", True),
    ("manual", "lookup", True),
    ("manual", "send_email", True),
    ("manual", "export_report", True),
]


@pytest.mark.parametrize(("autonomy", "name", "suspends"), RUNS)
async def test_which_calls_suspend_at_each_tier(autonomy: str, name: str, suspends: bool) -> None:
    result, world = await run_one(autonomy, name)
    call = CALLS[name]
    if suspends:
        assert result.stop_reason == "suspended"
        assert result.output is None
        assert result.evals["suspended"] == Suspended("run-1", (call,), "awaiting_approval")
        assert world.effects == []
    else:
        assert (result.stop_reason, result.output) == ("complete", "done")
        assert "suspended" not in result.evals
        assert world.effects == [(name, dict(call.arguments))]


@pytest.mark.parametrize("autonomy", ["auto", "gated", "manual"])
async def test_if_any_call_of_a_turn_is_gated_no_call_of_that_turn_runs(autonomy: str) -> None:
    world = World()
    turn = (CALLS["lookup"], CALLS["send_email"], CALLS["export_report"])
    llm = FakeLLM.script([Turn(tool_calls=turn), Turn(content="never")])
    ctx = make_test_ctx(llm=llm, autonomy=autonomy, correlation_id="run-1")

    result = await world.agent().run("go", ctx)

    gated = {
        "auto": (CALLS["export_report"],),
        "gated": (CALLS["send_email"], CALLS["export_report"]),
        "manual": turn,
    }[autonomy]
    assert world.effects == []
    assert result.stop_reason == "suspended"
    suspended = result.evals["suspended"]
    assert suspended == Suspended("run-1", gated, "awaiting_approval")
    assert len(llm.requests) == 1
    assert [m.role for m in result.messages] == ["user", "assistant"]


async def test_pending_calls_carry_their_arguments_frozen() -> None:
    world = World()
    nested = ToolCall("c-mail", "send_email", {"to": "a@example.com", "body": "hi"})
    llm = FakeLLM.script([Turn(tool_calls=(nested,))])
    result = await world.agent().run("go", make_test_ctx(llm=llm, autonomy="gated"))

    (pending,) = result.evals["suspended"].pending
    assert pending == nested
    assert isinstance(pending.arguments, FrozenDict)
    with pytest.raises(TypeError):
        pending.arguments["to"] = "mallory@example.com"  # type: ignore[index]
    assert dict(pending.arguments) == {"to": "a@example.com", "body": "hi"}


async def test_an_unknown_tool_is_never_gated_and_becomes_a_repair_turn() -> None:
    world = World()
    ghost = ToolCall("c-ghost", "delete_everything", {})
    llm = FakeLLM.script([Turn(tool_calls=(ghost,)), Turn(content="ok")])
    result = await world.agent().run("go", make_test_ctx(llm=llm, autonomy="manual"))

    assert result.stop_reason == "complete"
    assert llm.requests[1].messages[-1].content == (
        "no tool named 'delete_everything'. "
        "Available tools: ['export_report', 'lookup', 'send_email']"
    )

