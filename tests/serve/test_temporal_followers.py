"""Followers on the Temporal engine: a run whose server stopped or died is followed by a
server that is up (not only by the next one to start), by one server only, and a
follower retries what Temporal refuses for a moment instead of dropping the run."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest
from temporalio.client import (
    Client,
    FetchWorkflowHistoryEventsInput,
    Interceptor,
    OutboundInterceptor,
)
from temporalio.service import RPCError, RPCStatusCode

from agentkit.core.contracts.runs import RunRecord
from agentkit.core.contracts.types import ToolCall
from agentkit.core.testing import Turn
from agentkit.integrations.temporal import AgentWorker
from agentkit.serve.followers import Followers
from agentkit.serve.temporal import TemporalEngine
from agentkit.state.stores.memory import InMemoryStore
from tests.serve.served import (
    DEADLINE,
    TOKENS,
    ByTask,
    Shop,
    bearer,
    close_store,
    context_for,
    create_app,
    open_store,
    refund_turns,
    served,
    sse,
)

ANA = bearer("tok-ana")
FAST = {"follow_lease": 2.0, "sweep": 0.2}
"""Many sweeps a second; a lease that an event-loop stall of a loaded machine
never outlasts."""


def look_then_refund() -> list[Turn]:
    """A run that waits in ``slow_lookup`` until the shop's release, then asks for
    approval of a refund."""
    return [Turn(tool_calls=(ToolCall("c1", "slow_lookup", {"order_id": "A"}),)),
            Turn(tool_calls=(ToolCall("c2", "refund", {"order_id": "A", "usd": 10}),)),
            Turn(content="Refunded A.")]


async def until(what: Callable[[], Awaitable[bool]], why: str) -> float:
    """Wait for ``what()`` (polling), failing after the suite's deadline; when it held."""
    async with asyncio.timeout(DEADLINE):
        while not await what():
            await asyncio.sleep(0.05)
    return time.monotonic()


@contextlib.asynccontextmanager
async def cluster(shop: Shop, context: Any, address: str, **connect: Any
                  ) -> AsyncIterator[Callable[..., tuple[Any, TemporalEngine]]]:
    """A worker hosting the shop's support agent on a task queue of its own, and what
    makes a server's app on that queue (each call a new server: its app and engine; the
    engines' client connected with ``connect``)."""
    client = await Client.connect(address)
    engines = await Client.connect(address, **connect) if connect else client
    queue = f"serve-{uuid.uuid4().hex[:12]}"

    def server(**options: Any) -> tuple[Any, TemporalEngine]:
        engine = TemporalEngine(engines, task_queue=queue, **options)
        return create_app([shop.support], context=context, auth=TOKENS, engine=engine), engine

    async with AgentWorker(client, task_queue=queue, agents=[shop.support], context=context):
        try:
            yield server
        finally:
            shop.release.set()  # nothing left waiting in the worker


async def _status(store: Any, run_id: str) -> str | None:
    record = await store.get_run(run_id)
    return None if record is None else record.status


async def _inbox(http: httpx2.AsyncClient) -> list[str]:
    answer = await http.get("/v1/approvals", headers=ANA)
    return [a["run_id"] for a in answer.json()["approvals"]]


