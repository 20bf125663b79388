"""A resume whose run continues as new (past ``continue_as_new_after`` model calls)
before it suspends again or ends answers with the run's outcome, as any resume does:
the run took the decisions, and the caller is told what came of them."""

from __future__ import annotations

import asyncio
import warnings
from pathlib import Path

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer
from temporalio.workflow import UnfinishedUpdateHandlersWarning

from agentkit import InvalidDecision
from agentkit.agents import Agent, RunNotResumable
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ToolCall
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.integrations.temporal import (
    AgentWorker,
    RunOptions,
    TemporalAgents,
    workflow_runner,
)
from agentkit.integrations.temporal.workflow import AgentWorkflow
from agentkit.tools import tool

HISTORIES = Path(__file__).parent / "histories"
MAIL = ToolCall("c1", "send_email", {"to": "a@example.com"})
ADD = ToolCall("c2", "add", {"a": 2, "b": 3})
AGAIN = ToolCall("c3", "send_email", {"to": "b@example.com"})


def desk(ran: list[str], max_iterations: int = 50) -> Agent:
    @tool(side_effecting=True)
    def send_email(to: str) -> str:
        """Send one email to a single recipient and return the provider message id."""
        ran.append(to)
        return f"sent to {to}"

    @tool(side_effecting=False)
    def add(a: int, b: int) -> int:
        """Add two integers and return their sum."""
        return a + b

    return Agent("desk", "fake", "You help.",
                 cognition=ReActCognition([send_email, add], max_iterations=max_iterations))


def worker(client: Client, task_queue: str, ran: list[str], *turns: Turn) -> AgentWorker:
    llm = FakeLLM.script(turns)
    return AgentWorker(client, task_queue=task_queue, agents=[desk(ran)],
                       context=lambda: make_test_ctx(llm=llm))


async def runs_of(client: Client, run_id: str) -> int:
    return len([w async for w in client.list_workflows(f"WorkflowId = '{run_id}'")])


async def test_a_resume_whose_run_continues_as_new_returns_its_result(
    client: Client, task_queue: str
) -> None:
    ran: list[str] = []
    agents = TemporalAgents(client, task_queue=task_queue,
                            options=RunOptions(continue_as_new_after=2))
    turns = (Turn(tool_calls=(MAIL,)), Turn(tool_calls=(ADD,)), Turn("Sent; 5."))
    async with worker(client, task_queue, ran, *turns):
        held = await agents.run("desk", "Email a, add.", run_id="can-1", autonomy="gated")
        assert held.stop_reason == "suspended"
        # Checked by the shared decision module, as every resume: nothing changes.
        with pytest.raises(InvalidDecision) as bad:
            await agents.resume("can-1", {"c9": "approve"})
        assert str(bad.value) == ("run 'can-1': decisions name call id(s) ['c9'] that are "
                                  "not pending; pending calls: ['c1']")
        done = await asyncio.wait_for(agents.resume("can-1", {"c1": "approve"}), 60)
        # The decision was taken once: a second one for that suspension is refused.
        with pytest.raises(RunNotResumable):
            await agents.resume("can-1", {"c1": "approve"})
    assert (done.stop_reason, done.output, done.steps) == ("complete", "Sent; 5.", 3)
    assert [m.content for m in done.messages if m.role == "tool"] == ["sent to a@example.com",
                                                                      "5"]
    assert ran == ["a@example.com"]
    assert await runs_of(client, "can-1") == 2  # it did continue as new


async def test_a_resume_whose_run_continues_as_new_then_suspends_returns_the_suspension(
    client: Client, task_queue: str
) -> None:
    ran: list[str] = []
    agents = TemporalAgents(client, task_queue=task_queue,
                            options=RunOptions(continue_as_new_after=2))
    turns = (Turn(tool_calls=(MAIL,)), Turn(tool_calls=(ADD,)), Turn(tool_calls=(AGAIN,)),
             Turn("Sent both."))
    async with worker(client, task_queue, ran, *turns):
        await agents.run("desk", "Email a and b.", run_id="can-2", autonomy="gated")
        assert await agents.suspension("can-2") == 1
        # Two deciders of the first suspension at once: one is taken, the other refused.
        decided = await asyncio.wait_for(asyncio.gather(
            *(agents.resume("can-2", {"c1": "approve"}) for _ in range(2)),
            return_exceptions=True), 60)
        [refused] = [d for d in decided if isinstance(d, BaseException)]
        assert isinstance(refused, RunNotResumable)
        [again] = [d for d in decided if not isinstance(d, BaseException)]
        assert again.stop_reason == "suspended"
        assert [c.id for c in again.evals["suspended"].pending] == ["c3"]
        assert (ran, await agents.suspension("can-2")) == (["a@example.com"], 2)
        with pytest.raises(RunNotResumable) as late:
            await agents.hand("can-2", {"c1": "approve"}, at=1)
        assert str(late.value) == (
            "run 'can-2' cannot be resumed: another decision (or a cancel) was accepted "
            "first: the run has left suspension 1 (it waits at suspension 2)")
        done = await asyncio.wait_for(agents.resume("can-2", {"c3": "approve"}), 60)
    assert (done.stop_reason, done.output) == ("complete", "Sent both.")
    assert ran == ["a@example.com", "b@example.com"]
    assert await runs_of(client, "can-2") == 2


def kinds(history: WorkflowHistory) -> list[str]:
    return [EventType.Name(e.event_type).removeprefix("EVENT_TYPE_") for e in history.events]


@pytest.mark.parametrize(("recorded", "answered"), [
    # Recorded by the agentkit before the fix: the resume update was left unfinished at
    # the continue-as-new (the patch guard keeps replaying it so).
    ("resume_continued_before_fix.json", False),
    # Recorded by this version: the update is answered right before the continue.
    ("resume_continued.json", True),
])
async def test_a_history_of_a_resume_that_continued_as_new_replays(
    client: Client, task_queue: str, recorded: str, answered: bool
) -> None:
    """The first workflow run of the scenario of the first test above (the second
    begins with the carried state); each must replay on the workers of today."""
    history = WorkflowHistory.from_json(recorded, (HISTORIES / recorded).read_text())
    ending = ["WORKFLOW_TASK_COMPLETED", "WORKFLOW_EXECUTION_CONTINUED_AS_NEW"]
    if answered:  # the patch (its marker and search attribute), the resume's answer
        ending[1:1] = ["MARKER_RECORDED", "UPSERT_WORKFLOW_SEARCH_ATTRIBUTES",
                       "WORKFLOW_EXECUTION_UPDATE_COMPLETED"]
    assert kinds(history)[-len(ending):] == ending
    replayer = Replayer(workflows=[AgentWorkflow], workflow_runner=workflow_runner())
    async with worker(client, task_queue, []):
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            replayed = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert replayed.replay_failure is None
    # Replayed as recorded: the old history leaves its resume unfinished again.
    left = [w for w in warned if issubclass(w.category, UnfinishedUpdateHandlersWarning)]
    assert bool(left) is not answered
    # A loop that decides differently is caught: the replay does check this history.
    async with AgentWorker(client, task_queue=task_queue, agents=[desk([], 1)],
                           context=make_test_ctx):
        changed = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert changed.replay_failure is not None
