"""Agent(memory=...) on Temporal: recall runs in an activity on a worker when the run
starts and again when it is resumed, and its notes are in the system prompt of every
model request, as in-process."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ToolCall
from agentkit.core.testing import FakeLLM, RecordingTracer, Turn, make_test_ctx
from agentkit.integrations.temporal import (
    AgentWorker,
    RunOptions,
    TemporalAgents,
    workflow_runner,
)
from agentkit.integrations.temporal.workflow import AgentWorkflow
from agentkit.state.memory import FileMemory, MemoryItem
from agentkit.tools import InMemoryFiles, tool

RECALLED = (
    "Notes recalled from your memory for this task (they may be out of date):\n"
    "<memories>\n"
    '<memory source="/memories/prefs.md">\nThe user drinks green tea.\n</memory>\n'
    "</memories>"
)


class Recorder:
    """A memory source that records its queries and the run each came from."""

    def __init__(self, *items: MemoryItem) -> None:
        self.items = items
        self.queries: list[tuple[str, int, str]] = []

    async def query(self, text: str, k: int, ctx: Any) -> Sequence[MemoryItem]:
        self.queries.append((text, k, ctx.correlation_id))
        return self.items


@tool(side_effecting=False)
def brew(kind: str) -> str:
    """Brew one cup of the named kind of tea and report when it is ready."""
    return f"{kind} ready"


def turns() -> list[Turn]:
    return [Turn(tool_calls=(ToolCall("c1", "brew", {"kind": "green"}),)),
            Turn("Your green tea is ready.")]


def barista() -> Agent:
    notes = FileMemory(InMemoryFiles({
        "/memories/prefs.md": "The user drinks green tea.",
        "/memories/deploys.md": "Deploys need a green CI run.",
    }))
    return Agent("barista", "fake", "You make drinks.", ReActCognition([brew]), memory=notes)


async def test_recalled_notes_are_in_every_request_as_in_process(
    client: Client, task_queue: str
) -> None:
    llm = FakeLLM.script(turns())
    tracer = RecordingTracer()
    async with AgentWorker(client, task_queue=task_queue, agents=[barista()],
                           context=lambda: make_test_ctx(llm=llm, tracer=tracer)):
        remote = await TemporalAgents(client, task_queue=task_queue).run(
            "barista", "Make the user's usual tea", run_id="tea-1")
    here = FakeLLM.script(turns())
    local = await barista().run("Make the user's usual tea",
                                make_test_ctx(llm=here, correlation_id="tea-1"))
    assert remote == local
    assert llm.requests == here.requests
    assert [r.system for r in llm.requests] == ["You make drinks.\n\n" + RECALLED] * 2
    (span,) = tracer.named("temporal.activity recall")
    assert span.attributes["agentkit.run_id"] == "tea-1"


async def test_a_resumed_run_recalls_again(client: Client, task_queue: str) -> None:
    @tool(side_effecting=True)
    def order(kind: str) -> str:
        """Order a box of the named tea from the shop, charged to the team card."""
        return f"ordered {kind}"

    memory = Recorder(MemoryItem("The user drinks green tea.", "/memories/prefs.md"))
    llm = FakeLLM.script([Turn(tool_calls=(ToolCall("c1", "order", {"kind": "green"}),)),
                          Turn(content="Ordered.")])
    agent = Agent("buyer", "fake", "You buy things.", ReActCognition([order]), memory=memory)
    agents = TemporalAgents(client, task_queue=task_queue)
    async with AgentWorker(client, task_queue=task_queue, agents=[agent],
                           context=lambda: make_test_ctx(llm=llm)):
        held = await agents.run("buyer", "Order the user's tea", run_id="tea-2",
                                autonomy="gated")
        assert held.stop_reason == "suspended"
        done = await agents.resume("tea-2", {"c1": "approve"})
    assert done.output == "Ordered."
    assert memory.queries == [("Order the user's tea", 5, "tea-2")] * 2
    assert [r.system for r in llm.requests] == ["You buy things.\n\n" + RECALLED] * 2


async def test_a_run_continued_as_new_keeps_its_recall_without_asking_again(
    client: Client, task_queue: str
) -> None:
    memory = Recorder(MemoryItem("The user drinks green tea.", "/memories/prefs.md"))
    llm = FakeLLM.script(turns())
    agent = Agent("barista", "fake", "You make drinks.", ReActCognition([brew]), memory=memory)
    agents = TemporalAgents(client, task_queue=task_queue,
                            options=RunOptions(continue_as_new_after=1))
    async with AgentWorker(client, task_queue=task_queue, agents=[agent],
                           context=lambda: make_test_ctx(llm=llm)):
        done = await agents.run("barista", "Make the user's usual tea", run_id="tea-3")
    assert done.output == "Your green tea is ready."
    assert len([w async for w in client.list_workflows("WorkflowId = 'tea-3'")]) == 2
    assert memory.queries == [("Make the user's usual tea", 5, "tea-3")]
    assert [r.system for r in llm.requests] == ["You make drinks.\n\n" + RECALLED] * 2


async def test_a_history_with_a_recall_replays(client: Client, task_queue: str) -> None:
    """Recorded by this version (a recall, then a model, a tool and a model call): it
    must replay on later workers too."""
    recorded = Path(__file__).parent / "histories" / "memory.json"
    history = WorkflowHistory.from_json("memory", recorded.read_text())
    replayer = Replayer(workflows=[AgentWorkflow], workflow_runner=workflow_runner())
    async with AgentWorker(client, task_queue=task_queue, agents=[barista()],
                           context=lambda: make_test_ctx(llm=FakeLLM.script([]))):
        replayed = await replayer.replay_workflow(history, raise_on_replay_failure=False)
        assert replayed.replay_failure is None
    forgetful = Agent("barista", "fake", "You make drinks.", ReActCognition([brew]))
    async with AgentWorker(client, task_queue=task_queue, agents=[forgetful],
                           context=lambda: make_test_ctx(llm=FakeLLM.script([]))):
        changed = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert changed.replay_failure is not None