@pytest.mark.parametrize("kind", ["memory", "sqlite", "postgres"])
async def test_a_server_that_is_up_follows_the_runs_of_one_that_stopped(
    kind: str, temporal_address: str, request: pytest.FixtureRequest, tmp_path: Path,
) -> None:
    """A starts a run and stops while it runs; B, up all along, takes it over: the run
    suspends with no A, B writes the suspended record (its inbox lists the run), takes
    the decision and writes the complete record."""
    shop = Shop()
    store = await open_store(kind, request, tmp_path)
    run_id = f"t-{uuid.uuid4().hex[:12]}"
    context = context_for(ByTask({"look": look_then_refund()}), store)
    async with contextlib.AsyncExitStack() as stack:
        stack.push_async_callback(close_store, store)
        server = await stack.enter_async_context(cluster(shop, context, temporal_address))
        app_b, engine_b = server(**FAST)
        async with served(app_b) as url_b, httpx2.AsyncClient(base_url=url_b) as http_b:
            app_a, engine_a = server(**FAST)
            async with served(app_a) as url_a, httpx2.AsyncClient(base_url=url_a) as http_a:
                started = await http_a.post("/v1/agents/support/runs", json={
                    "input": "look", "run_id": run_id}, headers=ANA)
                assert started.status_code == 202
                await asyncio.sleep(4 * FAST["sweep"])  # B sweeps; A is up and follows
                assert run_id in engine_a._watching
                assert run_id not in engine_b._watching
            assert engine_a._watching == {}
            shop.release.set()  # the run goes on with no A, to its approval
            await until(lambda: _has(http_b, run_id), "B's inbox lists the run")
            assert await _status(store, run_id) == "suspended"
            decided = await http_b.post(f"/v1/runs/{run_id}/decisions",
                                        json={"decisions": {"c2": "approve"}}, headers=ANA)
            assert decided.status_code == 202
            await until(lambda: _is(store, run_id, "complete"), "B writes the end")
            run = (await http_b.get(f"/v1/runs/{run_id}", headers=ANA)).json()
            waited = await sse(http_b, f"/v1/runs/{run_id}/events")
            ended = await sse(http_b, f"/v1/runs/{run_id}/events", last=waited[-1]["id"])
    assert (run["status"], run["output"]) == ("complete", "Refunded A.")
    assert shop.refunds == [("A", 10)]
    # B's log holds the whole run: the workers' batches from the first, the interrupt
    # and the suspended final from its results, then the rest after the decision.
    assert [e["event"] for e in waited] == [
        "tool_call", "step", "tool_result", "tool_call", "step", "interrupt", "final"]
    assert waited[-1]["data"]["stop_reason"] == "suspended"
    assert [e["event"] for e in ended][-1] == "final"
    assert ended[-1]["data"]["output"] == "Refunded A."


async def test_the_runs_of_a_server_that_died_are_taken_over_once_its_lease_ran_out(
    temporal_address: str,
) -> None:
    """A server that dies leaves its heartbeat behind: its runs are its own until the
    heartbeat is a lease old, then a server that is up follows them."""
    shop = Shop()
    store = InMemoryStore()
    run_id = f"t-{uuid.uuid4().hex[:12]}"
    context = context_for(ByTask({"look": look_then_refund()}), store)
    lease = 3.0
    async with cluster(shop, context, temporal_address) as server:
        app_b, engine_b = server(follow_lease=lease, sweep=0.2)
        async with served(app_b) as url_b, httpx2.AsyncClient(base_url=url_b) as http_b:
            app_a, engine_a = server(follow_lease=lease, sweep=0.2)
            async with served(app_a) as url_a, httpx2.AsyncClient(base_url=url_a) as http_a:
                started = await http_a.post("/v1/agents/support/runs", json={
                    "input": "look", "run_id": run_id}, headers=ANA)
                assert started.status_code == 202
            # What a server killed mid-run leaves: its last heartbeat (the clean stop
            # above removed it).
            died = time.monotonic()
            await store.set(f"agentkit:serve:alive:{engine_a.followers.owner}",
                            {"at": time.time()})
            shop.release.set()
            await asyncio.sleep(0.5)
            assert run_id not in engine_b._watching  # A's, for all B knows
            assert await _status(store, run_id) == "running"
            taken = await until(lambda: _has(http_b, run_id), "B's inbox lists the run")
            assert taken - died >= lease
            assert await _status(store, run_id) == "suspended"


