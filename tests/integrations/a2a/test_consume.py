"""agentkit's A2AAgent as a tool: against an agent served by the official ``a2a-sdk``
server classes (its input-required path included) and against agentkit's own served
agents (approval through the remote, a principal that may not decide)."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ToolCall
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.integrations.a2a import A2AAgent
from agentkit.state.stores import InMemoryStore
from tests.integrations.a2a.sdk_server import Booking, booking_app
from tests.serve.served import (
    DEADLINE,
    TOKENS,
    ByTask,
    Shop,
    bearer,
    context_for,
    create_app,
    served_as,
)

LOOPBACK = ["127.0.0.1"]


def caller(tool: Any, turns: list[Turn]) -> tuple[Agent, Any, list[tuple[str, Any]]]:
    seen: list[tuple[str, Any]] = []
    ctx = make_test_ctx(llm=FakeLLM.script(turns), observer=lambda k, d: seen.append((k, d)))
    return Agent("planner", "fake", "You plan.", cognition=ReActCognition([tool])), ctx, seen


async def test_a_remote_sdk_agent_asks_a_question_that_suspends_the_caller() -> None:
    executor = Booking()
    async with served_as(lambda url: booking_app(url, executor)) as url:
        remote = await A2AAgent.connect(url, private_hosts=LOOPBACK)
        assert (remote.name, remote.description, remote.card.streaming) == (
            "booking", "Books meeting rooms.", True)
        tool = remote.as_tool()
        planner, ctx, seen = caller(tool, [
            Turn(tool_calls=(ToolCall("c1", "booking", {"task": "book a room for 4"}),)),
            Turn(content="The room is booked."),
        ])
        async with asyncio.timeout(DEADLINE):
            waiting = await planner.run("book me a room", ctx)
        suspended = waiting.evals["suspended"]
        assert [(c.id, c.name, dict(c.arguments)) for c in suspended.pending] == [
            ("c1/remote", "booking", {"question": "Which date should I book?"})]
        assert dict(suspended.kinds) == {"c1/remote": "input"}
        assert dict(suspended.agents) == {"c1/remote": ("planner", "booking")}
        assert ("tool.progress", "Looking at the calendar.") in [
            (k, d.get("message")) for k, d in seen]
        async with asyncio.timeout(DEADLINE):
            done = await planner.resume(waiting.run_id, {"c1/remote": {"answer": "May 3"}},
                                        ctx)
    assert done.output == "The room is booked."
    assert executor.received == ["book a room for 4", "May 3"]
    assert executor.booked == ["May 3"]
    answered = [m for m in done.messages if m.role == "tool"]
    assert [m.content for m in answered] == ["Booked a room for May 3."]


async def test_approval_inside_an_agentkit_remote_round_trips_and_the_tool_runs_once() -> None:
    shop = Shop()
    llm = ByTask({"refund A": [Turn(tool_calls=(ToolCall("c1", "refund",
                                                         {"order_id": "A", "usd": 10}),)),
                               Turn(content="Refunded A.")]})
    app = create_app([shop.support], context=context_for(llm, InMemoryStore()), auth=TOKENS,
                     a2a=True)
    async with served_as(lambda _: app) as url:
        remote = await A2AAgent.connect(f"{url}/a2a/support", token="tok-ana",
                                        private_hosts=LOOPBACK)
        planner, ctx, _ = caller(remote.as_tool(), [
            Turn(tool_calls=(ToolCall("c7", "support", {"task": "refund A"}),)),
            Turn(content="Support refunded A."),
        ])
        async with asyncio.timeout(DEADLINE):
            waiting = await planner.run("get A refunded", ctx)
        suspended = waiting.evals["suspended"]
        assert [(c.id, c.name, dict(c.arguments)) for c in suspended.pending] == [
            ("c7/c1", "refund", {"order_id": "A", "usd": 10})]
        assert dict(suspended.kinds) == {"c7/c1": "approval"}
        assert shop.refunds == []
        with pytest.raises(ValueError) as invalid:
            await planner.resume(waiting.run_id, {"c7/c1": "maybe"}, ctx)
        assert str(invalid.value) == (
            f"run {waiting.run_id!r}: call 'c7/c1' waits for approval; its decision must be "
            "'approve', 'reject', 'reject: <reason>' or a dict of edited arguments, got "
            "'maybe'")
        async with asyncio.timeout(DEADLINE):
            done = await planner.resume(waiting.run_id, {"c7/c1": "approve"}, ctx)
    assert done.output == "Support refunded A."
    assert shop.refunds == [("A", 10)]
    assert [m.content for m in done.messages if m.role == "tool"] == ["Refunded A."]


async def test_a_principal_that_may_not_decide_gets_the_remote_json_rpc_error() -> None:
    shop = Shop()
    llm = ByTask({"refund B": [Turn(tool_calls=(ToolCall("c1", "refund",
                                                         {"order_id": "B", "usd": 5}),)),
                               Turn(content="never")]})
    app = create_app([shop.support], context=context_for(llm, InMemoryStore()), auth=TOKENS,
                     a2a=True)
    async with served_as(lambda _: app) as url:
        remote = await A2AAgent.connect(f"{url}/a2a/support", token="tok-viewer",
                                        private_hosts=LOOPBACK)
        planner, ctx, _ = caller(remote.as_tool(), [
            Turn(tool_calls=(ToolCall("c7", "support", {"task": "refund B"}),)),
            Turn(content="Support would not refund B."),
        ])
        async with asyncio.timeout(DEADLINE):
            first = await planner.run("get B refunded", ctx)
            done = await planner.resume(first.run_id, {"c7/c1": "approve"}, ctx)
        async with httpx.AsyncClient(base_url=url, headers=bearer("tok-ana")) as http:
            [remote_run] = (await http.get("/v1/runs")).json()["runs"]
    [answer] = [m for m in done.messages if m.role == "tool"]
    assert (answer.is_error, answer.content) == (True, (
        "A2A agent 'support' refused SendStreamingMessage (JSON-RPC error -32600): principal "
        f"'viewer' may not decide for runs; run {remote_run['run_id']!r} is unchanged"))
    assert remote_run["status"] == "suspended"
    assert done.output == "Support would not refund B."
    assert shop.refunds == []
