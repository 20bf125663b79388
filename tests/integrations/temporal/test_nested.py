"""Nested approval on Temporal: a sub-agent delegated by a tool inside a tool activity
that must ask a person suspends the Temporal run with the same path ids as in-process;
``pending()`` shows them, and ``resume()`` continues the sub-run from its checkpoint in
the worker's store. The same for ``ask_human`` deep inside and for a tool's question
mid-call (an MCP server's elicitation). Every tool body runs once."""

from __future__ import annotations

from typing import Any

import pytest
from temporalio.client import Client

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.errors import HumanInputRequired
from agentkit.core.contracts.types import ToolCall
from agentkit.core.runtime.current_call import current_call
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.integrations.temporal import AgentWorker, TemporalAgents
from agentkit.tools import as_tool, ask_human, tool

NOT_APPROVED = (
    "The call to 'refund' was not approved by a human, so it did not run. "
    "Do not retry it unchanged; continue without it or ask differently."
)


class Chain:
    """support delegates to billing, billing to ledger (each as a tool); ledger refunds
    (a refund needs approval) and may ask a person. ``ran`` counts every body run."""

    def __init__(self, *turns: Turn) -> None:
        self.ran: list[tuple[str, Any]] = []

        @tool(side_effecting=True, requires_approval=True)
        def refund(order_id: str) -> str:
            """Issue a refund against a customer order and return the confirmation."""
            self.ran.append(("refund", order_id))
            return f"refunded {order_id}"

        def delegate(agent: Agent, what: str) -> Any:
            return as_tool(agent, name=agent.name, side_effecting=False,
                           description=f"Ask {what} to handle it and report back.")

        ledger = Agent("ledger", "fake", "You keep the ledger.",
                       cognition=ReActCognition([refund, ask_human]))
        billing = Agent("billing", "fake", "You do billing.",
                        cognition=ReActCognition([delegate(ledger, "the ledger keeper")]))
        self.support = Agent("support", "fake", "You help.",
                             cognition=ReActCognition([delegate(billing, "the billing team")]))
        self.llm = FakeLLM.script(turns)

    def worker(self, client: Client, task_queue: str) -> AgentWorker:
        return AgentWorker(client, task_queue=task_queue, agents=[self.support],
                           context=lambda: make_test_ctx(llm=self.llm))


def chain_turns(deepest: ToolCall, ledger_answer: str) -> list[Turn]:
    """support -> billing -> ledger, which makes ``deepest``; then each answers up."""
    return [
        Turn(tool_calls=(ToolCall("c1", "billing", {"task": "refund A-1"}),)),
        Turn(tool_calls=(ToolCall("s1", "ledger", {"task": "refund A-1 in the ledger"}),)),
        Turn(tool_calls=(deepest,)),
        Turn(content=ledger_answer),
        Turn(content=f"billing: {ledger_answer}"),
        Turn(content=f"support: {ledger_answer}"),
    ]


REFUND = ToolCall("t1", "refund", {"order_id": "A-1"})


@pytest.mark.parametrize(("decision", "ran", "read"), [
    ("approve", [("refund", "A-1")], "refunded A-1"),
    ("reject", [], NOT_APPROVED),
])
async def test_approval_two_runs_down_suspends_and_resumes_the_temporal_run(
    client: Client, task_queue: str, decision: str, ran: list[Any], read: str
) -> None:
    chain = Chain(*chain_turns(REFUND, "done"))
    agents = TemporalAgents(client, task_queue=task_queue)
    async with chain.worker(client, task_queue):
        held = await agents.run("support", "refund A-1", run_id=f"run-n-{decision}")
        waiting = await agents.pending(f"run-n-{decision}")
        assert held.suspended == waiting
        assert waiting is not None
        assert waiting.pending == (ToolCall("c1/s1/t1", "refund", {"order_id": "A-1"}),)
        assert (waiting.reason, dict(waiting.kinds)) == (
            "awaiting_approval", {"c1/s1/t1": "approval"}
        )
        assert dict(waiting.agents) == {"c1/s1/t1": ("support", "billing", "ledger")}
        assert chain.ran == []

        done = await agents.resume(f"run-n-{decision}", {"c1/s1/t1": decision})

    assert done.output == "support: done"
    assert chain.ran == ran
    ledger_request = chain.llm.requests[3]
    (result,) = [m for m in ledger_request.messages if m.tool_call_id == "t1"]
    assert result.content == read
    assert [m.content for m in done.messages if m.role == "tool"] == ["billing: done"]
    chain.llm.assert_all_used()


@pytest.mark.parametrize(("decision", "read"), [
    ({"answer": "the red box"}, "the red box"),
    (None, "The human gave no answer to this question."),
])
async def test_ask_human_two_runs_down_waits_for_the_answer_on_temporal(
    client: Client, task_queue: str, decision: Any, read: str
) -> None:
    ask = ToolCall("t1", "ask_human", {"question": "Which box?"})
    chain = Chain(*chain_turns(ask, "noted"))
    agents = TemporalAgents(client, task_queue=task_queue)
    async with chain.worker(client, task_queue):
        held = await agents.run("support", "refund A-1", run_id="run-ask")
        assert held.suspended is not None
        assert (held.suspended.reason, dict(held.suspended.kinds)) == (
            "awaiting_input", {"c1/s1/t1": "input"}
        )
        given = {} if decision is None else {"c1/s1/t1": decision}
        if decision is None:
            # No decision at all for a sub-run: it stays suspended, and so does the run.
            again = await agents.resume("run-ask", given)
            assert again.suspended == held.suspended
            given = {"c1/s1/t1": {"answer": "the red box"}}
            read = "the red box"
        done = await agents.resume("run-ask", given)

    assert done.output == "support: noted"
    (result,) = [m for m in chain.llm.requests[3].messages if m.tool_call_id == "t1"]
    assert result.content == read
    chain.llm.assert_all_used()


async def test_a_tools_question_mid_call_on_temporal_suspends_and_the_answer_reruns_it(
    client: Client, task_queue: str
) -> None:
    asked: list[str] = []
    shipped: list[str] = []

    @tool(side_effecting=False)
    async def ship(parcel: str) -> str:
        """Ship a parcel; asks the person where to when it does not know."""
        call = current_call.get()
        answer = None if call is None else call.answers.get("Where to?")
        if answer is None:
            asked.append(parcel)
            raise HumanInputRequired("ship", "Where to?", None, "the courier")
        shipped.append(answer["answer"])
        return f"{parcel} shipped to {answer['answer']}"

    agent = Agent("post", "fake", "You ship.", cognition=ReActCognition([ship]))
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "ship", {"parcel": "box"}),)),
        Turn(content="Shipped to Braga."),
    ])
    agents = TemporalAgents(client, task_queue=task_queue)
    async with AgentWorker(client, task_queue=task_queue, agents=[agent],
                           context=lambda: make_test_ctx(llm=llm)):
        held = await agents.run("post", "ship the box", run_id="run-elicit")
        waiting = await agents.pending("run-elicit")
        assert waiting is not None and held.suspended == waiting
        assert (waiting.reason, dict(waiting.kinds)) == ("awaiting_input", {"c1": "elicitation"})
        assert dict(waiting.questions["c1"]) == {
            "message": "Where to?", "schema": None, "tool": "ship", "source": "the courier",
            "answers": {},
        }
        done = await agents.resume("run-elicit", {"c1": {"answer": "Braga"}})

    assert done.output == "Shipped to Braga."
    assert (asked, shipped) == (["box"], ["Braga"])
    assert [m.content for m in done.messages if m.role == "tool"] == ["box shipped to Braga"]
