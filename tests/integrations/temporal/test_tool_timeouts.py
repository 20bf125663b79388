"""Tool timeouts on Temporal: enforced inside the activity, with the activity's
start-to-close following the tool's limit; a side-effecting call past it waits for a
person under gated autonomy, as in-process. And what of the run controls a worker does
not host yet."""

from __future__ import annotations

import asyncio

from temporalio.client import Client

from agentkit.agents import Agent, Suspended
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import Message, ToolCall
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.integrations.temporal import AgentWorker, RunOptions, TemporalAgents
from agentkit.tools import tool


async def hang() -> None:
    await asyncio.Event().wait()


async def test_a_read_only_call_past_its_timeout_is_a_tool_error_the_model_reads(
    client: Client, task_queue: str
) -> None:
    @tool(side_effecting=False, timeout=0.2)
    async def lookup(q: str) -> str:
        """Look a question up in the slow knowledge base and return the answer text."""
        await hang()
        return "never"

    call = ToolCall("c1", "lookup", {"q": "x"})
    llm = FakeLLM.script([Turn(tool_calls=(call,)), Turn("It is not answering.")])
    agent = Agent("desk", "fake", "p", cognition=ReActCognition([lookup]))
    async with AgentWorker(client, task_queue=task_queue, agents=[agent],
                           context=lambda: make_test_ctx(llm=llm)):
        result = await TemporalAgents(
            client, task_queue=task_queue, options=RunOptions(heartbeat_timeout=5.0),
        ).run("desk", "go", run_id="run-timeout-read")
        scheduled = [
            e.activity_task_scheduled_event_attributes
            async for e in client.get_workflow_handle("run-timeout-read").fetch_history_events()
            if e.HasField("activity_task_scheduled_event_attributes")
        ]
    assert result.output == "It is not answering."
    assert result.messages[2] == Message(
        "tool", "tool 'lookup' call 'c1' did not finish within its timeout of 0.2s and was "
        "stopped. It is safe to call it again, with the same or a narrower request.",
        tool_call_id="c1", name="lookup", is_error=True,
    )
    tools = [a for a in scheduled if a.activity_type.name == "agentkit.tool_call"]
    assert [a.start_to_close_timeout.ToTimedelta().total_seconds() for a in tools] == [5.2]


async def test_a_side_effecting_call_past_its_timeout_waits_for_a_person_under_gated(
    client: Client, task_queue: str
) -> None:
    @tool(side_effecting=True)
    async def charge(order_id: str) -> str:
        """Charge the customer's card for one order and return the payment id."""
        await hang()
        return "never"

    call = ToolCall("c1", "charge", {"order_id": "A-1"})
    llm = FakeLLM.script([Turn(tool_calls=(call,)), Turn("Not charged again.")])
    agent = Agent("payer", "fake", "p", cognition=ReActCognition([charge]), tool_timeout=0.2)
    agents = TemporalAgents(client, task_queue=task_queue)
    async with AgentWorker(client, task_queue=task_queue, agents=[agent],
                           context=lambda: make_test_ctx(llm=llm)):
        held = await agents.run("payer", "Charge.", run_id="run-timeout-charge",
                                autonomy="gated")
        assert held.evals["suspended"] == Suspended("run-timeout-charge", (call,))
        unknown = await agents.resume("run-timeout-charge", {"c1": "approve"})
        assert unknown.evals["suspended"] == Suspended(
            "run-timeout-charge", (call,), reason="outcome_unknown")
        done = await agents.resume("run-timeout-charge", {"c1": "reject"})
    assert done.output == "Not charged again."
