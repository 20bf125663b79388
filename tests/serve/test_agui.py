"""AG-UI on the serve app: the official client (``@ag-ui/client``) drives a gated run
through an interrupt and a resume; every event validates against the ``ag-ui-protocol``
package's types; bad input and a missing token are refused with the API's JSON errors."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from ag_ui.core import Event
from node_tools import NodeTools
from pydantic import BaseModel, TypeAdapter

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ToolCall
from agentkit.core.testing import Turn
from agentkit.state.stores.sqlite import SQLiteStore
from agentkit.tools import ask_human
from tests.serve.served import (
    DEADLINE,
    ENGINES,
    TOKENS,
    ByTask,
    Shop,
    apps_on,
    bearer,
    close_store,
    context_for,
    create_app,
    nested_turns,
    refund_turns,
    served,
)

CLIENT = Path(__file__).with_name("agui_client.mjs")
EVENT = TypeAdapter(Event)
ANA = bearer("tok-ana")
APPROVAL_SCHEMA = {"oneOf": [
    {"enum": ["approve", "reject"]},
    {"type": "string", "pattern": "^reject:",
     "description": "reject, with the person's reason after the colon"},
    {"type": "object", "description": "the arguments to run the call with instead"},
]}


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteStore]:
    opened = SQLiteStore(tmp_path / "runs.db")
    yield opened
    await close_store(opened)


def _no_extras(model: BaseModel, where: str) -> None:
    """Every field of ``model`` and of the models inside it is one the protocol names."""
    assert not model.model_extra, f"{where}: fields the protocol does not name: {model.model_extra}"
    for name in type(model).model_fields:
        value = getattr(model, name)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, BaseModel):
                _no_extras(item, f"{where}.{name}")


def validated(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` as the protocol's event type parses it: nothing unknown, nothing lost."""
    event = EVENT.validate_python(data)
    _no_extras(event, data["type"])
    assert event.model_dump(mode="json", by_alias=True) == data
    return data


async def post_sse(http: httpx2.AsyncClient, path: str, body: Any,
                   headers: dict[str, str] = ANA) -> list[dict[str, Any]]:
    """The events of one AG-UI response, each data line validated as a protocol event."""
    events = []
    async with asyncio.timeout(DEADLINE), http.stream(
        "POST", path, json=body, headers={**headers, "accept": "text/event-stream"},
        timeout=DEADLINE,
    ) as response:
        assert response.status_code == 200, await response.aread()
        assert response.headers["content-type"].startswith("text/event-stream")
        async for line in response.aiter_lines():
            if line.startswith("data: "):
                events.append(validated(json.loads(line[6:])))
            else:
                assert line == "", line
    return events


def run_input(thread: str, run: str, say: str, **more: Any) -> dict[str, Any]:
    return {"threadId": thread, "runId": run, "state": {}, "tools": [], "context": [],
            "forwardedProps": {}, "messages": [{"id": f"{run}-u", "role": "user",
                                                "content": say}], **more}