async def test_two_servers_up_follow_each_run_once(temporal_address: str) -> None:
    shop = Shop()
    store = InMemoryStore()
    runs = [f"t-{uuid.uuid4().hex[:12]}" for _ in range(4)]
    look = [Turn(tool_calls=(ToolCall("c1", "slow_lookup", {"order_id": "A"}),)),
            Turn(content="It shipped.")]
    context = context_for(ByTask({f"look {n}": look for n in range(len(runs))}), store)
    async with cluster(shop, context, temporal_address) as server:
        app_a, engine_a = server(**FAST)
        app_b, engine_b = server(**FAST)
        async with served(app_a) as url_a, httpx2.AsyncClient(base_url=url_a) as http_a, \
                served(app_b) as url_b, httpx2.AsyncClient(base_url=url_b) as http_b:
            for n, run_id in enumerate(runs):
                http = http_a if n % 2 else http_b
                started = await http.post("/v1/agents/support/runs", json={
                    "input": f"look {n}", "run_id": run_id}, headers=ANA)
                assert started.status_code == 202
            await asyncio.sleep(10 * FAST["sweep"])  # many sweeps of each
            for n, run_id in enumerate(runs):
                starter, other = (engine_a, engine_b) if n % 2 else (engine_b, engine_a)
                assert run_id in starter._watching and run_id not in other._watching
                held, _ = await store.get_versioned(f"agentkit:serve:follow:{run_id}")
                assert held["owner"] == starter.followers.owner
            shop.release.set()
            for run_id in runs:
                await until(lambda r=run_id: _is(store, r, "complete"), "each run ends")
            assert engine_a._watching == engine_b._watching == {}


async def test_a_follower_whose_run_was_taken_over_writes_nothing(
    temporal_address: str,
) -> None:
    """A server taken for dead while it followed a run (a stall past its lease) finds
    on waking that another server follows the run now: it writes neither the record nor
    the events of the result it got, and leaves the run to the other. (The other is
    stood for by its heartbeat and the follow key; when that heartbeat is a lease old,
    this server's sweep takes the run back and ends its record.)"""
    shop = Shop()
    store = InMemoryStore()
    run_id = f"t-{uuid.uuid4().hex[:12]}"
    look = [Turn(tool_calls=(ToolCall("c1", "slow_lookup", {"order_id": "A"}),)),
            Turn(content="It shipped.")]
    context = context_for(ByTask({"look": look}), store)
    key = f"agentkit:serve:follow:{run_id}"
    async with cluster(shop, context, temporal_address) as server:
        app, engine = server(**FAST)
        async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
            started = await http.post("/v1/agents/support/runs", json={
                "input": "look", "run_id": run_id}, headers=ANA)
            assert started.status_code == 202
            assert run_id in engine._watching
            elsewhere = asyncio.create_task(_beating(store, "elsewhere"))
            await store.set("agentkit:serve:alive:elsewhere", {"at": time.time()})
            _, version = await store.get_versioned(key)
            await store.set_versioned(key, {"owner": "elsewhere"}, expected_version=version)
            shop.release.set()
            await until(lambda: _not_watched(engine, run_id), "the follower stops")
            assert await _status(store, run_id) == "running"
            assert (await store.get_versioned(key))[0] == {"owner": "elsewhere"}
            elsewhere.cancel()  # the other server dies
            await until(lambda: _is(store, run_id, "complete"), "taken back, and ended")
            run = (await http.get(f"/v1/runs/{run_id}", headers=ANA)).json()
            events = await sse(http, f"/v1/runs/{run_id}/events")
    assert run["output"] == "It shipped."
    assert [e["event"] for e in events].count("final") == 1


class FlakyHistory(Interceptor):
    """Temporal's own client interceptor: the first ``failures`` reads of a workflow's
    history (what waiting for a run's result does) fail as a frontend that is briefly
    unavailable does."""

    def __init__(self, failures: int) -> None:
        self.left = failures

    def intercept_client(self, next: OutboundInterceptor) -> OutboundInterceptor:
        return _Flaky(next, self)


class _Flaky(OutboundInterceptor):
    def __init__(self, next: OutboundInterceptor, flaky: FlakyHistory) -> None:
        super().__init__(next)
        self.flaky = flaky

    def fetch_workflow_history_events(self, input: FetchWorkflowHistoryEventsInput) -> Any:
        if self.flaky.left <= 0:
            return super().fetch_workflow_history_events(input)
        self.flaky.left -= 1
        return _Unavailable()


class _Unavailable:
    def __aiter__(self) -> _Unavailable:
        return self

    async def __anext__(self) -> Any:
        raise RPCError("the frontend is unavailable (a test's interceptor)",
                       RPCStatusCode.UNAVAILABLE, b"")


