"""Workflows served beside agents: started, listed, waiting in the inbox at their gates,
decided (422 and one winner as for agents) and cancelled, in the server's process on
either engine (the Temporal engine's workers host the agents only)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from agentkit.agents.workflow import Workflow
from agentkit.core.runtime import RunContext
from agentkit.core.testing import Turn
from agentkit.serve.temporal import TemporalEngine
from agentkit.state.stores.memory import InMemoryStore
from tests.serve.served import (
    ENGINES,
    TOKENS,
    ByTask,
    Shop,
    apps_on,
    bearer,
    close_store,
    context_for,
    create_app,
    open_store,
    refund_turns,
    served,
    sse,
)
from tests.serve.test_decision_audit import audited, decisions_in

ANA = bearer("tok-ana")


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    opened = await open_store(request.param, request, tmp_path)
    yield opened
    await close_store(opened)


def review(posted: list[str]) -> Workflow:
    async def draft(inputs: dict[str, Any], ctx: RunContext) -> str:
        return f"draft of {inputs['task']}"

    async def post(inputs: dict[str, Any], ctx: RunContext) -> str:
        posted.append(inputs["draft"])
        return "posted"

    return (Workflow("review", description="Draft, ask, post.")
            .add("draft", draft).gate("publish", "Publish the draft?", after=["draft"])
            .add("post", post, after=["publish"]))


async def test_a_workflow_waits_at_its_gate_in_the_inbox_and_one_decision_wins(
    store: Any,
) -> None:
    posted: list[str] = []
    shop = Shop()
    app = create_app([shop.support, review(posted)],
                     context=context_for(ByTask({"hi": [Turn(content="Hi.")]}), store),
                     auth=TOKENS)
    async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
        served_ = (await http.get("/v1/agents", headers=ANA)).json()["agents"]
        assert [(a["name"], a["kind"]) for a in served_] == [
            ("support", "agent"), ("review", "workflow")]
        held = await http.post("/v1/agents/review/runs", json={
            "input": "the launch post", "run_id": "w1", "wait": True}, headers=ANA)
        assert (held.status_code, held.json()["status"]) == (200, "suspended")
        inbox = (await http.get("/v1/approvals", headers=ANA)).json()["approvals"]
        assert [(a["run_id"], a["agent"], a["call_id"], a["tool"], a["arguments"], a["kind"])
                for a in inbox] == [("w1", "review", "publish", "human_gate",
                                     {"question": "Publish the draft?"}, "approval")]
        bad = await http.post("/v1/runs/w1/decisions", json={"decisions": {"post": "approve"}},
                              headers=ANA)
        assert (bad.status_code, bad.json()["error"]["pending"]) == (422, {"publish": "gate"})
        suspended = await sse(http, "/v1/runs/w1/events")
        assert [e["event"] for e in suspended] == ["interrupt", "final"]
        assert suspended[-1]["data"]["stop_reason"] == "suspended"
        body = {"decisions": {"publish": "approve"}}
        first, second = await asyncio.gather(
            http.post("/v1/runs/w1/decisions", json=body, headers=ANA),
            http.post("/v1/runs/w1/decisions", json=body, headers=ANA))
        assert sorted([first.status_code, second.status_code]) == [202, 409]
        ended = await sse(http, "/v1/runs/w1/events", last=suspended[-1]["id"])
        assert [(e["event"], e["data"]["output"]) for e in ended] == [
            ("final", {"post": "posted"})]
        run = (await http.get("/v1/runs/w1", headers=ANA)).json()
        assert (run["status"], run["agent"], run["output"], run["pending"]) == (
            "complete", "review", {"post": "posted"}, [])
        assert [(d["call_id"], d["by"]) for d in run["decisions"]] == [("publish", "ana")]
        assert posted == ["draft of the launch post"]
        cancel = await http.post("/v1/runs/w1/cancel", headers=ANA)
        assert (cancel.status_code, cancel.json()["error"]["message"]) == (
            409, "run 'w1' cannot be cancelled: it is complete; only a running or suspended "
            "run can be cancelled")
        listed = (await http.get("/v1/runs?agent=review", headers=ANA)).json()["runs"]
        assert [r["run_id"] for r in listed] == ["w1"]


def slow_review(started: asyncio.Event, release: asyncio.Event, posted: list[str]) -> Workflow:
    """A workflow whose first step waits for ``release`` once ``started``."""
    async def draft(inputs: dict[str, Any], ctx: RunContext) -> str:
        started.set()
        await release.wait()
        return f"draft of {inputs['task']}"

    async def post(inputs: dict[str, Any], ctx: RunContext) -> str:
        posted.append(inputs["draft"])
        return "posted"

    return Workflow("slow").add("draft", draft).add("post", post, after=["draft"])


async def test_cancel_stops_a_running_workflow_at_its_next_step_and_audits_who(
    store: Any,
) -> None:
    started, release, posted = asyncio.Event(), asyncio.Event(), []
    app = create_app([slow_review(started, release, posted)],
                     context=audited(ByTask({}), store), auth=TOKENS)
    async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
        begun = await http.post("/v1/agents/slow/runs", json={"input": "the post",
                                "run_id": "w2"}, headers=ANA)
        assert begun.status_code == 202
        await asyncio.wait_for(started.wait(), 10)
        cancelled = await http.post("/v1/runs/w2/cancel", headers=ANA)
        assert (cancelled.status_code, cancelled.json()) == (
            202, {"run_id": "w2", "status": "cancelling"})
        release.set()  # the step in flight finishes; the one after it never starts
        events = await sse(http, "/v1/runs/w2/events")
        assert [(e["event"], e["data"]["stop_reason"]) for e in events] == [
            ("final", "cancelled")]
        run = (await http.get("/v1/runs/w2", headers=ANA)).json()
        assert (run["status"], run["stop_reason"], run["output"], run["pending"]) == (
            "cancelled", "cancelled", None, [])
        again = await http.post("/v1/runs/w2/cancel", headers=ANA)
        assert (again.status_code, again.json()["error"]["message"]) == (
            409, "run 'w2' cannot be cancelled: it is cancelled; only a running or "
            "suspended run can be cancelled")
    assert posted == []
    assert decisions_in(await store.list("audit")) == [("w2", None, "cancel", "ana")]


async def test_cancel_ends_a_workflow_waiting_at_its_gate_and_a_later_decision_is_409(
    store: Any,
) -> None:
    posted: list[str] = []
    app = create_app([review(posted)], context=audited(ByTask({}), store), auth=TOKENS)
    async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
        held = await http.post("/v1/agents/review/runs", json={
            "input": "the launch post", "run_id": "w1", "wait": True}, headers=ANA)
        assert held.json()["status"] == "suspended"
        suspended = await sse(http, "/v1/runs/w1/events")
        viewer = await http.post("/v1/runs/w1/cancel", headers=bearer("tok-viewer"))
        assert viewer.status_code == 403
        cancelled = await http.post("/v1/runs/w1/cancel", headers=ANA)
        assert (cancelled.status_code, cancelled.json()) == (
            202, {"run_id": "w1", "status": "cancelled"})
        run = (await http.get("/v1/runs/w1", headers=ANA)).json()
        assert (run["status"], run["stop_reason"], run["pending"]) == (
            "cancelled", "cancelled", [])
        assert (await http.get("/v1/approvals", headers=ANA)).json()["approvals"] == []
        events = await sse(http, "/v1/runs/w1/events", last=suspended[-1]["id"])
        assert [(e["event"], e["data"]["stop_reason"]) for e in events] == [
            ("final", "cancelled")]
        late = await http.post("/v1/runs/w1/decisions",
                               json={"decisions": {"publish": "approve"}}, headers=ANA)
        assert (late.status_code, late.json()["error"]) == (409, {
            "type": "not_resumable", "message": "run 'w1' cannot be resumed: workflow "
            "'review' is cancelled, not suspended"})
        assert (await http.get("/v1/runs/w1", headers=ANA)).json()["decisions"] == []
    assert posted == []
    assert decisions_in(await store.list("audit")) == [("w1", None, "cancel", "ana")]


async def test_a_cancel_and_a_decision_on_a_waiting_workflow_at_once_have_one_winner(
    store: Any,
) -> None:
    posted: list[str] = []
    app = create_app([review(posted)], context=context_for(ByTask({}), store), auth=TOKENS)
    async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
        await http.post("/v1/agents/review/runs", json={
            "input": "the launch post", "run_id": "w1", "wait": True}, headers=ANA)
        suspended = await sse(http, "/v1/runs/w1/events")
        cancel, decide = await asyncio.gather(
            http.post("/v1/runs/w1/cancel", headers=ANA),
            http.post("/v1/runs/w1/decisions", json={"decisions": {"publish": "approve"}},
                      headers=ANA))
        # One of the two takes the suspension. A cancel that lands after the decision
        # won, while the resumed run still advances, cancels that run instead (202 too).
        assert (cancel.status_code, decide.status_code) in ((202, 409), (409, 202), (202, 202))
        await sse(http, "/v1/runs/w1/events", last=suspended[-1]["id"])
        run = (await http.get("/v1/runs/w1", headers=ANA)).json()
    if decide.status_code == 409:
        assert (run["status"], run["decisions"], posted) == ("cancelled", [], [])
    else:
        assert [d["by"] for d in run["decisions"]] == ["ana"]
        assert posted in ([], ["draft of the launch post"])
        if cancel.status_code == 409:
            assert (run["status"], posted) == ("complete", ["draft of the launch post"])
        else:
            assert run["status"] in ("cancelled", "complete")


async def test_with_the_temporal_engine_a_workflow_runs_in_the_server_beside_its_agents(
    request: pytest.FixtureRequest,
) -> None:
    """Agents run on the Temporal workers; a Workflow served beside them runs in the
    server's process (as on the in-process engine), behind the same API."""
    posted: list[str] = []
    shop = Shop()
    store = InMemoryStore()
    llm = ByTask({"refund A": refund_turns("A", 10)})
    async with apps_on("temporal", request, store) as make:
        app = await make([shop.support, review(posted)], context=context_for(llm, store),
                         auth=TOKENS)
        async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
            served_ = (await http.get("/v1/agents", headers=ANA)).json()["agents"]
            assert [(a["name"], a["kind"]) for a in served_] == [
                ("support", "agent"), ("review", "workflow")]
            for agent, task, run_id in (("review", "the launch post", "tw1"),
                                        ("support", "refund A", "ta1")):
                held = await http.post(f"/v1/agents/{agent}/runs", json={
                    "input": task, "run_id": run_id, "wait": True}, headers=ANA)
                assert (held.status_code, held.json()["status"]) == (200, "suspended")
            inbox = (await http.get("/v1/approvals", headers=ANA)).json()["approvals"]
            assert [(a["run_id"], a["call_id"], a["tool"]) for a in inbox] == [
                ("ta1", "c1", "refund"), ("tw1", "publish", "human_gate")]
            for run_id, decisions in (("tw1", {"publish": "approve"}), ("ta1", {"c1": "approve"})):
                decided = await http.post(f"/v1/runs/{run_id}/decisions",
                                          json={"decisions": decisions}, headers=ANA)
                assert decided.status_code == 202
            ended = await sse(http, "/v1/runs/tw1/events", last="2")
            assert [(e["event"], e["data"]["output"]) for e in ended] == [
                ("final", {"post": "posted"})]
            await sse(http, "/v1/runs/ta1/events", last="4")  # after the suspension's final
            await http.post("/v1/agents/review/runs", json={
                "input": "the next post", "run_id": "tw2", "wait": True}, headers=ANA)
            cancelled = await http.post("/v1/runs/tw2/cancel", headers=ANA)
            assert (cancelled.status_code, cancelled.json()) == (
                202, {"run_id": "tw2", "status": "cancelled"})
            runs = (await http.get("/v1/runs", headers=ANA)).json()["runs"]
            assert sorted((r["run_id"], r["status"], r["output"]) for r in runs) == [
                ("ta1", "complete", "Refunded A."), ("tw1", "complete", {"post": "posted"}),
                ("tw2", "cancelled", None)]
    assert (posted, shop.refunds) == (["draft of the launch post"], [("A", 10)])


