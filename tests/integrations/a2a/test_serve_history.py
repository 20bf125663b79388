"""A2A tasks with the official ``a2a-sdk`` client: a retried send (same ``messageId``)
is the same task and one run, and a task's ``history`` is its run's messages in A2A's
shape, the most recent ``historyLength`` of them, on every engine."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from a2a.types import GetTaskRequest, SendMessageConfiguration
from google.protobuf.json_format import MessageToDict

from agentkit.core.contracts.types import ToolCall
from agentkit.core.testing import Turn
from agentkit.state.stores import InMemoryStore
from tests.integrations.a2a.test_serve import (
    ANA,
    client_for,
    collect,
    decision_message,
    history_message,
    text_message,
)
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


@pytest.fixture
async def helpdesk(engine: str, request: pytest.FixtureRequest
                   ) -> AsyncIterator[tuple[str, Shop]]:
    """The shop's support agent served over A2A on ``engine``, with its scripts."""
    shop = Shop()
    llm = ByTask({
        "refund A": [Turn(tool_calls=(ToolCall("c1", "refund", {"order_id": "A", "usd": 10}),)),
                     Turn(content="Refunded A.")],
        "hi": [Turn(content="Hello there!")],
        "hello": [Turn(content="Hello there!"), Turn(content="Hello again!")],
    })
    store = InMemoryStore()
    async with apps_on(engine, request, store) as make:
        app = await make([shop.support], context=context_for(llm, store), auth=TOKENS,
                         a2a=True)
        async with served(app) as url:
            yield url, shop


async def runs_of(url: str) -> list[str]:
    async with httpx.AsyncClient(base_url=url, headers=ANA) as http:
        return [r["run_id"] for r in (await http.get("/v1/runs")).json()["runs"]]


async def test_a_retried_send_with_the_same_message_id_is_the_same_task_and_one_run(
    helpdesk: tuple[str, Shop],
) -> None:
    url, _ = helpdesk
    client = await client_for(url, streaming=False)
    [first] = await collect(client.send_message(text_message("hi")))
    [retried] = await collect(client.send_message(text_message("hi")))
    assert retried["task"]["id"] == first["task"]["id"]
    assert retried["task"]["contextId"] == first["task"]["contextId"]
    assert retried["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    at_once = await asyncio.gather(*(
        collect(client.send_message(text_message("refund A"))) for _ in range(3)))
    assert len({events[0]["task"]["id"] for events in at_once}) == 1
    other = text_message("hi")
    other.message.message_id = "another id"
    [fresh] = await collect(client.send_message(other))
    assert fresh["task"]["id"] not in (first["task"]["id"], at_once[0][0]["task"]["id"])
    assert sorted(await runs_of(url)) == sorted(
        [first["task"]["id"], at_once[0][0]["task"]["id"], fresh["task"]["id"]])
    await client.close()


async def test_a_message_id_is_a_task_only_for_the_principal_who_sent_it(
    helpdesk: tuple[str, Shop],
) -> None:
    url, _ = helpdesk
    ana = await client_for(url, streaming=False)
    viewer = await client_for(url, streaming=False, token="tok-viewer")
    [mine] = await collect(ana.send_message(text_message("hi")))
    [theirs] = await collect(viewer.send_message(text_message("hi")))
    assert mine["task"]["id"] != theirs["task"]["id"]
    await ana.close()
    await viewer.close()


def user(task: dict[str, Any], index: int, text: str) -> dict[str, Any]:
    return history_message(task, index, "ROLE_USER", {"text": text})


def agent(task: dict[str, Any], index: int, *parts: dict[str, Any]) -> dict[str, Any]:
    return history_message(task, index, "ROLE_AGENT", *parts)


@pytest.mark.parametrize("engine", ENGINES)
async def test_a_tasks_history_is_its_runs_messages_bounded_by_history_length(
    helpdesk: tuple[str, Shop],
) -> None:
    url, shop = helpdesk
    client = await client_for(url, streaming=False)
    [asked] = await collect(client.send_message(text_message("refund A")))
    task = asked["task"]
    call = {"tool_calls": [{"id": "c1", "name": "refund",
                            "arguments": {"order_id": "A", "usd": 10}}]}
    assert task["history"] == [user(task, 0, "refund A"), agent(task, 1, {"data": call})]
    decided = decision_message(task["id"], task["contextId"], {"c1": "approve"})
    decided.configuration.CopyFrom(SendMessageConfiguration(history_length=1))
    [done] = await collect(client.send_message(decided))
    assert done["task"]["history"] == [agent(task, 3, {"text": "Refunded A."})]
    whole = [
        user(task, 0, "refund A"), agent(task, 1, {"data": call}),
        agent(task, 2, {"data": {"tool_result": {
            "call_id": "c1", "name": "refund", "content": "refunded 10 USD on A",
            "is_error": False}}}),
        agent(task, 3, {"text": "Refunded A."}),
    ]
    got = MessageToDict(await client.get_task(GetTaskRequest(id=task["id"])))
    assert got["history"] == whole
    two = MessageToDict(await client.get_task(GetTaskRequest(id=task["id"], history_length=2)))
    assert two["history"] == whole[2:]
    none = MessageToDict(await client.get_task(GetTaskRequest(id=task["id"], history_length=0)))
    assert "history" not in none  # ProtoJSON leaves an empty list out
    assert shop.refunds == [("A", 10)]
    await client.close()


@pytest.mark.parametrize("engine", ENGINES)
async def test_a_later_task_of_a_context_shows_its_own_runs_messages_not_the_earlier_turns(
    helpdesk: tuple[str, Shop],
) -> None:
    url, _ = helpdesk
    client = await client_for(url, streaming=False)
    [first] = await collect(client.send_message(text_message("hello", context_id="ctx-h")))
    again = text_message("hello", context_id="ctx-h")
    again.message.message_id = "m-hello-again"
    [second] = await collect(client.send_message(again))
    task = second["task"]
    assert (task["contextId"], task["status"]["state"]) == ("ctx-h", "TASK_STATE_COMPLETED")
    assert task["history"] == [user(task, 0, "hello"),
                               agent(task, 1, {"text": "Hello again!"})]
    earlier = MessageToDict(await client.get_task(GetTaskRequest(id=first["task"]["id"])))
    assert earlier["history"] == [user(earlier, 0, "hello"),
                                  agent(earlier, 1, {"text": "Hello there!"})]
    await client.close()


async def test_history_in_the_0_3_shape_and_a_bad_history_length_is_refused(
    helpdesk: tuple[str, Shop],
) -> None:
    url, _ = helpdesk
    async with httpx.AsyncClient(base_url=url, headers=ANA, timeout=DEADLINE) as http:
        sent = (await http.post("/a2a/support", json={
            "jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {
                "message": {"kind": "message", "messageId": "m1", "role": "user",
                            "parts": [{"kind": "text", "text": "hi"}]},
                "configuration": {"historyLength": 1}}})).json()["result"]
        assert sent["history"] == [{
            "kind": "message", "messageId": f"{sent['id']}:history:1", "role": "agent",
            "taskId": sent["id"], "contextId": sent["contextId"],
            "parts": [{"kind": "text", "text": "Hello there!"}]}]
        for bad in (-1, "2", True, 1.5):
            refused = (await http.post("/a2a/support", json={
                "jsonrpc": "2.0", "id": 2, "method": "GetTask",
                "params": {"id": sent["id"], "historyLength": bad}})).json()
            assert refused["error"] == {"code": -32602, "message": (
                f'"historyLength" must be a whole number of messages, 0 or more, or left '
                f"out for all of them; got {bad!r}")}
