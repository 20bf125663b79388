"""Many runs at once; a run longer than the continue-as-new threshold; replay of a
recorded history is deterministic (Temporal's Replayer)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ChatRequest, LLMResult, Message, ToolCall
from agentkit.core.runtime.context import RunContext
from agentkit.core.testing import make_test_ctx
from agentkit.integrations.temporal import (
    AgentWorker,
    RunOptions,
    TemporalAgents,
    data_converter,
    workflow_runner,
)
from agentkit.integrations.temporal.workflow import AgentWorkflow
from agentkit.tools import tool


@tool(side_effecting=False)
def count(n: int) -> int:
    """Return the integer that comes right after n."""
    return n + 1


class Counter:
    """A model that counts with the tool up to the number in the task, then answers."""

    async def chat(self, request: ChatRequest, ctx: RunContext) -> LLMResult:
        goal = int(request.messages[0].content)
        results = [m for m in request.messages if m.role == "tool"]
        reached = int(results[-1].content) if results else 0
        if reached >= goal:
            return LLMResult(content=f"counted to {reached}")
        call = ToolCall(f"c{reached}", "count", {"n": reached})
        return LLMResult(content="", tool_calls=(call,))

    def stream(self, request: ChatRequest, ctx: RunContext) -> object:
        raise NotImplementedError


def counter_agent(max_iterations: int = 50) -> Agent:
    return Agent("counter", "count", "Count.",
                 cognition=ReActCognition([count], max_iterations=max_iterations))


def worker(client: Client, task_queue: str, agent: Agent) -> AgentWorker:
    return AgentWorker(client, task_queue=task_queue, agents=[agent],
                       context=lambda: make_test_ctx(llm=Counter()))


def transcript(goal: int) -> tuple[Message, ...]:
    messages = [Message(role="user", content=str(goal))]
    for n in range(goal):
        call = ToolCall(f"c{n}", "count", {"n": n})
        messages.append(Message(role="assistant", content="", tool_calls=(call,)))
        messages.append(Message(role="tool", content=str(n + 1), tool_call_id=call.id,
                                name="count"))
    messages.append(Message(role="assistant", content=f"counted to {goal}"))
    return tuple(messages)


async def test_200_runs_started_at_once_all_complete(client: Client, task_queue: str) -> None:
    agents = TemporalAgents(client, task_queue=task_queue)
    async with worker(client, task_queue, counter_agent()):
        ids = await asyncio.gather(
            *(agents.start("counter", "0", run_id=f"many-{i}") for i in range(200))
        )
        results = await asyncio.gather(*(agents.result(run_id) for run_id in ids))
    assert [r.stop_reason for r in results] == ["complete"] * 200
    assert {r.output for r in results} == {"counted to 0"}
    assert [r.run_id for r in results] == [f"many-{i}" for i in range(200)]


async def test_run_past_continue_as_new_keeps_its_transcript(
    client: Client, task_queue: str
) -> None:
    agents = TemporalAgents(client, task_queue=task_queue,
                            options=RunOptions(continue_as_new_after=3))
    async with worker(client, task_queue, counter_agent()):
        result = await agents.run("counter", "8", run_id="long-run")
    assert result.stop_reason == "complete"
    assert result.output == "counted to 8"
    assert result.steps == 9
    assert result.messages == transcript(8)
    handle = client.get_workflow_handle("long-run")
    runs = [w async for w in client.list_workflows("WorkflowId = 'long-run'")]
    assert len(runs) == 3  # 9 model calls, 3 per workflow history
    assert (await handle.describe()).status.name == "COMPLETED"


async def test_replay_of_a_recorded_history_is_deterministic(
    client: Client, task_queue: str
) -> None:
    agents = TemporalAgents(client, task_queue=task_queue)
    agent = counter_agent()
    async with worker(client, task_queue, agent):
        result = await agents.run("counter", "3", run_id="replayed")
    assert result.messages == transcript(3)
    history = await client.get_workflow_handle("replayed").fetch_history()
    replayer = Replayer(workflows=[AgentWorkflow], workflow_runner=workflow_runner())
    replayed = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert replayed.replay_failure is None

    # The same history against a loop that decides differently is caught.
    async with worker(client, task_queue, counter_agent(max_iterations=2)):
        changed = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert changed.replay_failure is not None
    with pytest.raises(Exception, match=r"[Nn]ondeterminism"):
        await replayer.replay_workflow(history)


async def test_a_history_recorded_before_large_payloads_went_by_key_still_replays(
    client: Client, task_queue: str
) -> None:
    """Recorded by the agentkit before blobs (every payload inline, no limit in a job):
    workflows started then must still replay on workers of today."""
    recorded = Path(__file__).parent / "histories" / "counter_before_blobs.json"
    history = WorkflowHistory.from_json("recorded-before-blobs", recorded.read_text())
    replayer = Replayer(workflows=[AgentWorkflow], workflow_runner=workflow_runner(),
                        data_converter=data_converter(None))
    async with worker(client, task_queue, counter_agent()):
        replayed = await replayer.replay_workflow(history, raise_on_replay_failure=False)
        assert replayed.replay_failure is None
    async with worker(client, task_queue, counter_agent(max_iterations=1)):
        changed = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert changed.replay_failure is not None
