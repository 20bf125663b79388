"""agentkit's MCP client against the reference servers nobody here wrote:
``@modelcontextprotocol/server-everything`` and ``server-filesystem`` (from npm)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from node_tools import NodeTools

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.media import Image
from agentkit.core.contracts.types import ToolCall
from agentkit.core.policies import audit, tracing
from agentkit.core.testing import FakeLLM, RecordingTracer, Turn, make_test_ctx
from agentkit.integrations.mcp import MCPTool, connect_http, connect_stdio
from agentkit.state.stores.memory import InMemoryStore

from .conftest import free_port, wait_for_port

LIMIT = 60
EVERYTHING = "mcp-servers/everything"
# Arguments for the tools whose required ones have no default; no call reaches the
# network (gzip-file-as-resource is given a data: URL instead of its default web page).
ARGUMENTS: dict[str, dict[str, Any]] = {
    "echo": {"message": "hello"},
    "get-annotated-message": {"messageType": "success", "includeImage": True},
    "get-structured-content": {"location": "Chicago"},
    "get-sum": {"a": 2, "b": 3},
    "gzip-file-as-resource": {"name": "hello.gz", "data": "data:text/plain;base64,aGVsbG8="},
    "trigger-long-running-operation": {"duration": 1, "steps": 2},
    "trigger-sampling-request": {"prompt": "Say hello"},
    "simulate-research-query": {"topic": "tides"},
}
ASKS_A_PERSON = {"trigger-elicitation-request", "trigger-url-elicitation"}


def everything(node_tools: NodeTools) -> list[str]:
    return [str(node_tools.bin("mcp-server-everything"))]


def agent(tools: list[MCPTool]) -> Agent:
    return Agent(name="explorer", model="fake-model", prompt="You try every tool.",
                 cognition=ReActCognition(tools=tools, max_concurrency=4))


def results_by_name(messages: Any) -> dict[str, Any]:
    return {m.name: m for m in messages if m.role == "tool"}


async def call_everything(tools: list[MCPTool]) -> tuple[dict[str, Any], FakeLLM, list[Any]]:
    """One agent turn that calls every tool that does not ask a person."""
    calls = tuple(
        ToolCall(f"c{i}", t.name, ARGUMENTS.get(t.remote_name, {}))
        for i, t in enumerate(tools) if t.remote_name not in ASKS_A_PERSON
    )
    llm = FakeLLM.script([
        Turn(tool_calls=calls),
        Turn(content="Hello from the run's own model."),  # answers the sampling request
        Turn(content="All tools tried."),
    ])
    events: list[Any] = []
    ctx = make_test_ctx(llm=llm)
    ctx.observer = lambda kind, data: events.append((kind, data))
    result = await agent(tools).run("Try every tool.", ctx)
    assert result.output == "All tools tried."
    return results_by_name(result.messages), llm, events


def check_everything_results(results: dict[str, Any], llm: FakeLLM) -> None:
    assert {name: m.is_error for name, m in results.items() if m.is_error} == {}
    assert results["echo"].content == "Echo: hello"
    assert results["get-sum"].content == "The sum of 2 and 3 is 5."
    assert json.loads(results["get-structured-content"].content) == {
        "temperature": 36, "conditions": "Light rain / drizzle", "humidity": 82
    }
    tiny = results["get-tiny-image"]
    assert len(tiny.attachments) == 1 and isinstance(tiny.attachments[0], Image)
    image = tiny.attachments[0]
    assert tiny.content == (
        f"Here's the image you requested:\n[image: image/png, {len(image.data):,} bytes]\n"
        "The image above is the MCP logo."
    )
    assert image.data.startswith(b"\x89PNG")
    annotated = results["get-annotated-message"]
    assert annotated.content.startswith("Operation completed successfully\n[image: image/png, ")
    assert [a.mime_type for a in annotated.attachments] == ["image/png"]
    assert results["trigger-long-running-operation"].content == (
        "Long running operation completed. Duration: 1 seconds, Steps: 2."
    )
    sampled = json.loads(results["trigger-sampling-request"].content.split(":", 1)[1])
    assert sampled == {
        "model": "fake-model", "stopReason": "endTurn", "role": "assistant",
        "content": {"type": "text", "text": "Hello from the run's own model."},
    }
    sampling_request = llm.requests[1]
    assert (sampling_request.model, sampling_request.messages[0].content) == (
        "fake-model", "Resource trigger-sampling-request context: Say hello"
    )
    assert results["gzip-file-as-resource"].content == (
        "[resource link 'hello.gz': demo://resource/session/hello.gz]"
    )
    assert results["get-resource-reference"].content.startswith(
        "Returning resource reference for Resource 1:\n[resource demo://resource/dynamic/text/1]"
        "\nResource 1: This is a plaintext resource created at "
    )
    assert results["simulate-research-query"].content.startswith(
        "# Research Report: tides\n"
    )
    assert max(len(m.content) for m in results.values()) < 3000


async def test_every_server_everything_tool_is_callable_over_stdio(
    node_tools: NodeTools, tmp_path: Path
) -> None:
    async with asyncio.timeout(LIMIT), connect_stdio(
        everything(node_tools), env={"PATH": node_tools.env["PATH"]}, roots=[tmp_path]
    ) as session:
        tools = await session.list_tools()
        results, llm, events = await call_everything(tools)

    assert sorted(t.remote_name for t in tools) == sorted([
        "echo", "get-annotated-message", "get-env", "get-resource-links",
        "get-resource-reference", "get-roots-list", "get-structured-content", "get-sum",
        "get-tiny-image", "gzip-file-as-resource", "simulate-research-query",
        "toggle-simulated-logging", "toggle-subscriber-updates",
        "trigger-elicitation-request", "trigger-long-running-operation",
        "trigger-sampling-request", "trigger-url-elicitation",
    ])
    check_everything_results(results, llm)
    assert results["get-roots-list"].content.startswith(
        f"Current MCP Roots (1 total):\n\n1. {tmp_path.name}\n   URI: {tmp_path.as_uri()}\n"
    )
    progress = [(d["done"], d["total"]) for k, d in events
                if k == "tool.progress" and d["tool"] == "trigger-long-running-operation"]
    assert progress == [(1.0, 2.0), (2.0, 2.0)]
    statuses = [d["message"] for k, d in events
                if k == "tool.progress" and d["tool"] == "simulate-research-query"]
    assert statuses[0] == "Gathering sources..."  # a task's status messages, while polled


@pytest.fixture
def everything_over_http(node_tools: NodeTools) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        [*everything(node_tools), "streamableHttp"],
        env={**node_tools.env, "PORT": str(port)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


async def test_every_server_everything_tool_is_callable_over_http(
    everything_over_http: str,
) -> None:
    async with asyncio.timeout(LIMIT), connect_http(everything_over_http) as session:
        tools = await session.list_tools()
        results, llm, events = await call_everything(tools)

    check_everything_results(results, llm)
    assert "get-roots-list" not in {t.remote_name for t in tools}  # no roots: not declared
    assert [d["done"] for k, d in events if k == "tool.progress"
            and d["tool"] == "trigger-long-running-operation"] == [1.0, 2.0]


async def test_a_servers_question_suspends_the_run_and_the_answer_resumes_it(
    node_tools: NodeTools,
) -> None:
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "trigger-elicitation-request", {}),)),
        Turn(content="Thanks, Ana."),
    ])
    async with asyncio.timeout(LIMIT), connect_stdio(
        everything(node_tools), env={"PATH": node_tools.env["PATH"]}
    ) as session:
        asking = [t for t in await session.list_tools() if t.remote_name in ASKS_A_PERSON]
        ctx = make_test_ctx(llm=llm)
        paused = await agent(asking).run("Sign me up.", ctx)
        suspended = paused.evals["suspended"]
        question = suspended.questions["c1"]
        done = await agent(asking).resume(
            paused.run_id,
            {"c1": {"action": "accept", "content": {"name": "Ana", "check": True}}},
            ctx,
        )

    assert paused.stop_reason == "suspended"
    assert suspended.reason == "awaiting_input"
    assert [c.id for c in suspended.pending] == ["c1"]
    assert question["message"] == "Please provide inputs for the following fields:"
    assert question["tool"] == "trigger-elicitation-request"
    assert question["source"] == f"MCP server {EVERYTHING!r}"
    assert question["schema"]["properties"]["firstLine"]["default"] == (
        "It was a dark and stormy night."
    )
    assert done.output == "Thanks, Ana."
    answer = done.messages[2]
    assert (answer.role, answer.is_error) == ("tool", False)
    assert "✅ User provided the requested information!" in answer.content
    assert '"name": "Ana"' in answer.content
    assert '"firstLine": "It was a dark and stormy night."' in answer.content
    assert '"integer": 42' in answer.content


async def test_a_long_call_reports_progress_and_stops_when_the_run_is_cancelled(
    node_tools: NodeTools,
) -> None:
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "trigger-long-running-operation",
                                  {"duration": 60, "steps": 60}),)),
        Turn(content="unreachable"),
    ])
    async with asyncio.timeout(LIMIT), connect_stdio(
        everything(node_tools), env={"PATH": node_tools.env["PATH"]}
    ) as session:
        tools = await session.list_tools()
        ctx = make_test_ctx(llm=llm)
        seen: list[float] = []

        def observe(kind: str, data: Any) -> None:
            if kind == "tool.progress":
                seen.append(data["done"])
                ctx.cancel.cancel("the user pressed stop")

        ctx.observer = observe
        result = await agent(tools).run("Run the long job.", ctx)
        echoed = await {t.name: t for t in tools}["echo"].run({"message": "still here"},
                                                              make_test_ctx())

    assert result.stop_reason == "cancelled"
    assert seen == [1.0]
    assert echoed == "Echo: still here"


async def test_every_server_filesystem_tool_is_callable_over_stdio(
    node_tools: NodeTools, tmp_path: Path
) -> None:
    root = tmp_path / "work"
    root.mkdir()
    png = b"\x89PNG\r\n\x1a\n" + bytes(300 * 1024)
    (root / "photo.png").write_bytes(png)
    notes, sub = str(root / "notes.txt"), str(root / "sub")

    def turn(*calls: tuple[str, dict[str, Any]]) -> Turn:
        return Turn(tool_calls=tuple(
            ToolCall(f"{name}-{i}", name, args) for i, (name, args) in enumerate(calls)
        ))

    llm = FakeLLM.script([
        turn(("write_file", {"path": notes, "content": "alpha\nbeta\n"}),
             ("create_directory", {"path": sub})),
        turn(("edit_file", {"path": notes, "edits": [{"oldText": "beta", "newText": "gamma"}]}),
             ("read_media_file", {"path": str(root / "photo.png")}),
             ("list_allowed_directories", {})),
        turn(("get_file_info", {"path": notes}),
             ("read_text_file", {"path": notes}),
             ("read_file", {"path": notes, "head": 1}),
             ("read_multiple_files", {"paths": [notes]})),
        turn(("move_file", {"source": notes, "destination": f"{sub}/notes.txt"})),
        turn(("list_directory", {"path": str(root)}),
             ("list_directory_with_sizes", {"path": str(root)}),
             ("directory_tree", {"path": str(root)}),
             ("search_files", {"path": str(root), "pattern": "**/notes.txt"})),
        Turn(content="Filed."),
    ])
    async with asyncio.timeout(LIMIT), connect_stdio(
        [str(node_tools.bin("mcp-server-filesystem")), str(root)],
        env={"PATH": node_tools.env["PATH"]}, roots=[root],
    ) as session:
        tools = await session.list_tools()
        result = await agent(tools).run("File my notes.", make_test_ctx(llm=llm))

    results = results_by_name(result.messages)
    assert result.output == "Filed."
    assert sorted(results) == sorted(t.name for t in tools)
    assert {name: m.content for name, m in results.items() if m.is_error} == {}
    content = {name: json.loads(m.content)["content"] for name, m in results.items()
               if name != "read_media_file"}
    assert content["write_file"] == f"Successfully wrote to {notes}"
    assert content["create_directory"] == f"Successfully created directory {sub}"
    assert content["edit_file"].endswith(" alpha\n-beta\n+gamma\n```\n\n")
    assert content["list_allowed_directories"] == f"Allowed directories:\n{root}"
    assert content["get_file_info"].startswith("size: 12\n")
    assert content["read_text_file"] == "alpha\ngamma\n"
    assert content["read_file"] == "alpha"
    assert content["read_multiple_files"] == f"{notes}:\nalpha\ngamma\n\n"
    assert content["move_file"] == f"Successfully moved {notes} to {sub}/notes.txt"
    assert content["list_directory"] == "[FILE] photo.png\n[DIR] sub"
    assert content["list_directory_with_sizes"].startswith("[FILE] photo.png ")
    assert json.loads(content["directory_tree"]) == [
        {"name": "photo.png", "type": "file"},
        {"name": "sub", "type": "directory", "children": [{"name": "notes.txt", "type": "file"}]},
    ]
    assert content["search_files"] == f"{sub}/notes.txt"
    assert (root / "sub" / "notes.txt").read_text() == "alpha\ngamma\n"
    media = results["read_media_file"]
    assert media.attachments == (Image(png, "image/png"),)
    assert media.content == "[image: image/png, 307,208 bytes]"


async def test_a_question_answered_after_the_session_closed_reruns_the_call(
    node_tools: NodeTools,
) -> None:
    """Resumed where the first session is gone (another process, say), the call is made
    again and the server's repeated question gets the person's answer at once."""
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "trigger-elicitation-request", {}),)),
        Turn(content="Thanks, Rui."),
    ])
    ctx = make_test_ctx(llm=llm)
    command = everything(node_tools)
    async with asyncio.timeout(LIMIT):
        async with connect_stdio(command, env={"PATH": node_tools.env["PATH"]}) as first:
            paused = await agent(await first.list_tools()).run("Sign me up.", ctx)
        async with connect_stdio(command, env={"PATH": node_tools.env["PATH"]}) as second:
            done = await agent(await second.list_tools()).resume(
                paused.run_id, {"c1": {"action": "accept", "content": {"name": "Rui"}}}, ctx
            )

    assert paused.stop_reason == "suspended"
    assert done.output == "Thanks, Rui."
    assert '"name": "Rui"' in done.messages[2].content
    assert '"integer": 42' in done.messages[2].content


async def test_a_declined_question_reaches_the_server_as_declined(
    node_tools: NodeTools,
) -> None:
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "trigger-elicitation-request", {}),)),
        Turn(content="Understood."),
    ])
    ctx = make_test_ctx(llm=llm)
    async with asyncio.timeout(LIMIT), connect_stdio(
        everything(node_tools), env={"PATH": node_tools.env["PATH"]}
    ) as session:
        tools = await session.list_tools()
        paused = await agent(tools).run("Sign me up.", ctx)
        done = await agent(tools).resume(paused.run_id, {"c1": {"action": "decline"}}, ctx)

    assert done.output == "Understood."
    assert "❌ User declined to provide the requested information." in done.messages[2].content


async def test_capabilities_can_be_refused_and_the_tools_needing_them_go(
    node_tools: NodeTools,
) -> None:
    async with asyncio.timeout(LIMIT), connect_stdio(
        everything(node_tools), env={"PATH": node_tools.env["PATH"]},
        sampling=False, elicitation=False,
    ) as session:
        names = {t.remote_name for t in await session.list_tools()}

    assert names & {"trigger-sampling-request", "trigger-elicitation-request",
                    "trigger-url-elicitation", "get-roots-list"} == set()
    assert "echo" in names


async def test_a_servers_question_is_audited_as_suspended_and_traced_without_an_error(
    node_tools: NodeTools,
) -> None:
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "trigger-elicitation-request", {}),)),
        Turn(content="Thanks, Ana."),
    ])
    log, tracer = InMemoryStore(), RecordingTracer()
    async with asyncio.timeout(LIMIT), connect_stdio(
        everything(node_tools), env={"PATH": node_tools.env["PATH"]}
    ) as session:
        asking = [t for t in await session.list_tools() if t.remote_name in ASKS_A_PERSON]
        ctx = make_test_ctx(llm=llm, tracer=tracer, tool_middleware=[tracing(), audit(log)])
        paused = await agent(asking).run("Sign me up.", ctx)
        waiting = [(r.call_id, r.decision, r.error) for r in await log.list("audit")]
        done = await agent(asking).resume(
            paused.run_id,
            {"c1": {"action": "accept", "content": {"name": "Ana", "check": True}}},
            ctx,
        )

    assert paused.stop_reason == "suspended"
    assert waiting == [("c1", "suspended", None)]
    first, second = tracer.named("execute_tool trigger-elicitation-request")
    assert (first.errors, first.attributes["agentkit.waiting"]) == (
        [], "elicitation: Please provide inputs for the following fields:"
    )
    assert "error.type" not in first.attributes
    assert "agentkit.waiting" not in second.attributes
    assert done.output == "Thanks, Ana."
    assert [(r.call_id, r.decision) for r in await log.list("audit")] == [
        ("c1", "suspended"), ("c1", "executed"),
    ]
