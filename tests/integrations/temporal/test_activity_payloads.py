"""Activity inputs and results cross Temporal as the store format's bytes
(``binary/plain``, unescaped), on a real dev server; what earlier versions sent as text
(``json/plain``) is still read: histories recorded before, and activities that a
workflow task of an earlier version scheduled."""

from __future__ import annotations

import asyncio
import json
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any, get_type_hints

from temporalio import workflow
from temporalio.api.common.v1 import Payload
from temporalio.client import Client, WorkflowHistory
from temporalio.converter import DataConverter
from temporalio.worker import Replayer, Worker

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ChatRequest, LLMResult, Message, ToolCall
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.integrations.temporal import (
    AgentWorker,
    TemporalAgents,
    data_converter,
    workflow_runner,
)
from agentkit.integrations.temporal._values import pack, pack_bytes, unpack
from agentkit.integrations.temporal.activities import AgentActivities
from agentkit.integrations.temporal.workflow import MODEL_ACTIVITY, AgentWorkflow, host
from agentkit.state.codec import loads
from agentkit.tools import tool
from tests.integrations.temporal.test_history import counter_agent

DEADLINE = 60.0
HISTORIES = Path(__file__).parent / "histories"


@tool(side_effecting=False)
def forecast(city: str) -> str:
    """Return today's weather forecast for a city."""
    return f"{city}: sunny, 24 C"


def weather_agent() -> Agent:
    return Agent("weather", "fake", "You report the weather.",
                 cognition=ReActCognition([forecast]))


def two_turns() -> FakeLLM:
    call = ToolCall("c1", "forecast", {"city": "Lisbon"})
    return FakeLLM.script([Turn(tool_calls=(call,)), Turn("Sunny in Lisbon.")])


def activity_payloads(history: WorkflowHistory) -> list[tuple[str, str, Payload]]:
    """(activity, "input" or "result", payload) for every activity of a history."""
    names: dict[int, str] = {}
    found: list[tuple[str, str, Payload]] = []
    for event in history.events:
        if event.HasField("activity_task_scheduled_event_attributes"):
            scheduled = event.activity_task_scheduled_event_attributes
            names[event.event_id] = scheduled.activity_type.name
            found += [(scheduled.activity_type.name, "input", p)
                      for p in scheduled.input.payloads]
        if event.HasField("activity_task_completed_event_attributes"):
            done = event.activity_task_completed_event_attributes
            found += [(names[done.scheduled_event_id], "result", p)
                      for p in done.result.payloads]
    return found


async def test_activity_payloads_are_the_store_formats_bytes_unescaped(
    client: Client, task_queue: str
) -> None:
    ctx = make_test_ctx(llm=two_turns())
    async with AgentWorker(client, task_queue=task_queue, agents=[weather_agent()],
                           context=lambda: ctx):
        agents = TemporalAgents(client, task_queue=task_queue, store=ctx.store)
        result = await asyncio.wait_for(agents.run("weather", "Weather in Lisbon?",
                                                   run_id="bytes-1"), DEADLINE)
    assert result.output == "Sunny in Lisbon."
    history = await client.get_workflow_handle("bytes-1").fetch_history()
    found = activity_payloads(history)
    assert [(name, side) for name, side, _ in found] == [
        (MODEL_ACTIVITY, "input"), (MODEL_ACTIVITY, "result"),
        ("agentkit.tool_call", "input"), ("agentkit.tool_call", "result"),
        (MODEL_ACTIVITY, "input"), (MODEL_ACTIVITY, "result"),
    ]
    for name, side, payload in found:
        assert payload.metadata["encoding"] == b"binary/plain", (name, side)
        assert b'\\"' not in payload.data, (name, side)  # no JSON string around the JSON
        loads(payload.data, key=f"{name} {side}")  # the store format itself
    answer = loads(found[-1][2].data, key="last answer")
    assert answer["result"] == LLMResult("Sunny in Lisbon.", model=answer["result"].model,
                                         usage=answer["result"].usage)
    # The workflow's start argument is out of this change: still a JSON string.
    started = history.events[0].workflow_execution_started_event_attributes
    assert started.input.payloads[0].metadata["encoding"] == b"json/plain"


