"""Values past Temporal's payload limit on a real dev server: large values are stored
by key in the workers' store and the run completes; a value past the run's own limit is
a permanent, described failure that the client reports, never a retry or a hang."""

from __future__ import annotations

import asyncio
import dataclasses
import random
import zlib
from collections.abc import Sequence
from typing import Any

import pytest
from google.protobuf.message import Message as Proto
from temporalio.api.common.v1 import Payload
from temporalio.client import Client, WorkflowHistory
from temporalio.converter import PayloadCodec
from temporalio.worker import Replayer

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.agents.result import AgentResult
from agentkit.core.contracts.types import Message, ToolCall
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.integrations.temporal import (
    AgentWorker,
    PayloadTooLarge,
    RemoteError,
    RunOptions,
    TemporalAgents,
    data_converter,
    workflow_runner,
)
from agentkit.integrations.temporal.workflow import AgentWorkflow
from agentkit.state.blobs import BlobMissing, blob_key, get_blob, is_blob_key
from agentkit.state.stores.postgres import PostgresStore
from agentkit.tools import tool

DEADLINE = 90.0
"""Seconds a run may take before the test fails instead of hanging (a wedged run never
answers)."""


def page(n: int, size: int) -> str:
    """A tool result of ``size`` characters, distinct per ``n``."""
    head = f"page {n}: "
    return head + "x" * (size - len(head))


class Archive:
    """An agent whose tools return large pages and record every execution."""

    def __init__(self, *turns: Turn, size: int) -> None:
        self.effects: list[str] = []

        @tool(side_effecting=False)
        def read_page(n: int) -> str:
            """Return the full text of one archived page, by page number."""
            self.effects.append(f"read_page {n}")
            return page(n, size)

        @tool(side_effecting=True)
        def export_report(n: int) -> str:
            """Export report number n to the warehouse and return the exported text."""
            self.effects.append(f"export_report {n}")
            return page(n, size)

        self.agent = Agent("archive", "fake", "You read archives.",
                           cognition=ReActCognition([read_page, export_report]))
        self.llm = FakeLLM.script(turns)
        self.ctx = make_test_ctx(llm=self.llm)

    def worker(self, client: Client, task_queue: str) -> AgentWorker:
        return AgentWorker(client, task_queue=task_queue, agents=[self.agent],
                           context=lambda: self.ctx)

    def client(self, client: Client, task_queue: str, **options: Any) -> TemporalAgents:
        return TemporalAgents(client, task_queue=task_queue, store=self.ctx.store,
                              options=RunOptions(**options))


def result_message(call: ToolCall, content: str, *, is_error: bool = False) -> Message:
    return Message(role="tool", content=content, tool_call_id=call.id, name=call.name,
                   is_error=is_error)


async def run(agents: TemporalAgents, task: str, run_id: str) -> AgentResult:
    return await asyncio.wait_for(agents.run("archive", task, run_id=run_id), DEADLINE)


def payloads(message: Proto) -> list[Payload]:
    """Every payload inside a history (or any message of it), in order."""
    if isinstance(message, Payload):
        return [message]
    found: list[Payload] = []
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        if field.message_type.GetOptions().map_entry:
            items = [v for v in value.values() if isinstance(v, Proto)]
        else:
            items = list(value) if field.is_repeated else [value]
        for item in items:
            found.extend(payloads(item))
    return found


def stored(history: WorkflowHistory) -> list[str]:
    """The blob keys a history names (payloads stored by key, not inline)."""
    return [p.metadata["agentkit-blob"].decode() for e in history.events
            for p in payloads(e) if p.metadata.get("encoding") == b"agentkit/blob"]


