"""Decisions on Temporal are checked by the same module as in-process: the same
InvalidDecision text, and every kind of decision reaches its call."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from temporalio.client import Client

from agentkit import InvalidDecision
from agentkit.agents import Agent, RunNotResumable
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ToolCall
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.integrations.temporal import AgentWorker, TemporalAgents
from agentkit.tools import ask_human, tool

MAIL = ToolCall("c1", "send_email", {"to": "a@example.com"})
ASK = ToolCall("c2", "ask_human", {"question": "Which city?"})
TURNS = (Turn(tool_calls=(MAIL, ASK)), Turn("Sent, and noted Braga."))


def desk(ran: list[str]) -> Agent:
    @tool(side_effecting=True)
    def send_email(to: str) -> str:
        """Send one email to a single recipient and return the provider message id."""
        ran.append(to)
        return f"sent to {to}"

    return Agent("desk", "fake", "You help.",
                 cognition=ReActCognition([send_email, ask_human]))


async def refusal_in_process(decisions: dict[str, Any]) -> str:
    ctx = make_test_ctx(llm=FakeLLM.script(TURNS), autonomy="gated", correlation_id="run-dq")
    agent = desk([])
    await agent.run("Email a.", ctx)
    with pytest.raises(InvalidDecision) as info:
        await agent.resume("run-dq", decisions, ctx)
    return str(info.value)


async def test_temporal_refuses_each_bad_decision_with_the_in_process_text(
    client: Client, task_queue: str
) -> None:
    ran: list[str] = []
    agent = desk(ran)
    agents = TemporalAgents(client, task_queue=task_queue)
    bad = [{"c1": "yes"}, {"c2": "approve"}, {"c9": "approve"}]
    async with AgentWorker(client, task_queue=task_queue, agents=[agent],
                           context=lambda: make_test_ctx(llm=FakeLLM.script(TURNS))):
        held = await agents.run("desk", "Email a.", run_id="run-dq", autonomy="gated")
        assert held.suspended is not None
        assert dict(held.suspended.kinds) == {"c1": "approval", "c2": "input"}
        for decisions in bad:
            with pytest.raises(InvalidDecision) as info:
                await agents.resume("run-dq", decisions)
            assert str(info.value) == await refusal_in_process(decisions)
            assert info.value.pending == {"c1": "approval", "c2": "input"}
        done = await agents.resume(
            "run-dq", {"c1": {"to": "b@example.com"}, "c2": {"answer": "Braga"}}
        )
    assert done.output == "Sent, and noted Braga."
    assert [m.content for m in done.messages if m.role == "tool"] == [
        "(A human edited the arguments before approving: {'to': 'b@example.com'})\n"
        "sent to b@example.com",
        "Braga",
    ]
    assert ran == ["b@example.com"]


async def test_a_decision_for_a_suspension_the_run_has_left_is_refused(
    client: Client, task_queue: str
) -> None:
    """A decision handed with the suspension it answers (``at``) reaches that
    suspension or none: a late one is refused even when its call ids fit the next."""
    ran: list[str] = []
    again = (Turn(tool_calls=(MAIL,)), Turn(tool_calls=(MAIL,)), Turn("Sent twice."))
    agents = TemporalAgents(client, task_queue=task_queue)
    async with AgentWorker(client, task_queue=task_queue, agents=[desk(ran)],
                           context=lambda: make_test_ctx(llm=FakeLLM.script(again))):
        await agents.run("desk", "Email a twice.", run_id="run-at", autonomy="gated")
        first = await agents.suspension("run-at")
        assert first == 1
        # Two deciders of the same suspension at once: the run takes one.
        handed = await asyncio.gather(
            *(agents.hand("run-at", {"c1": "approve"}, at=first) for _ in range(2)),
            return_exceptions=True)
        [refused] = [h for h in handed if isinstance(h, BaseException)]
        assert isinstance(refused, RunNotResumable)
        [next_result] = [h for h in handed if not isinstance(h, BaseException)]
        assert (await next_result()).stop_reason == "suspended"
        assert (ran, await agents.suspension("run-at")) == (["a@example.com"], 2)
        with pytest.raises(RunNotResumable) as late:
            await agents.hand("run-at", {"c1": "approve"}, at=first)
        assert str(late.value) == (
            "run 'run-at' cannot be resumed: another decision (or a cancel) was accepted "
            "first: the run has left suspension 1 (it waits at suspension 2)")
        done = await (await agents.hand("run-at", {"c1": "approve"}, at=2))()
    assert (done.output, ran) == ("Sent twice.", ["a@example.com", "a@example.com"])
