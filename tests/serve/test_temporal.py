"""The Temporal engine across server restarts: a run goes on on the worker while no
server is up, and the next server follows it from the registry to its end."""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import replace
from typing import Any

import httpx2
from temporalio.client import Client

from agentkit.core.contracts.types import ToolCall
from agentkit.core.testing import Turn
from agentkit.integrations.temporal import AgentWorker, TemporalAgents
from agentkit.serve.claims import DecisionClaims
from agentkit.serve.temporal import TemporalEngine
from agentkit.state.stores.memory import InMemoryStore
from tests.serve.served import (
    TOKENS,
    ByTask,
    Shop,
    bearer,
    context_for,
    create_app,
    refund_turns,
    served,
    sse,
    start,
)

ANA = bearer("tok-ana")


async def _never_asked(run_id: str, at: int | None) -> bool:
    raise AssertionError("a claim taken where none was is taken without asking the run")


@contextlib.asynccontextmanager
async def servers_of(shop: Shop, context: Any, address: str
                     ) -> AsyncIterator[tuple[Callable[..., Any], TemporalAgents]]:
    """A worker hosting the shop's support agent on a task queue of its own; what makes
    a server's app on it (each call a new server, as after a restart, on the same queue,
    its ``TemporalEngine`` given ``options``), and a client of its runs."""
    client = await Client.connect(address)
    queue = f"serve-{uuid.uuid4().hex[:12]}"

    def app(**options: Any) -> Any:
        return create_app([shop.support], context=context, auth=TOKENS,
                          engine=TemporalEngine(client, task_queue=queue, **options))

    async with AgentWorker(client, task_queue=queue, agents=[shop.support], context=context):
        yield app, TemporalAgents(client, task_queue=queue)


async def test_a_run_left_running_by_a_stopped_server_is_followed_by_the_next(
    temporal_address: str,
) -> None:
    shop = Shop()
    store = InMemoryStore()
    run_id = f"t-{uuid.uuid4().hex[:12]}"
    llm = ByTask({"look": [Turn(tool_calls=(ToolCall("c1", "slow_lookup", {"order_id": "A"}),)),
                           Turn(content="It shipped.")]})
    context = context_for(llm, store)
    async with servers_of(shop, context, temporal_address) as (app, _):
        async with served(app()) as url, httpx2.AsyncClient(base_url=url) as http:
            started = await http.post("/v1/agents/support/runs", json={
                "input": "look", "run_id": run_id}, headers=ANA)
            assert started.status_code == 202
        shop.release.set()  # the tool finishes while no server is up
        async with served(app()) as url, httpx2.AsyncClient(base_url=url) as http:
            events = await sse(http, f"/v1/runs/{run_id}/events")
            run = (await http.get(f"/v1/runs/{run_id}", headers=ANA)).json()
    # The next server reads the run's live events from the start, and then live: the
    # same events, in the same order, as the in-process engine gives for this script.
    assert [e["event"] for e in events] == [
        "tool_call", "step", "tool_result", "text_delta", "text_delta", "step", "final"]
    assert [e["id"] for e in events] == [str(n) for n in range(1, 8)]
    assert (run["status"], run["output"]) == ("complete", "It shipped.")
    assert len(llm.fakes["look"].requests) == 2


async def test_a_decision_claim_left_by_a_server_that_died_is_taken_over_after_its_lease(
    temporal_address: str,
) -> None:
    """A server that took a suspension's decision claim and died before handing the
    decision to the workflow leaves the claim behind: within its lease a decision is
    409 (its owner may still be handing over); past it, the next one takes it over,
    since the workflow still waits at that suspension, and runs the tool once. (Two
    servers on one store, one whose lease has not run out and one whose has, so the
    test waits on no clock.)"""
    shop = Shop()
    store = InMemoryStore()
    run_id = f"t-{uuid.uuid4().hex[:12]}"
    llm = ByTask({"refund A": refund_turns("A", 10)})
    context = context_for(llm, store)
    decide = {"decisions": {"c1": "approve"}}
    async with servers_of(shop, context, temporal_address) as (app, agents):
        async with served(app(claim_lease=30.0)) as url, httpx2.AsyncClient(base_url=url) as http:
            held = await start(http, "refund A", run_id)
            assert held.json()["status"] == "suspended"
            # What the server that died left: the claim, and the run's record still
            # suspended (it never handed the decision over).
            record = await store.get_run(run_id)
            assert record is not None
            at = await agents.suspension(run_id)
            dead = DecisionClaims(store, owner="a server that died",
                                  still_waiting=_never_asked)
            await dead.take(record, "decision", at)
            early = await http.post(f"/v1/runs/{run_id}/decisions", json=decide,
                                    headers=ANA)
            assert (early.status_code, early.json()["error"]["message"]) == (
                409, f"run {run_id!r} cannot be resumed: another decision (or a cancel) "
                "was accepted first")
        async with served(app(claim_lease=0.0)) as url, httpx2.AsyncClient(base_url=url) as http:
            taken = await http.post(f"/v1/runs/{run_id}/decisions", json=decide,
                                    headers=ANA)
            assert taken.status_code == 202
            # This server's log holds the whole run: the workers' live batches from the
            # first, then what the run's results show.
            events = await sse(http, f"/v1/runs/{run_id}/events")
            run = (await http.get(f"/v1/runs/{run_id}", headers=ANA)).json()
    assert [e["event"] for e in events] == [
        "tool_call", "step", "tool_result", "text_delta", "text_delta", "step", "final"]
    assert (run["status"], run["output"]) == ("complete", "Refunded A.")
    assert [(d["call_id"], d["by"]) for d in run["decisions"]] == [("c1", "ana")]
    assert shop.refunds == [("A", 10)]


async def test_a_run_whose_server_died_handing_a_decision_over_is_followed_by_the_next(
    temporal_address: str,
) -> None:
    """A server registers a decided run as running before it hands the decision over;
    dying then, it leaves that record, and the next server follows the run: back to
    waiting if the decision never arrived, and a decision then goes through."""
    shop = Shop()
    store = InMemoryStore()
    run_id = f"t-{uuid.uuid4().hex[:12]}"
    llm = ByTask({"refund A": refund_turns("A", 10)})
    context = context_for(llm, store)
    async with servers_of(shop, context, temporal_address) as (app, _):
        async with served(app()) as url, httpx2.AsyncClient(base_url=url) as http:
            await start(http, "refund A", run_id)
        record = await store.get_run(run_id)
        assert record is not None and record.status == "suspended"
        await store.put_run(replace(record, status="running", pending=(),
                                    updated=time.time()))  # and then it died
        async with served(app()) as url, httpx2.AsyncClient(base_url=url) as http:
            events = await sse(http, f"/v1/runs/{run_id}/events")
            waiting = (await http.get(f"/v1/runs/{run_id}", headers=ANA)).json()
            decided = await http.post(f"/v1/runs/{run_id}/decisions",
                                      json={"decisions": {"c1": "approve"}}, headers=ANA)
            ended = await sse(http, f"/v1/runs/{run_id}/events", last=events[-1]["id"])
    assert [e["event"] for e in events] == ["tool_call", "step", "interrupt", "final"]
    assert (waiting["status"], [p["call_id"] for p in waiting["pending"]]) == (
        "suspended", ["c1"])
    assert decided.status_code == 202
    assert [e["event"] for e in ended][-1] == "final"
    assert ended[-1]["data"]["output"] == "Refunded A."
    assert shop.refunds == [("A", 10)]