def test_the_temporal_engine_refuses_what_is_neither_an_agent_nor_a_workflow() -> None:
    with pytest.raises(TypeError) as info:
        create_app([Shop().support, "review"], context=context_for(ByTask({}), None),
                   engine=TemporalEngine("localhost:7233", task_queue="q"))
    assert str(info.value) == (
        "create_app(..., engine=TemporalEngine(...)) serves Agent objects (run on the "
        "workers of its task queue, which must host them) and Workflow objects (run in "
        "this server's process), got 'review'")


@pytest.mark.parametrize("engine", ENGINES)
async def test_a_workflow_left_running_by_a_stopped_server_is_recovered_by_the_next(
    engine: str, request: pytest.FixtureRequest
) -> None:
    started, release, posted = asyncio.Event(), asyncio.Event(), []
    shop = Shop()
    store = InMemoryStore()
    async with apps_on(engine, request, store) as make:
        def app() -> Any:
            return make([shop.support, slow_review(started, release, posted)],
                        context=context_for(ByTask({}), store), auth=TOKENS)

        async with served(await app()) as url, httpx2.AsyncClient(base_url=url) as http:
            begun = await http.post("/v1/agents/slow/runs", json={
                "input": "the post", "run_id": "wr"}, headers=ANA)
            assert begun.status_code == 202
            await asyncio.wait_for(started.wait(), 10)
        release.set()  # the step stopped with its server; the next one runs it again
        async with served(await app()) as url, httpx2.AsyncClient(base_url=url) as http:
            events = await sse(http, "/v1/runs/wr/events")
            run = (await http.get("/v1/runs/wr", headers=ANA)).json()
    assert [(e["event"], e["data"]["output"]) for e in events] == [
        ("final", {"post": "posted"})]
    assert (run["status"], posted) == ("complete", ["draft of the post"])