def test_the_recorded_histories_hold_activity_payloads_as_text() -> None:
    """Every history the replay tests replay was recorded when activity inputs and
    results were JSON strings: those tests are the proof that today's workflow code
    reads text results (model, tool, guardrail, recall, session and summary calls)."""
    kinds: set[str] = set()
    for recorded in sorted(HISTORIES.glob("*.json")):
        history = WorkflowHistory.from_json(recorded.stem, recorded.read_text())
        found = activity_payloads(history)
        assert {p.metadata["encoding"] for _, _, p in found} == {b"json/plain"}, recorded
        kinds.update(name for name, side, _ in found if side == "result")
    assert kinds == {MODEL_ACTIVITY, "agentkit.tool_call", "agentkit.guardrail_check",
                     "agentkit.recall", "agentkit.session_load", "agentkit.session_commit",
                     "agentkit.session_summaries"}


async def test_a_history_with_text_activity_results_replays() -> None:
    recorded = HISTORIES / "counter_before_blobs.json"
    history = WorkflowHistory.from_json("recorded-as-text", recorded.read_text())
    host("replay-text-results", {"counter": counter_agent()})
    replayer = Replayer(workflows=[AgentWorkflow], workflow_runner=workflow_runner(),
                        data_converter=data_converter(None))
    replayed = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert replayed.replay_failure is None


@workflow.defn(name="earlier-version-model-call", sandboxed=False)
class EarlierVersionCall:
    """A workflow task of an earlier agentkit: it schedules the model activity with
    its input as text (``json/plain``) and asks for a ``str`` result."""

    @workflow.run
    async def run(self, queue: str, text: str) -> str:
        answer: Any = await workflow.execute_activity(
            MODEL_ACTIVITY, text, result_type=str, task_queue=queue,
            start_to_close_timeout=timedelta(seconds=30))
        # The earlier workflow code read it with the codec's loads, which takes bytes.
        value = unpack(answer, "model answer")
        return f"{type(answer).__name__}:{value['result'].content}"


async def test_an_activity_an_earlier_workflow_task_scheduled_runs_on_this_worker(
    client: Client, task_queue: str
) -> None:
    """Its input arrives as text; the answer it gets back is bytes, which the earlier
    workflow code's ``unpack`` (the codec's ``loads``) read as well."""
    ctx = make_test_ctx(llm=FakeLLM.script([Turn("from the new worker")]))
    request = ChatRequest(model="fake", messages=(Message("user", "hello"),))
    text = pack({"agent": "weather", "request": request})
    old_queue = f"{task_queue}-old"
    async with AgentWorker(client, task_queue=task_queue, agents=[weather_agent()],
                           context=lambda: ctx), \
            Worker(client, task_queue=old_queue, workflows=[EarlierVersionCall]):
        said = await asyncio.wait_for(client.execute_workflow(
            EarlierVersionCall.run, args=[task_queue, text], id=f"old-{uuid.uuid4().hex}",
            task_queue=old_queue), DEADLINE)
    assert said == "bytes:from the new worker"


def test_this_workers_activities_take_text_or_bytes_from_the_default_converter() -> None:
    """Temporal's default converter decodes a ``json/plain`` input to the text and a
    ``binary/plain`` one to the bytes under the activities' ``str | bytes`` hint."""
    converter = DataConverter.default.payload_converter
    for method in (AgentActivities.model_call, AgentActivities.tool_call,
                   AgentActivities.guardrail_check, AgentActivities.recall,
                   AgentActivities.session_load, AgentActivities.session_commit,
                   AgentActivities.session_summaries):
        hints = get_type_hints(method)
        assert (hints["payload"], hints["return"]) == (str | bytes, bytes), method
    value = {"agent": "weather", "task": "x"}
    as_text = converter.to_payloads([pack(value)])
    as_bytes = converter.to_payloads([pack_bytes(value)])
    assert as_text[0].metadata["encoding"] == b"json/plain"
    assert as_bytes[0].metadata["encoding"] == b"binary/plain"
    assert json.loads(as_text[0].data) == pack(value)  # the JSON inside a JSON string
    assert as_bytes[0].data == pack(value).encode("ascii")  # the JSON as it is
    for payloads in (as_text, as_bytes):
        decoded = converter.from_payloads(payloads, [str | bytes])  # type: ignore[list-item]
        assert unpack(decoded[0], "input") == value
    # A worker of the previous version hints its input ``str``; a bytes payload still
    # decodes to the bytes, which its unpack (the codec's loads) read.
    assert unpack(converter.from_payloads(as_bytes, [str])[0], "input") == value
