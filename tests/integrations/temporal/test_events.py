"""What one run costs Temporal, on a real dev server: the history events a run writes
are fixed by what the run does, never by when its client happens to ask for the
result; and the payload each activity is sent is what that call needs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from temporalio.api.common.v1 import Payload
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ChatRequest, LLMResult, ToolCall
from agentkit.core.runtime.context import RunContext
from agentkit.core.testing import make_test_ctx
from agentkit.integrations.temporal import AgentWorker, TemporalAgents, workflow_runner
from agentkit.integrations.temporal.workflow import AgentWorkflow
from agentkit.state.codec import loads
from agentkit.tools import tool


@tool(side_effecting=False)
def forecast(city: str) -> str:
    """Return today's weather forecast for a city."""
    return f"{city}: sunny"


class Weather:
    """First turn: one forecast call; then the answer (decided from the transcript, so
    every run of one worker's model behaves alike)."""

    async def chat(self, request: ChatRequest, ctx: RunContext) -> LLMResult:
        results = [m for m in request.messages if m.role == "tool"]
        if not results:
            return LLMResult(content="", tool_calls=(ToolCall("c1", "forecast",
                                                              {"city": "Lisbon"}),))
        return LLMResult(content=results[0].content)

    def stream(self, request: ChatRequest, ctx: RunContext) -> object:
        raise NotImplementedError


agent = Agent("weather", "fake", "You report the weather.",
              cognition=ReActCognition(tools=[forecast]))

TWO_TURNS = [
    "WORKFLOW_EXECUTION_STARTED",
    "WORKFLOW_TASK_SCHEDULED", "WORKFLOW_TASK_STARTED", "WORKFLOW_TASK_COMPLETED",
    "ACTIVITY_TASK_SCHEDULED", "ACTIVITY_TASK_STARTED", "ACTIVITY_TASK_COMPLETED",  # model
    "WORKFLOW_TASK_SCHEDULED", "WORKFLOW_TASK_STARTED", "WORKFLOW_TASK_COMPLETED",
    "ACTIVITY_TASK_SCHEDULED", "ACTIVITY_TASK_STARTED", "ACTIVITY_TASK_COMPLETED",  # tool
    "WORKFLOW_TASK_SCHEDULED", "WORKFLOW_TASK_STARTED", "WORKFLOW_TASK_COMPLETED",
    "ACTIVITY_TASK_SCHEDULED", "ACTIVITY_TASK_STARTED", "ACTIVITY_TASK_COMPLETED",  # model
    "WORKFLOW_TASK_SCHEDULED", "WORKFLOW_TASK_STARTED", "WORKFLOW_TASK_COMPLETED",
    "WORKFLOW_EXECUTION_COMPLETED",
]
"""The 23 events of a bare workflow that runs three activities, one after the other."""


def worker(client: Client, task_queue: str) -> AgentWorker:
    return AgentWorker(client, task_queue=task_queue, agents=[agent],
                       context=lambda: make_test_ctx(llm=Weather()))


async def events(client: Client, run_id: str) -> list[str]:
    history = await client.get_workflow_handle(run_id).fetch_history()
    return [EventType.Name(e.event_type).removeprefix("EVENT_TYPE_") for e in history.events]


async def test_a_two_turn_run_writes_the_same_23_events_every_time(
    client: Client, task_queue: str
) -> None:
    agents = TemporalAgents(client, task_queue=task_queue)
    async with worker(client, task_queue):
        for i in range(6):
            result = await agents.run("weather", "Weather in Lisbon?", run_id=f"events-{i}")
            assert (result.stop_reason, result.output) == ("complete", "Lisbon: sunny")
        # start() and result() apart, as a client that hands the id on does.
        started = await agents.start("weather", "Weather in Lisbon?", run_id="events-apart")
        assert (await agents.result(started)).output == "Lisbon: sunny"
    kinds = [await events(client, f"events-{i}") for i in range(6)]
    assert [len(k) for k in kinds] == [23] * 6
    assert kinds == [TWO_TURNS] * 6
    assert await events(client, "events-apart") == TWO_TURNS



@tool(side_effecting=True, requires_approval=True)
def refund(order_id: str) -> str:
    """Refund a customer order in full and return the confirmation."""
    return f"refunded {order_id}"