async def test_three_large_tool_results_then_an_answer_complete(
    client: Client, task_queue: str
) -> None:
    calls = tuple(ToolCall(f"c{n}", "read_page", {"n": n}) for n in (1, 2, 3))
    archive = Archive(Turn(tool_calls=calls), Turn("Read all three."), size=800_000)
    async with archive.worker(client, task_queue):
        result = await run(archive.client(client, task_queue), "Read pages 1-3.", "big-3")
    assert (result.stop_reason, result.output) == ("complete", "Read all three.")
    results = tuple(result_message(c, page(n, 800_000)) for n, c in enumerate(calls, 1))
    # The second model call saw the three whole results (2.4 MB of input).
    assert archive.llm.requests[1].messages[2:] == results
    assert result.messages[2:5] == results
    assert sorted(archive.effects) == ["read_page 1", "read_page 2", "read_page 3"]
    archive.llm.assert_all_used()
    # The history holds keys, not pages: the three tool results, the second model
    # call's input, and the run's result (the workflow's result, which the client
    # reads: no update answers it again).
    history = await client.get_workflow_handle("big-3").fetch_history()
    keys = stored(history)
    assert all(is_blob_key(k) for k in keys)
    assert (len(keys), len(set(keys))) == (5, 5)
    assert max(p.ByteSize() for e in history.events for p in payloads(e)) < 128 * 1024
    # Replay reads the stored payloads back through the same store: deterministic.
    replayer = Replayer(workflows=[AgentWorkflow], workflow_runner=workflow_runner(),
                        data_converter=data_converter(archive.ctx.store))
    replayed = await replayer.replay_workflow(history, raise_on_replay_failure=False)
    assert replayed.replay_failure is None


async def test_small_values_stay_inline(client: Client, task_queue: str) -> None:
    call = ToolCall("c1", "read_page", {"n": 1})
    archive = Archive(Turn(tool_calls=(call,)), Turn("Short."), size=2_000)
    async with archive.worker(client, task_queue):
        result = await run(archive.client(client, task_queue), "Read page 1.", "small")
    assert result.output == "Short."
    history = await client.get_workflow_handle("small").fetch_history()
    assert stored(history) == []


async def test_a_client_without_the_workers_store_is_told_to_give_it(
    client: Client, task_queue: str
) -> None:
    call = ToolCall("c1", "read_page", {"n": 2})
    archive = Archive(Turn(tool_calls=(call,)), Turn("Read."), size=300_000)
    async with archive.worker(client, task_queue):
        agents = TemporalAgents(client, task_queue=task_queue)
        with pytest.raises(BlobMissing) as caught:
            await asyncio.wait_for(agents.run("archive", "Read page 2.", run_id="no-store"),
                                   DEADLINE)
        done = await archive.client(client, task_queue).result("no-store")
    assert str(caught.value) == (
        f"no blob is stored under {caught.value.key!r} in this store; this client has no "
        "store to read it from: give TemporalAgents(..., store=...) the store the workers use"
    )
    assert done.output == "Read."


async def test_a_huge_read_only_result_runs_once_and_the_run_completes(
    client: Client, task_queue: str
) -> None:
    call = ToolCall("c1", "read_page", {"n": 7})
    archive = Archive(Turn(tool_calls=(call,)), Turn("Page 7 is long."), size=3_600_000)
    async with archive.worker(client, task_queue):
        result = await run(archive.client(client, task_queue), "Read page 7.", "big-1")
    assert (result.stop_reason, result.output) == ("complete", "Page 7 is long.")
    assert archive.effects == ["read_page 7"]
    assert archive.llm.requests[1].messages[-1] == result_message(call, page(7, 3_600_000))


async def test_a_side_effecting_call_with_a_huge_result_is_known_to_have_run_once(
    client: Client, task_queue: str
) -> None:
    call = ToolCall("c1", "export_report", {"n": 4})
    archive = Archive(Turn(tool_calls=(call,)), Turn("Exported."), size=3_600_000)
    async with archive.worker(client, task_queue):
        result = await run(archive.client(client, task_queue), "Export report 4.", "big-se")
    assert (result.stop_reason, result.output) == ("complete", "Exported.")
    assert archive.effects == ["export_report 4"]
    # Its outcome is known (its whole result), not "unknown": nobody is asked to re-run it.
    assert result.messages[2] == result_message(call, page(4, 3_600_000))
    assert "suspended" not in result.evals


