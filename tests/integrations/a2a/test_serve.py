"""The official ``a2a-sdk`` client against agentkit's served agents on a real uvicorn
server: card, send, stream, get, cancel, resubscribe, input-required with approval,
auth."""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from a2a.client import A2AClientError, ClientConfig, create_client
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    GetExtendedAgentCardRequest,
    GetTaskRequest,
    InvalidParamsError,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    SubscribeToTaskRequest,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from google.protobuf.json_format import MessageToDict, ParseDict
from google.protobuf.struct_pb2 import Value

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.media import File, Image
from agentkit.core.contracts.types import ChatRequest, LLMResult, StreamEvent, ToolCall
from agentkit.core.runtime import RunContext
from agentkit.core.testing import Turn
from agentkit.state.stores import InMemoryStore
from agentkit.tools import ask_human, tool
from tests.serve.served import (
    DEADLINE,
    ENGINES,
    TOKENS,
    ByTask,
    Shop,
    apps_on,
    context_for,
    served,
)

ANA = {"authorization": "Bearer tok-ana"}


def text_message(text: str, **ids: str) -> SendMessageRequest:
    message = Message(message_id=f"m-{text}", role=Role.ROLE_USER, parts=[Part(text=text)],
                      **ids)
    return SendMessageRequest(message=message)


def decision_message(task_id: str, context_id: str,
                     decisions: dict[str, Any]) -> SendMessageRequest:
    data = ParseDict({"decisions": decisions}, Value())
    message = Message(message_id=f"m-decide-{task_id}", role=Role.ROLE_USER, task_id=task_id,
                      context_id=context_id, parts=[Part(data=data)])
    return SendMessageRequest(message=message)


def history_message(task: dict[str, Any], index: int, role: str,
                    *parts: dict[str, Any]) -> dict[str, Any]:
    """The message at ``index`` of a task's history, as the server shows it."""
    return {"messageId": f"{task['id']}:history:{index}", "role": role,
            "taskId": task["id"], "contextId": task["contextId"], "parts": list(parts)}


class Watch:
    """An agent whose tool works until its run is cancelled, as a long job would."""

    def __init__(self) -> None:
        self.started = asyncio.Event()

        @tool(side_effecting=False)
        async def watch(order_id: str, ctx: RunContext) -> str:
            """Watch an order's shipment until told to stop."""
            self.started.set()
            while not ctx.cancel.cancelled:  # the token has no awaitable: look, briefly
                await asyncio.sleep(0.01)
            return "stopped watching"

        self.agent = Agent("watcher", "fake", "You watch.", cognition=ReActCognition([watch]))


@dataclass
class Quote:
    order: str
    usd: int


HELPDESK = Agent("helpdesk", "fake", "You ask.", cognition=ReActCognition([ask_human]))
QUOTER = Agent("quoter", "fake", "You quote.", output=Quote)


@pytest.fixture
def shop() -> Shop:
    return Shop()


@pytest.fixture
def watch() -> Watch:
    return Watch()


@pytest.fixture
async def base(shop: Shop, watch: Watch, engine: str, request: pytest.FixtureRequest
               ) -> AsyncIterator[str]:
    llm = ByTask({
        "refund A": [Turn(tool_calls=(ToolCall("c1", "refund", {"order_id": "A", "usd": 10}),)),
                     Turn(content="Refunded A.")],
        "hi": [Turn(content="Hello there!")],
        "watch A": [Turn(tool_calls=(ToolCall("c1", "watch", {"order_id": "A"}),)),
                    Turn(content="never")],
        "help me": [Turn(tool_calls=(ToolCall("q1", "ask_human",
                                              {"question": "Which order?"}),)),
                    Turn(content="Looking at that order.")],
        "quote A": [Turn(content='{"order": "A", "usd": 3}')],
    })
    store = InMemoryStore()
    async with apps_on(engine, request, store) as make:
        app = await make([shop.support, watch.agent, HELPDESK, QUOTER],
                         context=context_for(llm, store), auth=TOKENS, a2a=True)
        async with served(app) as url:
            yield url