class Refunds:
    async def chat(self, request: ChatRequest, ctx: RunContext) -> LLMResult:
        if not any(m.role == "tool" for m in request.messages):
            return LLMResult(content="", tool_calls=(ToolCall("c1", "refund",
                                                              {"order_id": "A-1"}),))
        return LLMResult(content="Refunded A-1.")

    def stream(self, request: ChatRequest, ctx: RunContext) -> object:
        raise NotImplementedError


def billing_agent() -> Agent:
    return Agent("billing", "fake", "You handle refunds.",
                 cognition=ReActCognition(tools=[refund]))


async def test_a_run_that_suspended_before_the_memo_existed_still_replays(
    client: Client, task_queue: str
) -> None:
    """Recorded by the agentkit before the suspension memo (its client waited by
    update): a run then waiting for a person is resumed on workers of today, which
    replay its history up to the wait."""
    recorded = Path(__file__).parent / "histories" / "approval_before_memo.json"
    history = WorkflowHistory.from_json("recorded-before-memo", recorded.read_text())
    assert "WORKFLOW_PROPERTIES_MODIFIED" not in [
        EventType.Name(e.event_type).removeprefix("EVENT_TYPE_") for e in history.events
    ]
    replayer = Replayer(workflows=[AgentWorkflow], workflow_runner=workflow_runner())
    async with AgentWorker(client, task_queue=task_queue, agents=[billing_agent()],
                           context=lambda: make_test_ctx(llm=Refunds())):
        replayed = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert replayed.replay_failure is None


async def test_a_suspended_run_says_so_in_its_history_and_is_answered_by_update(
    client: Client, task_queue: str
) -> None:
    billing = billing_agent()
    agents = TemporalAgents(client, task_queue=task_queue)
    async with AgentWorker(client, task_queue=task_queue, agents=[billing],
                           context=lambda: make_test_ctx(llm=Refunds())):
        held = await agents.run("billing", "Refund A-1", run_id="held")
        assert held.stop_reason == "suspended"
        assert (await agents.result("held")).evals == held.evals
        done = await agents.resume("held", {"c1": "approve"})
    assert done.output == "Refunded A-1."
    wft = ["WORKFLOW_TASK_SCHEDULED", "WORKFLOW_TASK_STARTED", "WORKFLOW_TASK_COMPLETED"]
    activity = ["ACTIVITY_TASK_SCHEDULED", "ACTIVITY_TASK_STARTED", "ACTIVITY_TASK_COMPLETED"]
    update = ["WORKFLOW_EXECUTION_UPDATE_ACCEPTED", "WORKFLOW_EXECUTION_UPDATE_COMPLETED"]
    assert await events(client, "held") == [
        "WORKFLOW_EXECUTION_STARTED", *wft, *activity, *wft,
        # The suspension: the patch (its marker and search attribute), the memo.
        "MARKER_RECORDED", "UPSERT_WORKFLOW_SEARCH_ATTRIBUTES", "WORKFLOW_PROPERTIES_MODIFIED",
        *wft, *update,  # run(): the outcome update, answered at once
        *wft, *update,  # result(): the same
        *wft, "WORKFLOW_EXECUTION_UPDATE_ACCEPTED",  # resume()
        *activity, *wft, *activity, *wft,
        "WORKFLOW_EXECUTION_UPDATE_COMPLETED", "WORKFLOW_EXECUTION_COMPLETED",
    ]