async def test_a_request_past_the_runs_limit_stops_the_run_with_a_described_error(
    client: Client, task_queue: str
) -> None:
    calls = tuple(ToolCall(f"c{n}", "read_page", {"n": n}) for n in (1, 2, 3))
    archive = Archive(Turn(tool_calls=calls), Turn("never reached"), size=800_000)
    async with archive.worker(client, task_queue):
        agents = archive.client(client, task_queue, max_payload_bytes=2_000_000)
        result = await run(agents, "Read pages 1-3.", "big-limit")
    assert result.stop_reason == "error"
    error = result.evals["error"]
    assert isinstance(error, RemoteError)
    assert error.type_name == "PayloadTooLarge"
    assert error.message == (
        "run 'big-limit': the input of model call 2 is 2,401,361 bytes, over the "
        "2,000,000-byte limit on one value passed through Temporal "
        "(RunOptions.max_payload_bytes); shorten it, or raise the limit"
    )
    assert len(archive.llm.requests) == 1  # the oversized call was never scheduled
    assert sorted(archive.effects) == ["read_page 1", "read_page 2", "read_page 3"]


async def test_a_tool_result_past_the_runs_limit_tells_the_model_it_ran_once(
    client: Client, task_queue: str
) -> None:
    call = ToolCall("c1", "export_report", {"n": 9})
    archive = Archive(Turn(tool_calls=(call,)), Turn("Too big to read."), size=1_500_000)
    async with archive.worker(client, task_queue):
        agents = archive.client(client, task_queue, max_payload_bytes=1_000_000)
        result = await run(agents, "Export report 9.", "big-result")
    assert (result.stop_reason, result.output) == ("complete", "Too big to read.")
    assert archive.effects == ["export_report 9"]
    assert result.messages[2] == result_message(call, (
        "The call to 'export_report' ran once, but its result is 1,500,037 bytes, over "
        "the 1,000,000-byte limit on one value passed through Temporal, so it was "
        "dropped; the call is not run again. Ask for a smaller result (a part, a "
        "summary, or a reference to where it is stored)."
    ), is_error=True)


async def test_a_start_past_the_limit_is_refused_before_the_run_starts(
    client: Client, task_queue: str
) -> None:
    archive = Archive(size=10)
    agents = archive.client(client, task_queue, max_payload_bytes=1_000_000)
    with pytest.raises(PayloadTooLarge) as caught:
        await agents.run("archive", "y" * 1_200_000, run_id="big-start")
    assert (caught.value.run_id, caught.value.limit) == ("big-start", 1_000_000)
    assert str(caught.value) == (
        "run 'big-start': the run's start (task and options) is 1,200,216 bytes, over the "
        "1,000,000-byte limit on one value passed through Temporal "
        "(RunOptions.max_payload_bytes); shorten it, or raise the limit"
    )
    assert [w async for w in client.list_workflows("WorkflowId = 'big-start'")] == []
    # Without the workers' store, a client keeps what it sends inline: past 128 KiB, the
    # run could not even be read back, so it is refused before it starts.
    alone = TemporalAgents(client, task_queue=task_queue)
    with pytest.raises(PayloadTooLarge) as caught:
        await alone.run("archive", "y" * 200_000, run_id="big-alone")
    assert str(caught.value) == (
        "run 'big-alone': the run's start (task and options) is 200,188 bytes, over the "
        "131,072-byte limit on one value passed through Temporal inline, from a client "
        "without a store; give TemporalAgents(..., store=...) the store the workers use, "
        "or shorten it"
    )