def drive(node_tools: NodeTools, url: str, plan: dict[str, Any]) -> list[dict[str, Any]]:
    """What the official client printed running ``plan`` against ``url``."""
    done = subprocess.run(
        [str(node_tools.node), str(CLIENT), str(node_tools.module("@ag-ui/client")),
         json.dumps({"url": url, **plan})],
        env=node_tools.env, capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    # The client strips, with a warning, whatever the protocol does not describe.
    assert "unrecognised" not in done.stderr, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


_LIVE = {"STEP_STARTED", "STEP_FINISHED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT",
         "TEXT_MESSAGE_END"}


def _steady(events: list[dict[str, Any]]) -> list[str]:
    """The types of ``events`` but a step's, its number's ``STATE_DELTA`` and its
    streamed text: those a Temporal run may not show (its workers see them)."""
    return [e["type"] for e in events if e["type"] not in _LIVE and not (
        e["type"] == "STATE_DELTA" and e["delta"][0]["path"] == "/step")]


def _one(events: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    [event] = [e for e in events if e["type"] == kind]
    return dict(event)


@pytest.mark.parametrize("engine", ENGINES)
async def test_the_official_client_runs_a_gated_call_through_an_interrupt_and_a_resume(
    store: SQLiteStore, node_tools: NodeTools, engine: str, request: pytest.FixtureRequest
) -> None:
    shop = Shop()
    llm = ByTask({"refund A": refund_turns("A", 5)})
    async with apps_on(engine, request, store) as make, served(await make(
        [shop.support], context=context_for(llm, store), auth=TOKENS)
    ) as url:
        plan = {"token": "tok-ana", "threadId": "t1", "runs": [
            {"runId": "r1", "say": "refund A"},
            {"runId": "r2", "resume": {"c1": "yes"}},
            {"runId": "r3", "resume": {"c1": "approve"}},
        ]}
        lines = await asyncio.to_thread(drive, node_tools, f"{url}/v1/agents/support/ag-ui",
                                        plan)
        async with httpx2.AsyncClient(base_url=url) as http:
            record = (await http.get("/v1/runs/r1", headers=ANA)).json()
    for line in lines:
        if "event" in line:
            validated(line["event"])
    runs: list[list[dict[str, Any]]] = [[], [], []]
    ends: list[dict[str, Any]] = []
    errors: dict[int, dict[str, Any]] = {}
    for line in lines:
        if "event" in line:
            runs[line["run"]].append(line["event"])
        elif "error" in line:
            errors[line["run"]] = line
        else:
            ends.append(line)

    # A Temporal run's events are the ones its results show, so there a step, its
    # number and the text streaming in it may be missing (the workers' activities see
    # them); everything else is the same on both engines.
    first = runs[0]
    assert _steady(first) == [
        "RUN_STARTED", "STATE_SNAPSHOT", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END",
        "STATE_DELTA", "RUN_FINISHED"]
    if engine != "temporal":
        assert [e["type"] for e in first] == [
            "RUN_STARTED", "STATE_SNAPSHOT", "STEP_STARTED", "TOOL_CALL_START",
            "TOOL_CALL_ARGS", "TOOL_CALL_END", "STEP_FINISHED", "STATE_DELTA", "STATE_DELTA",
            "RUN_FINISHED"]
    assert first[0] == {"type": "RUN_STARTED", "threadId": "t1", "runId": "r1",
                        "protocolVersion": "1.0", "metadata": {"agentkit": {"run_id": "r1"}}}
    assert first[1]["snapshot"] == {"run_id": "r1", "status": "running", "pending": []}
    assert _one(first, "TOOL_CALL_START") == {
        "type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "refund",
        "parentMessageId": "r1-1"}
    assert json.loads(_one(first, "TOOL_CALL_ARGS")["delta"]) == {"order_id": "A", "usd": 5}
    if engine != "temporal":
        assert first[7]["delta"] == [{"op": "add", "path": "/step", "value": 1}]
    waiting = {"run_id": "r1", "agent": "support", "call_id": "c1", "tool": "refund",
               "arguments": {"order_id": "A", "usd": 5}, "kind": "approval",
               "waits_for": "approval", "asked_by": ["support"]}
    ended = first[-2]
    pending = ended["delta"][1]["value"]
    assert [{k: v for k, v in p.items() if k != "since"} for p in pending] == [waiting]
    assert ended["delta"][0] == {"op": "replace", "path": "/status", "value": "suspended"}
    interrupt = {
        "id": "r1", "reason": "awaiting_approval",
        "message": "run 'r1' waits for a person: refund (c1) waits for approval",
        "toolCallId": "c1",
        "responseSchema": {
            "type": "object", "properties": {"c1": APPROVAL_SCHEMA},
            "additionalProperties": False,
            "description": "decisions by pending call id, as Agent.resume takes them; a "
                           "call left out is rejected",
        },
        "metadata": {"agentkit": {"run_id": "r1", "pending": pending}},
    }
    assert first[-1] == {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1",
                         "outcome": {"type": "interrupt", "interrupts": [interrupt]}}
    assert ends[0]["pendingInterrupts"] == [interrupt]

    # An invalid resume value changes nothing: 422 with the accepted forms, the
    # interrupt still open on the client.
    assert runs[1] == []
    message = ("run 'r1': call 'c1' waits for approval; its decision must be 'approve', "
               "'reject', 'reject: <reason>' or a dict of edited arguments, got 'yes'")
    assert sorted(errors) == [1]
    assert errors[1]["status"] == 422
    assert errors[1]["payload"] == {"error": {
        "type": "invalid_decision", "message": message, "pending": {"c1": "approval"},
        "accepted": {"c1": "'approve', 'reject', 'reject: <reason>' or a dict of edited "
                             "arguments"}}}
    assert ends[1]["pendingInterrupts"] == [interrupt]

    third = runs[2]
    assert _steady(third) == [
        "RUN_STARTED", "STATE_SNAPSHOT", "TOOL_CALL_RESULT", "STATE_DELTA", "RUN_FINISHED"]
    if engine != "temporal":
        assert [e["type"] for e in third] == [
            "RUN_STARTED", "STATE_SNAPSHOT", "TOOL_CALL_RESULT", "STEP_STARTED",
            "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_CONTENT",
            "TEXT_MESSAGE_END", "STEP_FINISHED", "STATE_DELTA", "STATE_DELTA", "RUN_FINISHED"]
    assert third[0]["runId"] == "r3" and third[0]["metadata"] == {"agentkit": {"run_id": "r1"}}
    result = _one(third, "TOOL_CALL_RESULT")
    # Its id numbers the event that brought it: fewer came before it on Temporal.
    mid = result.pop("messageId")
    assert mid.startswith("r3-") if engine == "temporal" else mid == "r3-5"
    assert result == {"type": "TOOL_CALL_RESULT", "toolCallId": "c1",
                      "content": "refunded 5 USD on A", "role": "tool"}
    if engine != "temporal":
        assert "".join(e["delta"] for e in third[5:7]) == "Refunded A."
    assert third[-1] == {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r3",
                         "result": "Refunded A.", "outcome": {"type": "success"}}
    assert ends[2] == {"run": 2, "end": True, "pendingInterrupts": []}
    assert shop.refunds == [("A", 5)]
    assert (record["status"], record["session"]) == ("complete", "t1")
    assert [(d["call_id"], d["decision"], d["by"]) for d in record["decisions"]] == [
        ("c1", "approve", "ana")]


async def test_reasoning_text_and_tool_results_stream_as_protocol_events(
    store: SQLiteStore,
) -> None:
    shop = Shop()
    shop.release.set()
    llm = ByTask({"where is A": [
        Turn(content="Checking.", reasoning="Look it up.",
             tool_calls=(ToolCall("c1", "slow_lookup", {"order_id": "A"}),)),
        Turn(content="Shipped."),
    ]})
    app = create_app([shop.support], context=context_for(llm, store), auth=TOKENS)
    async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
        events = await post_sse(http, "/v1/agents/support/ag-ui",
                                run_input("t2", "r1", "where is A"))
    assert [e["type"] for e in events] == [
        "RUN_STARTED", "STATE_SNAPSHOT", "STEP_STARTED", "REASONING_START",
        "REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END",
        "REASONING_END", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
        "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "STEP_FINISHED", "STATE_DELTA",
        "TOOL_CALL_RESULT", "STEP_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END", "STEP_FINISHED", "STATE_DELTA", "STATE_DELTA", "RUN_FINISHED"]
    assert events[3] == {"type": "REASONING_START", "messageId": "r1-1"}
    assert events[4] == {"type": "REASONING_MESSAGE_START", "messageId": "r1-1",
                         "role": "reasoning"}
    assert events[5]["delta"] == "Look it up."
    # The step's text and its tool call are one assistant message.
    assert events[8] == {"type": "TEXT_MESSAGE_START", "messageId": "r1-2",
                         "role": "assistant"}
    assert events[9]["delta"] == "Checking."
    assert events[11] == {"type": "TOOL_CALL_START", "toolCallId": "c1",
                          "toolCallName": "slow_lookup", "parentMessageId": "r1-2"}
    assert events[16] == {"type": "TOOL_CALL_RESULT", "messageId": "r1-5",
                          "toolCallId": "c1", "content": "shipped", "role": "tool"}
    assert events[18]["messageId"] == "r1-6"
    assert events[-2]["delta"] == [
        {"op": "replace", "path": "/status", "value": "complete"},
        {"op": "replace", "path": "/pending", "value": []}]
    assert events[-1]["result"] == "Shipped."


async def test_a_thread_is_a_session_and_the_endpoint_is_in_the_openapi_document(
    store: SQLiteStore,
) -> None:
    shop = Shop()
    llm = ByTask({"hello": [Turn(content="Hi there."), Turn(content="Again, hi.")]})
    app = create_app([shop.support], context=context_for(llm, store), auth=TOKENS)
    async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
        await post_sse(http, "/v1/agents/support/ag-ui", run_input("t3", "a1", "hello"))
        second = await post_sse(http, "/v1/agents/support/ag-ui",
                                run_input("t3", "a2", "and again?"))
        again = await post_sse(http, "/v1/agents/support/ag-ui",
                               run_input("t3", "a1", "hello"))
        document = (await http.get("/openapi.json")).json()
        runs = (await http.get("/v1/runs?session=t3", headers=ANA)).json()["runs"]
    assert second[-1]["result"] == "Again, hi."
    asked = llm.fakes["hello"].requests[-1].messages
    assert [(m.role, m.content) for m in asked] == [
        ("user", "hello"), ("assistant", "Hi there."), ("user", "and again?")]
    assert sorted(r["run_id"] for r in runs) == ["a1", "a2"]
    # A runId given again starts nothing: its AG-UI run says how that run ended.
    assert [e["type"] for e in again] == [
        "RUN_STARTED", "STATE_SNAPSHOT", "STATE_DELTA", "RUN_FINISHED"]
    assert again[-1]["result"] == "Hi there."
    assert len(llm.fakes["hello"].requests) == 2
    assert list(document["paths"]["/v1/agents/{agent}/ag-ui"]) == ["post"]


async def test_a_malformed_input_is_400_saying_what_was_wrong(store: SQLiteStore) -> None:
    shop = Shop()
    app = create_app([shop.support], context=context_for(ByTask({}), store), auth=TOKENS)
    cases: list[tuple[Any, str]] = [
        ([], "the body must be a JSON object, got list"),
        ({"runId": "r1", "messages": []},
         'RunAgentInput: "threadId" must be a non-empty string, got null'),
        ({"threadId": "t", "runId": "r1", "messages": {"role": "user"}},
         'RunAgentInput: "messages" must be a list of messages, got {"role": "user"}'),
        ({"threadId": "t", "runId": "r1", "messages": [{"id": "m", "role": "robot",
                                                       "content": "hi"}]},
         "RunAgentInput: messages[0] has role 'robot'; a message's role is one of "
         "['activity', 'assistant', 'developer', 'reasoning', 'system', 'tool', 'user']"),
        ({"threadId": "t", "runId": "r1", "messages": []},
         "RunAgentInput: a new run needs the user's message last in \"messages\"; "
         "got no messages"),
        ({"threadId": "t", "runId": "r1", "messages": [
            {"id": "m", "role": "user", "content": [{"type": "image", "source": {}}]}]},
         "RunAgentInput: messages[0]'s content must be text, or a list of text parts "
         '[{"type": "text", "text": "..."}]'),
        ({"threadId": "t", "runId": "r1", "messages": [],
          "resume": [{"interruptId": "r0", "status": "done"}]},
         "RunAgentInput: resume[0] needs \"interruptId\" (a string) and \"status\", "
         "'resolved' or 'cancelled'"),
        ({"threadId": "t", "runId": "r1", "messages": [], "resume": [
            {"interruptId": "r0", "status": "resolved", "payload": "approve"}]},
         "RunAgentInput: resume[0]'s payload must be the decisions by pending call id, as "
         'Agent.resume takes them (e.g. {"c1": "approve"}), got "approve"'),
    ]
    async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
        for body, message in cases:
            answer = await http.post("/v1/agents/support/ag-ui", json=body, headers=ANA)
            assert (answer.status_code, answer.json()) == (
                400, {"error": {"type": "bad_request", "message": message}}), body
        garbled = await http.post("/v1/agents/support/ag-ui", content=b"{", headers=ANA)
        assert garbled.status_code == 400
        assert garbled.json()["error"]["message"].startswith("the body is not JSON: ")
        unknown = await http.post("/v1/agents/nobody/ag-ui", json=run_input("t", "r", "hi"),
                                  headers=ANA)
        assert (unknown.status_code, unknown.json()["error"]["message"]) == (
            404, "no agent named 'nobody' is served here; agents served: ['support']")
        stranger = await http.post("/v1/agents/support/ag-ui", json=run_input(
            "t", "r9", "hi", resume=[{"interruptId": "r0", "status": "resolved",
                                      "payload": {}}]), headers=ANA)
        assert (stranger.status_code, stranger.json()["error"]["message"]) == (
            404, "no run 'r0' is known here")
    assert await store.get_run("r1") is None


async def test_a_resume_on_another_thread_or_of_another_agent_is_refused(
    store: SQLiteStore,
) -> None:
    shop = Shop()
    llm = ByTask({"refund A": refund_turns("A", 5)})
    app = create_app([shop.support, shop.billing], context=context_for(llm, store),
                     auth=TOKENS)
    async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
        events = await post_sse(http, "/v1/agents/support/ag-ui",
                                run_input("t1", "r1", "refund A"))
        assert events[-1]["outcome"]["type"] == "interrupt"
        answer = [{"interruptId": "r1", "status": "resolved", "payload": {"c1": "approve"}}]
        elsewhere = await http.post("/v1/agents/support/ag-ui", headers=ANA, json={
            "threadId": "t2", "runId": "r2", "messages": [], "resume": answer})
        assert (elsewhere.status_code, elsewhere.json()["error"]["message"]) == (
            400, "RunAgentInput: interrupt 'r1' belongs to thread 't1', not to thread 't2'; "
                 "resume it on its own thread")
        other = await http.post("/v1/agents/billing/ag-ui", headers=ANA, json={
            "threadId": "t1", "runId": "r2", "messages": [], "resume": answer})
        assert (other.status_code, other.json()["error"]["message"]) == (
            400, "RunAgentInput: interrupt 'r1' is a run of agent 'support', not of "
                 "'billing'; resume it at /v1/agents/support/ag-ui")
        taken = await http.post("/v1/agents/support/ag-ui", headers=ANA,
                                json=run_input("t2", "r1", "refund A"))
        assert (taken.status_code, taken.json()["error"]["message"]) == (
            409, "run id 'r1' is taken by a run of thread 't1'; choose another runId")
        stranger = await http.post("/v1/agents/support/ag-ui", headers=bearer("tok-other"),
                                   json={"threadId": "t1", "runId": "r2", "messages": [],
                                         "resume": answer})
        assert (stranger.status_code, stranger.json()["error"]["message"]) == (
            404, "no run 'r1' is known here")  # another scope's run, as if it did not exist
        viewer = await http.post("/v1/agents/support/ag-ui", headers=bearer("tok-viewer"),
                                 json={"threadId": "t1", "runId": "r2", "messages": [],
                                       "resume": answer})
        assert (viewer.status_code, viewer.json()["error"]["type"]) == (403, "forbidden")
        # Abandoning the interrupt rejects its calls: the model is told, nothing runs.
        cancelled = await post_sse(http, "/v1/agents/support/ag-ui", {
            "threadId": "t1", "runId": "r3", "messages": [],
            "resume": [{"interruptId": "r1", "status": "cancelled"}]})
    assert cancelled[2]["type"] == "TOOL_CALL_RESULT"
    assert cancelled[-1]["outcome"] == {"type": "success"}
    assert shop.refunds == []


async def test_without_a_token_the_endpoint_is_401_and_starts_nothing(
    store: SQLiteStore,
) -> None:
    shop = Shop()
    app = create_app([shop.support], context=context_for(ByTask({}), store), auth=TOKENS)
    async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
        refused = await http.post("/v1/agents/support/ag-ui", json=run_input("t", "r1", "hi"))
        wrong = await http.post("/v1/agents/support/ag-ui", json=run_input("t", "r1", "hi"),
                                headers=bearer("nope"))
    assert (refused.status_code, refused.json()) == (401, {"error": {
        "type": "unauthorized",
        "message": "missing bearer token: send Authorization: Bearer <token>"}})
    assert (wrong.status_code, wrong.json()["error"]["message"]) == (
        401, "unknown bearer token: send Authorization: Bearer <token>")
    assert await store.get_run("r1") is None


async def test_a_nested_call_and_a_question_are_answered_by_path_id(
    store: SQLiteStore,
) -> None:
    shop = Shop()
    asking = Agent("asking", "fake", "You help.", cognition=ReActCognition([ask_human]))
    llm = ByTask({**nested_turns("C"), "ask me": [
        Turn(tool_calls=(ToolCall("c1", "ask_human", {"question": "Which card?"}),)),
        Turn(content="Noted."),
    ]})
    app = create_app([shop.support, asking], context=context_for(llm, store), auth=TOKENS)
    async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
        nested = await post_sse(http, "/v1/agents/support/ag-ui",
                                run_input("t1", "r1", "delegate C"))
        asked = await post_sse(http, "/v1/agents/asking/ag-ui", run_input("t2", "q1", "ask me"))
        interrupts = [events[-1]["outcome"]["interrupts"][0] for events in (nested, asked)]
        resumed = [await post_sse(http, f"/v1/agents/{agent}/ag-ui", {
            "threadId": thread, "runId": f"{run}-2", "messages": [], "resume": [
                {"interruptId": run, "status": "resolved", "payload": payload}]})
            for agent, thread, run, payload in (
                ("support", "t1", "r1", {"c1/s1": "approve"}),
                ("asking", "t2", "q1", {"c1": {"answer": "the visa"}}))]
    (waiting,) = interrupts[0]["metadata"]["agentkit"]["pending"]
    assert (waiting["call_id"], waiting["tool"], waiting["asked_by"]) == (
        "c1/s1", "refund", ["support", "billing"])
    assert interrupts[0]["message"] == (
        "run 'r1' waits for a person: refund (c1/s1) waits for approval")
    assert "toolCallId" not in interrupts[0]  # the call that waits is the sub-run's
    assert interrupts[0]["responseSchema"]["properties"] == {"c1/s1": APPROVAL_SCHEMA}
    assert interrupts[1]["reason"] == "awaiting_input"
    assert interrupts[1]["message"] == (
        "run 'q1' waits for a person: ask_human (c1) asks the human a question")
    assert interrupts[1]["responseSchema"]["properties"] == {"c1": {
        "type": "object", "required": ["answer"], "properties": {"answer": {"type": "string"}}}}
    assert resumed[0][-1]["result"] == "Billing handled C."
    assert shop.refunds == [("C", 5)]
    assert [e["content"] for e in resumed[1] if e["type"] == "TOOL_CALL_RESULT"] == [
        "the visa"]
    assert resumed[1][-1]["result"] == "Noted."


async def test_a_run_that_fails_ends_with_run_error(store: SQLiteStore) -> None:
    counting = Agent("counter", "fake", "Answer with a number.", output=int,
                     max_output_repairs=0, cognition=ReActCognition([]))
    llm = ByTask({"count": [Turn(content="many")]})
    app = create_app([counting], context=context_for(llm, store), auth=TOKENS)
    async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
        events = await post_sse(http, "/v1/agents/counter/ag-ui", run_input("t1", "r1", "count"))
    assert events[-2]["delta"][0] == {"op": "replace", "path": "/status", "value": "error"}
    assert events[-1] == {"type": "RUN_ERROR", "code": "error", "message": (
        "run 'r1': OutputCoercionError: agent 'counter': the model's answer is not a valid "
        "int after a repair turn: the answer is not valid JSON (Expecting value at position 0)")}


async def test_two_resumes_at_once_have_one_winner_and_the_tool_runs_once(
    store: SQLiteStore,
) -> None:
    shop = Shop()
    llm = ByTask({"refund A": refund_turns("A", 5)})
    app = create_app([shop.support], context=context_for(llm, store), auth=TOKENS)
    async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
        await post_sse(http, "/v1/agents/support/ag-ui", run_input("t1", "r1", "refund A"))
        first, second = await asyncio.gather(*(
            http.post("/v1/agents/support/ag-ui", headers=ANA, timeout=DEADLINE, json={
                "threadId": "t1", "runId": run, "messages": [], "resume": [
                    {"interruptId": "r1", "status": "resolved",
                     "payload": {"c1": "approve"}}]})
            for run in ("r2", "r3")))
    assert sorted([first.status_code, second.status_code]) == [200, 409]
    loser = first if first.status_code == 409 else second
    assert loser.json()["error"]["type"] == "not_resumable"
    winner = second if loser is first else first
    events = [validated(json.loads(line[6:])) for line in winner.text.splitlines()
              if line.startswith("data: ")]
    assert events[-1]["result"] == "Refunded A."
    assert shop.refunds == [("A", 5)]


async def _until_tool_call_end(lines: AsyncIterator[str]) -> list[dict[str, Any]]:
    seen = []
    async for line in lines:
        if line.startswith("data: "):
            seen.append(validated(json.loads(line[6:])))
            if seen[-1]["type"] == "TOOL_CALL_END":
                return seen
    raise AssertionError(f"the stream ended before a tool call: {seen}")


LOOK = {"look": [Turn(tool_calls=(ToolCall("c1", "slow_lookup", {"order_id": "A"}),)),
                 Turn(content="Shipped.")]}


async def test_a_cancelled_run_ends_its_ag_ui_run_with_the_cancelled_outcome(
    store: SQLiteStore,
) -> None:
    shop = Shop()
    app = create_app([shop.support], context=context_for(ByTask(LOOK), store), auth=TOKENS)
    async with served(app) as url, httpx2.AsyncClient(base_url=url) as http, \
            asyncio.timeout(DEADLINE), http.stream(
                "POST", "/v1/agents/support/ag-ui", json=run_input("t1", "r1", "look"),
                headers=ANA, timeout=DEADLINE) as response:
        lines = response.aiter_lines()
        await _until_tool_call_end(lines)
        cancelling = await http.post("/v1/runs/r1/cancel", headers=ANA)
        assert cancelling.status_code == 202
        shop.release.set()
        rest = [validated(json.loads(line[6:])) async for line in lines
                if line.startswith("data: ")]
    assert rest[-2]["delta"][0] == {"op": "replace", "path": "/status", "value": "cancelled"}
    assert rest[-1] == {"type": "RUN_FINISHED", "threadId": "t1", "runId": "r1",
                        "outcome": {"type": "cancelled"}}


async def test_a_client_that_goes_away_leaves_its_run_advancing(store: SQLiteStore) -> None:
    shop = Shop()
    app = create_app([shop.support], context=context_for(ByTask(LOOK), store), auth=TOKENS)
    async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
        async with asyncio.timeout(DEADLINE), http.stream(
            "POST", "/v1/agents/support/ag-ui", json=run_input("t1", "r1", "look"),
            headers=ANA, timeout=DEADLINE,
        ) as response:
            await _until_tool_call_end(response.aiter_lines())
        shop.release.set()
        record = (await http.post("/v1/agents/support/runs", headers=ANA, timeout=DEADLINE,
                                  json={"input": "look", "run_id": "r1", "wait": True})).json()
    assert (record["status"], record["output"]) == ("complete", "Shipped.")