async def test_a_handed_decision_is_one_short_update_and_the_end_is_waited_for_by_close(
    client: Client, task_queue: str
) -> None:
    """How a server decides (``hand`` with the suspension it answers): one update that
    ends as the run takes the decisions; a run that then completes is waited for by its
    close, with no outcome update."""
    billing = billing_agent()
    agents = TemporalAgents(client, task_queue=task_queue)
    async with AgentWorker(client, task_queue=task_queue, agents=[billing],
                           context=lambda: make_test_ctx(llm=Refunds())):
        held = await agents.run("billing", "Refund A-1", run_id="handed")
        assert held.stop_reason == "suspended"
        next_result = await agents.hand("handed", {"c1": "approve"},
                                        at=await agents.suspension("handed"))
        done = await next_result()
    assert done.output == "Refunded A-1."
    wft = ["WORKFLOW_TASK_SCHEDULED", "WORKFLOW_TASK_STARTED", "WORKFLOW_TASK_COMPLETED"]
    activity = ["ACTIVITY_TASK_SCHEDULED", "ACTIVITY_TASK_STARTED", "ACTIVITY_TASK_COMPLETED"]
    update = ["WORKFLOW_EXECUTION_UPDATE_ACCEPTED", "WORKFLOW_EXECUTION_UPDATE_COMPLETED"]
    assert await events(client, "handed") == [
        "WORKFLOW_EXECUTION_STARTED", *wft, *activity, *wft,
        "MARKER_RECORDED", "UPSERT_WORKFLOW_SEARCH_ATTRIBUTES", "WORKFLOW_PROPERTIES_MODIFIED",
        *wft, *update,  # run(): the outcome update, answered at once
        *wft, *update,  # hand(): taken at once
        *activity, *wft, *activity, *wft, "WORKFLOW_EXECUTION_COMPLETED",
    ]


def decoded(payload: Payload, key: str) -> Any:
    """An activity payload's value: the store format's bytes (``binary/plain``), or,
    as earlier versions sent it, its text in a JSON string (``json/plain``)."""
    if payload.metadata["encoding"] == b"json/plain":
        return loads(json.loads(payload.data), key=key)
    assert payload.metadata["encoding"] == b"binary/plain", payload.metadata
    return loads(payload.data, key=key)


async def activity_inputs(client: Client, run_id: str) -> list[tuple[str, int, Any]]:
    """Each activity's name, input bytes and decoded input, in the order scheduled."""
    history = await client.get_workflow_handle(run_id).fetch_history()
    found = []
    for event in history.events:
        if event.HasField("activity_task_scheduled_event_attributes"):
            scheduled = event.activity_task_scheduled_event_attributes
            (payload,) = scheduled.input.payloads
            value = decoded(payload, run_id)
            found.append((scheduled.activity_type.name, payload.ByteSize(), value))
    return found


async def activity_answers(client: Client, run_id: str) -> list[tuple[int, Any]]:
    """Each activity's answer bytes and decoded answer, in the order completed."""
    history = await client.get_workflow_handle(run_id).fetch_history()
    found = []
    for event in history.events:
        if event.HasField("activity_task_completed_event_attributes"):
            (payload,) = event.activity_task_completed_event_attributes.result.payloads
            found.append((payload.ByteSize(), decoded(payload, run_id)))
    return found


async def test_each_activity_is_sent_its_call_not_the_runs_settings_again(
    client: Client, task_queue: str
) -> None:
    agents = TemporalAgents(client, task_queue=task_queue)
    async with worker(client, task_queue):
        result = await agents.run("weather", "Weather in Lisbon?", run_id="sizes")
    call = ToolCall("c1", "forecast", {"city": "Lisbon"})
    inputs = await activity_inputs(client, "sizes")
    # The run's id is the workflow's, its scope, autonomy, ledger and payload limit are
    # the defaults: none is sent. The model is sent the transcript it answers.
    assert [(name, sorted(value)) for name, _, value in inputs] == [
        ("agentkit.model_call", ["agent", "request"]),
        ("agentkit.tool_call", ["agent", "call"]),
        ("agentkit.model_call", ["agent", "request"]),
    ]
    assert inputs[1][2] == {"agent": "weather", "call": call}
    assert [value["request"].messages for _, _, value in (inputs[0], inputs[2])] == [
        result.messages[:1], result.messages[:3]
    ]
    assert [size for _, size, _ in inputs] == [SIZES["model 1"], SIZES["tool"], SIZES["model 2"]]
    answers = await activity_answers(client, "sizes")
    assert [value for _, value in answers] == [
        {"result": LLMResult(content="", tool_calls=(call,))},
        {"content": "Lisbon: sunny"},
        {"result": LLMResult(content="Lisbon: sunny")},
    ]
    assert [size for size, _ in answers] == [SIZES["answer 1"], SIZES["tool answer"],
                                             SIZES["answer 2"]]


SIZES = {"model 1": 504, "tool": 185, "model 2": 791, "answer 1": 229, "tool answer": 78,
         "answer 2": 114}