async def client_for(base: str, *, streaming: bool, token: str | None = "tok-ana",
                     agent: str = "support") -> Any:
    headers = {} if token is None else {"authorization": f"Bearer {token}"}
    http = httpx.AsyncClient(headers=headers, timeout=DEADLINE)
    return await create_client(f"{base}/a2a/{agent}",
                               ClientConfig(httpx_client=http, streaming=streaming))


async def collect(stream: AsyncIterator[StreamResponse]) -> list[dict[str, Any]]:
    async with asyncio.timeout(DEADLINE):
        return [MessageToDict(event) async for event in stream]


async def test_the_card_names_the_agent_its_interface_skills_and_bearer_scheme(base: str) -> None:
    async with httpx.AsyncClient(base_url=base, headers=ANA) as http:
        card = (await http.get("/a2a/support/.well-known/agent-card.json")).json()
        listed = (await http.get("/v1/agents")).json()["agents"]
    assert card["supportedInterfaces"] == [
        {"url": f"{base}/a2a/support", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]
    assert [(s["id"], s["tags"]) for s in card["skills"]] == [
        ("ask_billing", ["tool"]), ("refund", ["tool", "side_effecting"]),
        ("slow_lookup", ["tool"])]
    assert card["capabilities"] == {"streaming": True, "pushNotifications": False}
    assert card["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"] == "Bearer"
    assert card["securityRequirements"] == [{"schemes": {"bearer": {"list": []}}}]
    assert [a["a2a"] for a in listed] == [
        f"{base}/a2a/{name}" for name in ("support", "watcher", "helpdesk", "quoter")]
    client = await client_for(base, streaming=False)
    sdk_card = await client.get_extended_agent_card(GetExtendedAgentCardRequest())
    assert (sdk_card.name, sdk_card.capabilities.streaming) == ("support", True)
    await client.close()


async def test_send_completes_a_task_whose_artifact_is_the_output(base: str) -> None:
    client = await client_for(base, streaming=False)
    [event] = await collect(client.send_message(text_message("hi", context_id="ctx-1")))
    task = event["task"]
    assert (task["contextId"], task["status"]["state"]) == ("ctx-1", "TASK_STATE_COMPLETED")
    assert task["artifacts"] == [
        {"artifactId": "output", "name": "output", "parts": [{"text": "Hello there!"}]}]
    got = MessageToDict(await client.get_task(GetTaskRequest(id=task["id"])))
    assert (got["id"], got["status"]["state"], got["artifacts"]) == (
        task["id"], "TASK_STATE_COMPLETED", task["artifacts"])
    await client.close()


@pytest.mark.parametrize("engine", ENGINES)
async def test_input_required_round_trip_with_approval_runs_the_tool_once(
    base: str, shop: Shop
) -> None:
    client = await client_for(base, streaming=False)
    [event] = await collect(client.send_message(text_message("refund A")))
    task = event["task"]
    status = task["status"]
    assert status["state"] == "TASK_STATE_INPUT_REQUIRED"
    hint, data = status["message"]["parts"]
    assert data["data"] == {
        "agentkit_pending": [{"call_id": "c1", "tool": "refund",
                              "arguments": {"order_id": "A", "usd": 10}, "kind": "approval",
                              "accepted": "'approve', 'reject', 'reject: <reason>' or a "
                                          "dict of edited arguments",
                              "asked_by": ["support"]}],
        "reply": {"decisions": {"c1": "approve"}}}
    assert hint["text"] == (
        f"task {task['id']!r} waits for a person on ['c1']: send a message with taskId "
        f"{task['id']!r} and a data part {{\"decisions\": {{\"c1\": \"approve\"}}}}; accepted "
        "decisions: c1 (approval): 'approve', 'reject', 'reject: <reason>' or a dict of "
        "edited arguments")
    assert shop.refunds == []
    with pytest.raises(InvalidParamsError) as refused:
        await collect(client.send_message(decision_message(task["id"], task["contextId"],
                                                           {"c1": "maybe"})))
    assert str(refused.value) == (
        f"run {task['id']!r}: call 'c1' waits for approval; its decision must be 'approve', "
        "'reject', 'reject: <reason>' or a dict of edited arguments, got 'maybe'")
    [done] = await collect(client.send_message(decision_message(task["id"], task["contextId"],
                                                                {"c1": "approve"})))
    assert done["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert done["task"]["artifacts"][0]["parts"] == [{"text": "Refunded A."}]
    assert shop.refunds == [("A", 10)]
    await client.close()


@pytest.mark.parametrize("engine", ENGINES)
async def test_stream_yields_the_task_tool_progress_output_and_last_state(base: str) -> None:
    client = await client_for(base, streaming=True)
    events = await collect(client.send_message(text_message("refund A")))
    assert [next(iter(e)) for e in events] == ["task", "statusUpdate", "statusUpdate"]
    calling = events[1]["statusUpdate"]["status"]
    assert (calling["state"], calling["message"]["parts"][0]) == (
        "TASK_STATE_WORKING", {"text": "calling refund"})
    last = events[-1]["statusUpdate"]
    assert last["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    task_id, context = last["taskId"], last["contextId"]
    resumed = await collect(client.send_message(decision_message(task_id, context,
                                                                 {"c1": "approve"})))
    # The task as it stands, its history as GetTask gives it: the run so far.
    snapshot = resumed[0]["task"]
    assert snapshot["history"][:2] == [
        history_message(snapshot, 0, "ROLE_USER", {"text": "refund A"}),
        history_message(snapshot, 1, "ROLE_AGENT", {"data": {"tool_calls": [
            {"id": "c1", "name": "refund", "arguments": {"order_id": "A", "usd": 10}}]}})]
    assert resumed[1]["statusUpdate"]["status"]["message"]["parts"][0] == {
        "text": "refund returned: refunded 10 USD on A"}
    chunks = [e["artifactUpdate"] for e in resumed if "artifactUpdate" in e]
    # The text as it streams, each chunk appended to the one before; then the whole output.
    assert [(c.get("append", False), c.get("lastChunk", False), c["artifact"]["parts"][0]["text"])
            for c in chunks] == [(False, False, "Refunded"), (True, False, " A."),
                                 (False, True, "Refunded A.")]
    assert next(iter(resumed[-2])) == "artifactUpdate"
    assert resumed[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    await client.close()


async def test_resubscribe_follows_a_running_task_and_cancel_stops_it(
    base: str, watch: Watch
) -> None:
    client = await client_for(base, streaming=True, agent="watcher")
    polling = await client_for(base, streaming=False, agent="watcher")
    request = text_message("watch A")
    request.configuration.return_immediately = True
    [started] = await collect(polling.send_message(request))
    task_id = started["task"]["id"]
    assert started["task"]["status"]["state"] == "TASK_STATE_WORKING"
    await asyncio.wait_for(watch.started.wait(), DEADLINE)
    followed = client.subscribe(SubscribeToTaskRequest(id=task_id)).__aiter__()
    first = MessageToDict(await asyncio.wait_for(anext(followed), DEADLINE))
    assert first["task"]["status"]["state"] == "TASK_STATE_WORKING"  # it follows from here
    # The task as it stands, history and all, as GetTask gives it (the turn whose call
    # is still running joins the history once its calls are answered).
    got = MessageToDict(await polling.get_task(GetTaskRequest(id=task_id)))
    assert first["task"]["history"] == got["history"] == [
        history_message(got, 0, "ROLE_USER", {"text": "watch A"})]
    cancelled = MessageToDict(await asyncio.wait_for(
        client.cancel_task(CancelTaskRequest(id=task_id)), DEADLINE))
    assert cancelled["status"]["state"] == "TASK_STATE_CANCELED"
    events = await collect(followed)
    assert [next(iter(e)) for e in events] == ["statusUpdate", "statusUpdate"]
    assert events[0]["statusUpdate"]["status"]["message"]["parts"][0] == {
        "text": "watch returned: stopped watching"}
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_CANCELED"
    with pytest.raises(TaskNotCancelableError) as refused:
        await client.cancel_task(CancelTaskRequest(id=task_id))
    assert str(refused.value) == f"task {task_id!r} is cancelled: it cannot be cancelled"
    with pytest.raises(TaskNotFoundError) as unknown:
        await client.get_task(GetTaskRequest(id="nope"))
    assert str(unknown.value) == "no run 'nope' is known here"
    await client.close()
    await polling.close()


async def test_without_a_token_every_a2a_request_is_refused(base: str) -> None:
    with pytest.raises(A2AClientError) as refused:
        await client_for(base, streaming=False, token=None)
    assert "401" in str(refused.value)
    async with httpx.AsyncClient(base_url=base) as http:
        answer = await http.post("/a2a/support", json={
            "jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}})
    assert (answer.status_code, answer.json()["error"]["type"]) == (401, "unauthorized")


async def test_the_0_3_method_names_and_shapes_are_accepted(base: str) -> None:
    async with httpx.AsyncClient(base_url=base, headers=ANA, timeout=DEADLINE) as http:
        sent = (await http.post("/a2a/support", json={
            "jsonrpc": "2.0", "id": 7, "method": "message/send", "params": {"message": {
                "kind": "message", "messageId": "m1", "role": "user",
                "parts": [{"kind": "text", "text": "refund A"}]}}})).json()
        task = sent["result"]
        assert (sent["id"], task["kind"], task["status"]["state"]) == (
            7, "task", "input-required")
        assert task["status"]["message"]["parts"][1]["kind"] == "data"
        got = (await http.post("/a2a/support", json={
            "jsonrpc": "2.0", "id": 8, "method": "tasks/get",
            "params": {"id": task["id"]}})).json()
        assert got["result"]["status"]["state"] == "input-required"
        unknown = (await http.post("/a2a/support", json={
            "jsonrpc": "2.0", "id": 9, "method": "tasks/list", "params": {}})).json()
    assert unknown["error"]["code"] == -32601


async def test_plain_text_answers_a_task_that_asks_one_question(base: str) -> None:
    client = await client_for(base, streaming=False, agent="helpdesk")
    [asked] = await collect(client.send_message(text_message("help me")))
    task = asked["task"]
    pending = task["status"]["message"]["parts"][1]["data"]["agentkit_pending"]
    assert [(p["call_id"], p["kind"], p["arguments"]) for p in pending] == [
        ("q1", "input", {"question": "Which order?"})]
    [done] = await collect(client.send_message(text_message(
        "A7", task_id=task["id"], context_id=task["contextId"])))
    assert done["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert done["task"]["artifacts"][0]["parts"] == [{"text": "Looking at that order."}]
    with pytest.raises(UnsupportedOperationError) as closed:
        await collect(client.send_message(text_message(
            "more", task_id=task["id"], context_id=task["contextId"])))
    assert str(closed.value) == (
        f"task {task['id']!r} is complete: it waits for no decision, so it takes no message; "
        "start a new task (a message without taskId) to continue the conversation")
    await client.close()


async def test_a_structured_output_is_a_data_part(base: str) -> None:
    client = await client_for(base, streaming=False, agent="quoter")
    [event] = await collect(client.send_message(text_message("quote A")))
    assert event["task"]["artifacts"] == [{"artifactId": "output", "name": "output",
                                           "parts": [{"data": {"order": "A", "usd": 3}}]}]
    await client.close()


class Recording(ByTask):
    """ByTask, keeping every request the model was sent."""

    def __init__(self, scripts: dict[str, list[Turn]]) -> None:
        super().__init__(scripts)
        self.requests: list[ChatRequest] = []

    async def chat(self, request: ChatRequest, ctx: RunContext) -> LLMResult:
        self.requests.append(request)
        return await super().chat(request, ctx)

    def stream(self, request: ChatRequest, ctx: RunContext) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        return super().stream(request, ctx)


@pytest.mark.parametrize("engine", ENGINES)
async def test_file_and_data_parts_become_the_tasks_media_and_text(
    engine: str, request: pytest.FixtureRequest
) -> None:
    task = 'read these\n\n{"quarter": 3}'
    llm = Recording({task: [Turn(content="Read.")]})
    reader = Agent("reader", "fake", "You read.")
    store = InMemoryStore()
    png = b"\x89PNG\r\n\x1a\n"
    async with apps_on(engine, request, store) as make, served(await make(
        [reader], context=context_for(llm, store), auth=TOKENS, a2a=True)
    ) as url, httpx.AsyncClient(base_url=url, headers=ANA, timeout=DEADLINE) as http:
        answer = (await http.post("/a2a/reader", json={
            "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
                "messageId": "m1", "role": "ROLE_USER", "parts": [
                    {"text": "read these"},
                    {"raw": base64.b64encode(png).decode(), "mediaType": "image/png"},
                    {"url": "https://example.com/q3.pdf", "mediaType": "application/pdf",
                     "filename": "q3.pdf"},
                    {"data": {"quarter": 3}}]}}})).json()
        bad = (await http.post("/a2a/reader", json={
            "jsonrpc": "2.0", "id": 2, "method": "message/send", "params": {"message": {
                "messageId": "m2", "role": "user", "parts": [{"kind": "video"}]}}})).json()
    assert answer["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    [user] = [m for m in llm.requests[0].messages if m.role == "user"]
    assert user.content == task
    assert user.attachments == (Image(png, "image/png"),
                                File.from_url("https://example.com/q3.pdf", "application/pdf"))
    assert bad["error"] == {"code": -32602, "message": (
        'part 0 has none of text, raw, url or data; parts are {"text": ...}, {"raw": '
        '<base64>, "mediaType": ...}, {"url": ..., "mediaType": ...} or {"data": ...} (or '
        'the 0.3 forms with "kind")')}


async def client_v03(base: str, *, agent: str = "support") -> tuple[Any, list[str]]:
    """The official client speaking A2A 0.3 (its compat JSON-RPC transport: the 0.3
    method names, its events checked by the 0.3 models) to the agent's endpoint, as it
    does for a card whose interface says 0.3; and the methods it calls, as it calls them."""
    methods: list[str] = []

    async def record(request: httpx.Request) -> None:
        if request.method == "POST":
            methods.append(json.loads(request.content)["method"])

    http = httpx.AsyncClient(headers=ANA, timeout=DEADLINE, event_hooks={"request": [record]})
    card = ParseDict((await http.get(f"{base}/a2a/{agent}/.well-known/agent-card.json")).json(),
                     AgentCard(), ignore_unknown_fields=True)
    card.supported_interfaces[0].protocol_version = "0.3"
    client = await create_client(card, ClientConfig(httpx_client=http, streaming=True))
    return client, methods


@pytest.mark.parametrize("engine", ENGINES)
async def test_streaming_under_the_0_3_names_approval_round_trip(base: str, shop: Shop) -> None:
    client, methods = await client_v03(base)
    events = await collect(client.send_message(text_message("refund A")))
    assert [next(iter(e)) for e in events] == ["task", "statusUpdate", "statusUpdate"]
    assert events[1]["statusUpdate"]["status"]["message"]["parts"][0] == {
        "text": "calling refund"}
    last = events[-1]["statusUpdate"]
    assert last["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
    assert last["status"]["message"]["parts"][1]["data"]["reply"] == {
        "decisions": {"c1": "approve"}}
    resumed = await collect(client.send_message(decision_message(
        last["taskId"], last["contextId"], {"c1": "approve"})))
    snapshot = resumed[0]["task"]
    assert snapshot["history"][:2] == [
        history_message(snapshot, 0, "ROLE_USER", {"text": "refund A"}),
        history_message(snapshot, 1, "ROLE_AGENT", {"data": {"tool_calls": [
            {"id": "c1", "name": "refund", "arguments": {"order_id": "A", "usd": 10}}]}})]
    chunks = [e["artifactUpdate"] for e in resumed if "artifactUpdate" in e]
    assert [(c.get("append", False), c.get("lastChunk", False), c["artifact"]["parts"][0]["text"])
            for c in chunks] == [(False, False, "Refunded"), (True, False, " A."),
                                 (False, True, "Refunded A.")]
    assert resumed[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert shop.refunds == [("A", 10)]
    assert methods == ["message/stream", "message/stream"]
    await client.close()


async def test_resubscribe_under_the_0_3_name_follows_a_running_task(
    base: str, watch: Watch
) -> None:
    client, methods = await client_v03(base, agent="watcher")
    polling = await client_for(base, streaming=False, agent="watcher")
    request = text_message("watch A")
    request.configuration.return_immediately = True
    [started] = await collect(polling.send_message(request))
    task_id = started["task"]["id"]
    await asyncio.wait_for(watch.started.wait(), DEADLINE)
    followed = client.subscribe(SubscribeToTaskRequest(id=task_id)).__aiter__()
    first = MessageToDict(await asyncio.wait_for(anext(followed), DEADLINE))
    assert first["task"]["status"]["state"] == "TASK_STATE_WORKING"
    assert first["task"]["history"] == [
        history_message(first["task"], 0, "ROLE_USER", {"text": "watch A"})]
    await asyncio.wait_for(polling.cancel_task(CancelTaskRequest(id=task_id)), DEADLINE)
    events = await collect(followed)
    assert [next(iter(e)) for e in events] == ["statusUpdate", "statusUpdate"]
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_CANCELED"
    with pytest.raises(UnsupportedOperationError) as ended:
        await collect(client.subscribe(SubscribeToTaskRequest(id=task_id)))
    assert str(ended.value) == (f"task {task_id!r} is cancelled: there is nothing to "
                                "follow; GetTask reads it")
    assert methods == ["tasks/resubscribe", "tasks/resubscribe"]
    await client.close()
    await polling.close()


async def test_a_0_3_stream_is_tagged_and_final_and_bounds_its_history(base: str) -> None:
    """The 0.3 wire itself: each event is the object with its ``kind``, a status
    update says whether it is ``final``, and ``historyLength`` bounds the opening task."""
    request = {"jsonrpc": "2.0", "id": 3, "method": "message/stream", "params": {
        "message": {"kind": "message", "messageId": "m-v03", "role": "user",
                    "parts": [{"kind": "text", "text": "hi"}]},
        "configuration": {"historyLength": 0}}}
    async with (httpx.AsyncClient(base_url=base, headers=ANA, timeout=DEADLINE) as http,
                http.stream("POST", "/a2a/support", json=request) as answer):
        lines = [line async for line in answer.aiter_lines() if line.startswith("data: ")]
    events = [json.loads(line.removeprefix("data: ")) for line in lines]
    assert {e["id"] for e in events} == {3}
    results = [e["result"] for e in events]
    assert [(r["kind"], r.get("final")) for r in results] == [
        ("task", None), ("artifact-update", None), ("artifact-update", None),
        ("artifact-update", None), ("status-update", True)]
    assert results[0]["history"] == []
    assert [(r["append"], r["lastChunk"], r["artifact"]["parts"]) for r in results[1:4]] == [
        (False, False, [{"kind": "text", "text": "Hello"}]),
        (True, False, [{"kind": "text", "text": " there!"}]),
        (False, True, [{"kind": "text", "text": "Hello there!"}])]
    assert results[4]["status"]["state"] == "completed"