async def test_a_model_answer_past_the_runs_limit_stops_the_run(
    client: Client, task_queue: str
) -> None:
    archive = Archive(Turn("z" * 1_200_000), size=10)
    async with archive.worker(client, task_queue):
        agents = archive.client(client, task_queue, max_payload_bytes=1_000_000)
        result = await run(agents, "Say a lot.", "big-answer")
    assert (result.stop_reason, result.output) == ("error", None)
    error = result.evals["error"]
    assert isinstance(error, RemoteError)
    assert (error.type_name, error.message) == ("PayloadTooLarge", (
        "run 'big-answer': the answer of a call to model 'fake' is 1,200,172 bytes, over the "
        "1,000,000-byte limit on one value passed through Temporal "
        "(RunOptions.max_payload_bytes); shorten it, or raise the limit"
    ))


async def test_tool_arguments_past_the_runs_limit_stop_the_run_before_it_runs(
    client: Client, task_queue: str
) -> None:
    # The model's own call crosses in its answer first, so only a person's edit can
    # make a tool call's input the first value past the limit.
    call = ToolCall("c1", "export_report", {"n": 9})
    archive = Archive(Turn(tool_calls=(call,)), Turn("never reached"), size=10)
    async with archive.worker(client, task_queue):
        agents = archive.client(client, task_queue, max_payload_bytes=1_000_000)
        held = await asyncio.wait_for(
            agents.run("archive", "Export.", run_id="big-args", autonomy="gated"), DEADLINE)
        assert held.stop_reason == "suspended"
        result = await asyncio.wait_for(
            agents.resume("big-args", {"c1": {"n": "9" * 1_200_000}}), DEADLINE)
    assert result.stop_reason == "error"
    error = result.evals["error"]
    assert isinstance(error, RemoteError)
    assert (error.type_name, error.message) == ("PayloadTooLarge", (
        "run 'big-args': the input of tool call 'c1' ('export_report') is 2,400,300 bytes, "
        "over the 1,000,000-byte limit on one value passed through Temporal "
        "(RunOptions.max_payload_bytes); shorten it, or raise the limit"
    ))
    assert archive.effects == []


class Zlib(PayloadCodec):
    """A codec a deployment already had (compression here; encryption alike)."""

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [Payload(metadata={"encoding": b"binary/zlib"},
                        data=zlib.compress(p.SerializeToString())) for p in payloads]

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        return [Payload.FromString(zlib.decompress(p.data))
                if p.metadata.get("encoding") == b"binary/zlib" else p for p in payloads]


async def test_a_clients_own_codec_runs_first_so_blobs_hold_what_it_made(
    client: Client, task_queue: str
) -> None:
    config = client.config()
    config["data_converter"] = dataclasses.replace(config["data_converter"],
                                                   payload_codec=Zlib())
    zipped = Client(**config)
    noise = random.Random(7).randbytes(400_000).hex()  # 800 KB, 400 KB zipped

    @tool(side_effecting=False)
    def read_noise() -> str:
        """Return the recorded noise sample as hexadecimal text."""
        return noise

    call = ToolCall("c1", "read_noise", {})
    llm = FakeLLM.script([Turn(tool_calls=(call,)), Turn("Heard it.")])
    ctx = make_test_ctx(llm=llm)
    agent = Agent("archive", "fake", "You listen.", cognition=ReActCognition([read_noise]))
    async with AgentWorker(zipped, task_queue=task_queue, agents=[agent], context=lambda: ctx):
        agents = TemporalAgents(zipped, task_queue=task_queue, store=ctx.store)
        result = await run(agents, "Listen.", "zipped")
    assert result.output == "Heard it."
    assert llm.requests[1].messages[-1] == result_message(call, noise)
    history = await client.get_workflow_handle("zipped").fetch_history()
    keys = stored(history)
    assert keys
    for key in keys:
        blob = Payload.FromString(await get_blob(ctx.store, key))
        assert blob.metadata["encoding"] == b"binary/zlib"


