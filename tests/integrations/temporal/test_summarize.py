"""Summarize on Temporal: the summary's model call is a model activity like the run's
own, and a session's summaries are kept in (and read back from) the workers' store, so
a summarised session goes as it does in-process."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowFailureError, WorkflowHistory
from temporalio.exceptions import ApplicationError
from temporalio.worker import Replayer

from agentkit.agents import Agent, HistoryPolicy, Summarize
from agentkit.core.contracts.errors import ProviderError
from agentkit.core.contracts.types import ChatRequest, LLMResult, StreamEvent
from agentkit.core.policies import Budget, meter
from agentkit.core.runtime.context import RunContext
from agentkit.core.testing import FakeLLM, RecordingTracer, Turn, make_test_ctx
from agentkit.integrations.temporal import AgentWorker, TemporalAgents, workflow_runner
from agentkit.integrations.temporal.workflow import AgentWorkflow
from agentkit.state.sessions import load_summaries, read_session

TASKS = ("Where is order A-1?", "And order B-2?", "What about C-3?", "All sorted, then?")


def script() -> list[Turn]:
    return [
        Turn("Order A-1 shipped on Monday by courier; it should arrive on Thursday."),
        Turn("Order B-2 is packed and leaves the warehouse tomorrow morning."),
        Turn("Order C-3 was refunded in full on the 2nd; the money takes 3 days."),
        Turn("A-1 shipped Monday, due Thursday; B-2 leaves tomorrow."),  # the summary
        Turn("Yes: A-1 and B-2 arrive this week, and C-3 is refunded."),
        Turn("A-1 due Thursday, B-2 leaves tomorrow, C-3 refunded."),  # the next summary
        Turn("You're welcome."),
    ]


def desk() -> Agent:
    return Agent(name="desk", model="fake", prompt="You answer order questions.",
                 history=Summarize(max_tokens=70, keep_last=1, summary_tokens=30))


async def test_a_summarised_session_goes_as_in_process(client: Client, task_queue: str) -> None:
    llm = FakeLLM.script(script())
    tracer = RecordingTracer()
    ctx = make_test_ctx(llm=llm, tracer=tracer)
    async with AgentWorker(client, task_queue=task_queue, agents=[desk()],
                           context=lambda: ctx):
        agents = TemporalAgents(client, task_queue=task_queue)
        remote = [await agents.run("desk", task, run_id=f"sum-{n}", session="chat-7")
                  for n, task in enumerate((*TASKS, "Thanks!"))]
    here = FakeLLM.script(script())
    local_ctx = make_test_ctx(llm=here)
    local = [await desk().run(task, local_ctx, session="chat-7") for task in (*TASKS, "Thanks!")]
    assert [r.messages for r in remote] == [r.messages for r in local]
    assert [r.output for r in remote] == [r.output for r in local]
    assert llm.requests == here.requests  # the summary's call included, where it happens
    assert llm.requests[3].system.startswith("You write the summary")
    # The first summary is kept in the workers' store: the fifth run read it back and
    # summarised only the turn since (one call, not two).
    assert len(llm.requests) == 7
    assert llm.requests[5].messages[0].content.startswith(
        "Summary so far: A-1 shipped Monday, due Thursday; B-2 leaves tomorrow.\nuser: ")
    kept = await load_summaries(ctx.store, ctx.scope, "chat-7", (2,))
    assert kept[2].message.content == (
        "Summary of the earlier conversation:\n"
        "A-1 shipped Monday, due Thursday; B-2 leaves tomorrow.")
    assert await read_session(ctx.store, ctx.scope, "chat-7") == await read_session(
        local_ctx.store, local_ctx.scope, "chat-7")
    # The summary's call is a model activity like the run's own.
    activities = [s.name for s in tracer.spans if s.parent_id is None]
    assert activities.count("temporal.activity model_call fake") == 7


class ByModel:
    """Each request to the FakeLLM of its model id: the agent's and the summariser's."""

    def __init__(self, **models: FakeLLM) -> None:
        self.models = models

    async def chat(self, request: ChatRequest, ctx: RunContext) -> LLMResult:
        return await self.models[request.model].chat(request, ctx)

    def stream(self, request: ChatRequest, ctx: RunContext) -> AsyncIterator[StreamEvent]:
        return self.models[request.model].stream(request, ctx)


TOO_LONG = ProviderError("anthropic: HTTP 400 (context_length): prompt is too long",
                         provider="anthropic", transient=False, status=400,
                         kind="context_length")


async def test_a_context_length_error_compacts_the_history_once_and_asks_again(
    client: Client, task_queue: str
) -> None:
    agent_llm = FakeLLM.script([Turn("a"), Turn("b"), Turn(error=TOO_LONG), Turn("c")])
    summariser = FakeLLM("Said a and b.")
    ctx = make_test_ctx(llm=ByModel(desk=agent_llm, summariser=summariser))
    agent = Agent("desk", "desk", "p", history=Summarize(max_tokens=10_000, model="summariser"))
    async with AgentWorker(client, task_queue=task_queue, agents=[agent],
                           context=lambda: ctx):
        agents = TemporalAgents(client, task_queue=task_queue)
        for n, task in enumerate(("one", "two")):
            await agents.run("desk", task, run_id=f"cl-{n}", session="s")
        result = await agents.run("desk", "three", run_id="cl-2", session="s")
    assert (result.stop_reason, result.output) == ("complete", "c")
    assert [m.content for m in agent_llm.requests[-1].messages] == [
        "Summary of the earlier conversation:\nSaid a and b.", "three",
    ]
    assert [m.content for m in result.messages] == [
        "Summary of the earlier conversation:\nSaid a and b.", "three", "c",
    ]
    assert len(summariser.requests) == 1
    assert len(await read_session(ctx.store, ctx.scope, "s")) == 6
    agent_llm.assert_all_used()


async def test_a_second_context_length_error_fails_the_run_without_retries(
    client: Client, task_queue: str
) -> None:
    agent_llm = FakeLLM.script([Turn("a"), Turn(error=TOO_LONG), Turn(error=TOO_LONG)])
    ctx = make_test_ctx(llm=ByModel(desk=agent_llm, summariser=FakeLLM("Said a.")))
    agent = Agent("desk", "desk", "p", history=Summarize(max_tokens=10_000, model="summariser"))
    async with AgentWorker(client, task_queue=task_queue, agents=[agent],
                           context=lambda: ctx):
        agents = TemporalAgents(client, task_queue=task_queue)
        await agents.run("desk", "one", run_id="cl2-0", session="s")
        with pytest.raises(WorkflowFailureError) as failed:
            await agents.run("desk", "two", run_id="cl2-1", session="s")
    cause = failed.value.cause
    assert isinstance(cause, ApplicationError)
    assert (cause.type, cause.message) == ("ProviderError", f"ProviderError: {TOO_LONG}")
    agent_llm.assert_all_used()  # each refused call was made once


async def test_the_summarys_call_is_charged_to_the_runs_budget(
    client: Client, task_queue: str
) -> None:
    llm = FakeLLM.script(script()[:4])
    ctx = make_test_ctx(llm=llm, budget=Budget(max_calls=1), chat_middleware=[meter()])
    async with AgentWorker(client, task_queue=task_queue, agents=[desk()],
                           context=lambda: ctx):
        agents = TemporalAgents(client, task_queue=task_queue)
        for n, task in enumerate(TASKS[:3]):
            await agents.run("desk", task, run_id=f"b-{n}", session="chat")
        remote = await agents.run("desk", TASKS[3], run_id="b-3", session="chat")
    here = FakeLLM.script(script()[:4])
    store = make_test_ctx().store

    def local() -> RunContext:  # a budget per run, as on Temporal
        return make_test_ctx(llm=here, store=store, budget=Budget(max_calls=1),
                             chat_middleware=[meter()], correlation_id="b-3")

    for task in TASKS[:3]:
        await desk().run(task, local(), session="chat")
    done = await desk().run(TASKS[3], local(), session="chat")
    # The summary took the run's one call: its own model call is refused.
    assert (remote.stop_reason, done.stop_reason) == ("budget_exceeded", "budget_exceeded")
    assert remote.messages == done.messages
    assert remote.evals["error"].message == str(done.evals["error"])
    assert llm.requests == here.requests


async def test_a_history_of_a_summarised_session_run_replays(
    client: Client, task_queue: str
) -> None:
    """Recorded by this version (the fourth run above: its session read, the summary
    looked for, written by a model activity and kept): it must replay on later workers."""
    recorded = Path(__file__).parent / "histories" / "summarised_session.json"
    history = WorkflowHistory.from_json("summarised-session", recorded.read_text())
    replayer = Replayer(workflows=[AgentWorkflow], workflow_runner=workflow_runner())
    async with AgentWorker(client, task_queue=task_queue, agents=[desk()],
                           context=lambda: make_test_ctx(llm=FakeLLM.script([]))):
        replayed = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert replayed.replay_failure is None
    trimming = Agent(name="desk", model="fake", prompt="You answer order questions.",
                     history=HistoryPolicy(max_tokens=70))
    async with AgentWorker(client, task_queue=task_queue, agents=[trimming],
                           context=lambda: make_test_ctx(llm=FakeLLM.script([]))):
        changed = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert changed.replay_failure is not None