async def test_a_follower_retries_what_temporal_refuses_for_a_moment(
    temporal_address: str,
) -> None:
    shop = Shop()
    store = InMemoryStore()
    run_id = f"t-{uuid.uuid4().hex[:12]}"
    flaky = FlakyHistory(failures=2)
    context = context_for(ByTask({"refund A": refund_turns("A", 10)}), store)
    async with cluster(shop, context, temporal_address, interceptors=[flaky]) as server:
        app, _ = server(**FAST)
        async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
            started = await http.post("/v1/agents/support/runs", json={
                "input": "refund A", "run_id": run_id}, headers=ANA)
            assert started.status_code == 202
            await until(lambda: _has(http, run_id), "the inbox lists the run")
            assert flaky.left == 0  # both failures were met, and retried past
            decided = await http.post(f"/v1/runs/{run_id}/decisions",
                                      json={"decisions": {"c1": "approve"}}, headers=ANA)
            assert decided.status_code == 202
            await until(lambda: _is(store, run_id, "complete"), "the run ends")
    assert shop.refunds == [("A", 10)]


async def test_a_run_whose_workflow_does_not_exist_is_given_up_once(
    temporal_address: str,
) -> None:
    """NOT_FOUND says the run cannot be followed: the follower gives up, and the
    server's sweeps do not take the run again."""
    shop = Shop()
    store = InMemoryStore()
    run_id = f"t-{uuid.uuid4().hex[:12]}"
    now = time.time()
    await store.put_run(RunRecord(run_id=run_id, agent="support", status="running",
                                  scope="1:1", created=now, updated=now))
    context = context_for(ByTask({}), store)
    async with cluster(shop, context, temporal_address) as server:
        app, engine = server(**FAST)
        async with served(app):
            await until(lambda: _given_up(engine, run_id), "the follower gives up")
            _, version = await store.get_versioned(f"agentkit:serve:follow:{run_id}")
            await asyncio.sleep(5 * FAST["sweep"])
            assert run_id not in engine._watching
            assert (await store.get_versioned(f"agentkit:serve:follow:{run_id}"))[1] == version
            assert await _status(store, run_id) == "running"


async def _has(http: httpx2.AsyncClient, run_id: str) -> bool:
    return run_id in await _inbox(http)


async def _is(store: Any, run_id: str, status: str) -> bool:
    return await _status(store, run_id) == status


async def _given_up(engine: TemporalEngine, run_id: str) -> bool:
    return run_id in engine._given_up and run_id not in engine._watching


@pytest.mark.parametrize(("option", "value"), [("follow_lease", 0), ("sweep", -1.0),
                                               ("sweep", "15"), ("follow_lease", True)])
def test_lease_and_sweep_are_seconds_above_zero(option: str, value: Any) -> None:
    with pytest.raises(ValueError, match=rf"TemporalEngine\({option}=...\) is a number of "
                       rf"seconds above 0, got {value!r}"):
        TemporalEngine("localhost:7233", task_queue="agents", **{option: value})


async def _not_watched(engine: TemporalEngine, run_id: str) -> bool:
    return run_id not in engine._watching


async def _beating(store: InMemoryStore, owner: str) -> None:
    """The heartbeat of a server that is up, as ``owner``, until cancelled."""
    while True:
        await store.set(f"agentkit:serve:alive:{owner}", {"at": time.time()})
        await asyncio.sleep(0.1)


async def test_a_run_whose_follow_key_this_server_holds_is_not_an_orphan_to_it() -> None:
    # Starting a run or handing it a decision takes the key before the follower starts;
    # a sweep in between must not take the run over again (two followers of one run,
    # the older of which then finds its key moved on and drops the run's event log).
    store = InMemoryStore()
    mine = Followers(store, owner="server-b", lease=30.0, sweep=1.0)
    other = Followers(store, owner="server-a", lease=30.0, sweep=1.0)
    record = RunRecord(run_id="r1", agent="support", status="running", scope="0:0",
                       created=1.0, updated=1.0)
    await store.put_run(record)
    await mine.beat()
    await mine.take("r1")
    assert await mine.orphans([record]) == []
    assert await other.orphans([record]) == []  # B beats: its run is followed