async def test_workers_and_a_client_sharing_postgres_pass_large_values_by_key(
    client: Client, temporal_address: str, task_queue: str, postgres_dsn: str,
    postgres_schema: str,
) -> None:
    """Each worker and the client open their own PostgresStore on one database, as
    separate machines would: a blob one writes, the others read."""
    stores = [PostgresStore(postgres_dsn, schema=postgres_schema, pool_size=2)
              for _ in range(3)]
    calls = tuple(ToolCall(f"c{n}", "read_page", {"n": n}) for n in (1, 2, 3))
    archive = Archive(Turn(tool_calls=calls), Turn("Read all three."), size=800_000)
    try:
        # Two connections: one process may run one worker per queue and connection.
        workers = [AgentWorker(c, task_queue=task_queue, agents=[archive.agent],
                               context=lambda s=s: make_test_ctx(llm=archive.llm, store=s))
                   for c, s in zip([client, await Client.connect(temporal_address)],
                                   stores[:2], strict=True)]
        async with workers[0], workers[1]:
            agents = TemporalAgents(client, task_queue=task_queue, store=stores[2])
            result = await run(agents, "Read pages 1-3.", "shared")
    finally:
        for store in stores:
            await store.close()
    assert result.output == "Read all three."
    assert result.messages[2:5] == tuple(
        result_message(c, page(n, 800_000)) for n, c in enumerate(calls, 1)
    )


async def test_a_reference_without_a_key_is_refused_by_name() -> None:
    codec = data_converter(make_test_ctx().store).payload_codec
    assert codec is not None
    broken = Payload(metadata={"encoding": b"agentkit/blob"})
    with pytest.raises(ValueError) as caught:
        await codec.decode([broken])
    assert str(caught.value) == (
        "'' is not a blob key; blob keys are 'blob:sha256:' followed by 64 lowercase hex "
        "digits"
    )


async def test_an_image_a_tool_returns_is_stored_once_and_reaches_each_later_model_call(
    client: Client, task_queue: str
) -> None:
    """A tool's media cross Temporal by reference: stored once in the workers' store,
    the history holds its key (in the answer and in every later model call's input,
    never the bytes), and the model's next request gets the image whole."""
    from agentkit.core.contracts.media import Image

    picture = Image(random.Random(7).randbytes(1_000_000), "image/png")

    @tool(side_effecting=False)
    def snapshot(camera: str) -> Image:
        """Take a still picture with the named camera and return it as a PNG image."""
        return picture

    agent = Agent("archive", "fake", "You look at cameras.",
                  cognition=ReActCognition([snapshot]))
    call = ToolCall("c1", "snapshot", {"camera": "dock"})
    again = ToolCall("c2", "snapshot", {"camera": "gate"})
    llm = FakeLLM.script([Turn(tool_calls=(call,)), Turn(tool_calls=(again,)),
                          Turn("A truck at the dock.")])
    ctx = make_test_ctx(llm=llm)
    async with AgentWorker(client, task_queue=task_queue, agents=[agent],
                           context=lambda: ctx):
        agents = TemporalAgents(client, task_queue=task_queue, store=ctx.store)
        result = await run(agents, "What is at the dock?", "media-1")
    assert (result.stop_reason, result.output) == ("complete", "A truck at the dock.")
    seen = llm.requests[2].messages
    assert [(m.tool_call_id, m.attachments) for m in seen if m.role == "tool"] == [
        ("c1", (picture,)), ("c2", (picture,))]
    assert result.messages[2].attachments == (picture,)
    assert await ctx.store.get(blob_key(picture.data)) == picture.data
    history = await client.get_workflow_handle("media-1").fetch_history()
    assert stored(history) == []
    assert max(p.ByteSize() for e in history.events for p in payloads(e)) < 8 * 1024
