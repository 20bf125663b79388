"""What a Temporal run is asked, as in-process: text, or text with media parts, and
model settings. Media crosses Temporal by reference (stored once in the workers' store,
the history holds its key), and the model on the worker gets it whole."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowHistory
from temporalio.worker import Replayer

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.media import File, Image
from agentkit.core.contracts.settings import ModelSettings
from agentkit.core.contracts.types import Message, ToolCall
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.integrations.temporal import (
    AgentWorker,
    TemporalAgents,
    data_converter,
    workflow_runner,
)
from agentkit.integrations.temporal.workflow import AgentWorkflow
from agentkit.state.blobs import blob_key
from agentkit.state.sessions import read_session
from agentkit.state.stores.memory import InMemoryStore
from agentkit.tools import tool
from tests.integrations.temporal.test_payloads import payloads, stored

DEADLINE = 60.0
HISTORIES = Path(__file__).parent / "histories"

PICTURE = Image(random.Random(3).randbytes(300_000), "image/png")
REPORT = File(b"%PDF-1.7\n" + random.Random(4).randbytes(50_000), "application/pdf", "q3.pdf")


@tool(side_effecting=False)
def zoom(region: str) -> str:
    """Describe one region of the picture in more detail, by region name."""
    return f"{region}: a red truck"


def viewer() -> Agent:
    return Agent("viewer", "fake", "You look at pictures.",
                 cognition=ReActCognition([zoom]))


async def test_an_image_and_a_pdf_in_the_task_reach_the_model_whole_and_cross_by_key(
    client: Client, task_queue: str
) -> None:
    llm = FakeLLM.script([Turn(tool_calls=(ToolCall("c1", "zoom", {"region": "dock"}),)),
                          Turn("A red truck at the dock; the report says Q3.")])
    store = InMemoryStore()
    async with AgentWorker(client, task_queue=task_queue, agents=[viewer()],
                           context=lambda: make_test_ctx(llm=llm, store=store)):
        agents = TemporalAgents(client, task_queue=task_queue, store=store)
        result = await asyncio.wait_for(agents.run(
            "viewer", ["What is at the dock?", PICTURE, "And the report?", REPORT],
            run_id="media-in-1"), DEADLINE)
    asked = Message(role="user", content="What is at the dock?\n\nAnd the report?",
                    attachments=(PICTURE, REPORT))
    assert (result.stop_reason, result.output) == (
        "complete", "A red truck at the dock; the report says Q3.")
    # Both model calls, each on the worker, were sent the media whole.
    assert [r.messages[0] for r in llm.requests] == [asked, asked]
    assert result.messages[0] == asked
    # Stored once each, by content; the history names them and holds no copy.
    assert await store.get(blob_key(PICTURE.data)) == PICTURE.data
    assert await store.get(blob_key(REPORT.data)) == REPORT.data
    history = await client.get_workflow_handle("media-in-1").fetch_history()
    assert stored(history) == []
    sizes = [p.ByteSize() for e in history.events for p in payloads(e)]
    assert max(sizes) < 8 * 1024
    assert sum(sizes) < 40 * 1024


async def test_run_settings_reach_the_model_request_over_the_agents_own(
    client: Client, task_queue: str
) -> None:
    llm = FakeLLM.script([Turn("Short.")])
    agent = Agent("brief", "fake", "Be brief.",
                  settings=ModelSettings(temperature=0.9, max_tokens=500))
    async with AgentWorker(client, task_queue=task_queue, agents=[agent],
                           context=lambda: make_test_ctx(llm=llm)):
        agents = TemporalAgents(client, task_queue=task_queue)
        result = await asyncio.wait_for(agents.run(
            "brief", "Say it short", run_id="settings-1",
            settings=ModelSettings(max_tokens=20, stop=("\n",))), DEADLINE)
    assert result.output == "Short."
    assert llm.requests[0].settings == ModelSettings(temperature=0.9, max_tokens=20,
                                                     stop=("\n",))


async def test_a_bad_task_or_settings_is_refused_before_a_run_starts(
    client: Client, task_queue: str
) -> None:
    agents = TemporalAgents(client, task_queue=task_queue)
    with pytest.raises(TypeError) as bad_part:
        await agents.start("viewer", ["look", 42], run_id="bad-input-1")  # type: ignore[list-item]
    assert str(bad_part.value) == ("task part 1 is a int; a task must be a str, or a "
                                   "sequence of str, Image, File and Audio parts")
    with pytest.raises(TypeError) as bad_settings:
        await agents.start("viewer", "look", run_id="bad-input-2",
                           settings={"temperature": 0})  # type: ignore[arg-type]
    assert str(bad_settings.value) == (
        "settings= takes a ModelSettings, got {'temperature': 0}")
    assert [w async for w in client.list_workflows(
        "WorkflowId = 'bad-input-1' OR WorkflowId = 'bad-input-2'")] == []


async def test_a_session_turn_with_media_is_kept_whole_for_the_next_run(
    client: Client, task_queue: str
) -> None:
    llm = FakeLLM.script([Turn("A picture of a truck."), Turn("It was red.")])
    store = InMemoryStore()
    async with AgentWorker(client, task_queue=task_queue, agents=[viewer()],
                           context=lambda: make_test_ctx(llm=llm, store=store)):
        agents = TemporalAgents(client, task_queue=task_queue, store=store)
        await asyncio.wait_for(agents.run("viewer", ["What is this?", PICTURE],
                                          run_id="media-s-1", session="s-media"), DEADLINE)
        await asyncio.wait_for(agents.run("viewer", "What colour was it?",
                                          run_id="media-s-2", session="s-media"), DEADLINE)
    asked = Message(role="user", content="What is this?", attachments=(PICTURE,))
    assert llm.requests[1].messages[0] == asked
    kept = await read_session(store, make_test_ctx().scope, "s-media")
    assert kept[0] == asked


async def test_a_client_without_a_store_sends_small_media_inline(
    client: Client, task_queue: str
) -> None:
    icon = Image(b"\x89PNG\r\n\x1a\n" + bytes(200), "image/png")
    llm = FakeLLM.script([Turn("An icon.")])
    async with AgentWorker(client, task_queue=task_queue, agents=[viewer()],
                           context=lambda: make_test_ctx(llm=llm)):
        agents = TemporalAgents(client, task_queue=task_queue)
        result = await asyncio.wait_for(agents.run("viewer", ["What is this?", icon],
                                                   run_id="media-inline-1"), DEADLINE)
    assert result.output == "An icon."
    assert llm.requests[0].messages[0].attachments == (icon,)


async def test_a_history_with_media_and_settings_replays(
    client: Client, task_queue: str
) -> None:
    """Recorded by this version (media by reference, settings in the start): it must
    replay on later workers too."""
    recorded = HISTORIES / "media_and_settings.json"
    history = WorkflowHistory.from_json("media-and-settings", recorded.read_text())
    store = InMemoryStore()
    replayer = Replayer(workflows=[AgentWorkflow], workflow_runner=workflow_runner(),
                        data_converter=data_converter(store))
    llm = FakeLLM.script([])
    async with AgentWorker(client, task_queue=task_queue, agents=[viewer()],
                           context=lambda: make_test_ctx(llm=llm, store=store)):
        replayed = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert replayed.replay_failure is None


async def test_a_history_recorded_before_media_and_settings_crossed_still_replays(
    client: Client, task_queue: str
) -> None:
    """Recorded by the agentkit before this change (a text task, a session, a wait for
    approval and its resume): workflows started then replay on workers of today."""
    recorded = HISTORIES / "session_before_inputs.json"
    history = WorkflowHistory.from_json("session-before-inputs", recorded.read_text())
    replayer = Replayer(workflows=[AgentWorkflow], workflow_runner=workflow_runner(),
                        data_converter=data_converter(None))

    @tool(side_effecting=True)
    def refund(order_id: str) -> str:
        """Refund a customer order in full and return the confirmation."""
        return f"refunded {order_id}"

    billing = Agent("billing", "fake", "You handle refunds.",
                    cognition=ReActCognition([refund]))
    async with AgentWorker(client, task_queue=task_queue, agents=[billing],
                           context=lambda: make_test_ctx(llm=FakeLLM.script([]))):
        replayed = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert replayed.replay_failure is None
