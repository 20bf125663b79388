"""Serve benchmarks: runs over HTTP against the same runs in process, and the registry's
pages at size.

Run with ``.venv/bin/python bench/serve.py``. A real uvicorn server on a free loopback
port serves one agent on a SQLite store; the model is scripted (one text answer), so the
figures are what the HTTP face and the registry add, not a model's latency.

- **200 runs at once**: 200 ``POST /v1/agents/{agent}/runs`` with ``"wait": true``
  started together; every one must complete. Reported: wall time, and the latency of a
  run over HTTP, p50 and p99, beside the same run started in process (``Agent.run`` on
  the same store) one at a time, the difference being what serving adds.
- **Listing 10,000 runs**: the registry holds 10,000 records; ``GET /v1/runs`` pages of
  50 (the first page, and one from the middle by its cursor) and ``list_runs`` on the
  store directly, per page.
- **The inbox with 1,000 pending**: 1,000 suspended runs, each waiting on one call;
  ``GET /v1/approvals`` pages of 50.
"""

from __future__ import annotations

import asyncio
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx2
import uvicorn

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.runs import RunQuery, RunRecord, WaitingCall
from agentkit.core.contracts.types import Scope
from agentkit.core.testing import FakeLLM, make_test_ctx
from agentkit.serve import create_app
from agentkit.state.stores.sqlite import SQLiteStore
from agentkit.tools import tool

SCOPE = Scope(org_id=0, domain_id=0)
NODELAY = [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]
"""Small writes go out at once on both ends (no Nagle wait for a delayed ACK)."""


@tool(side_effecting=False)
def noop(x: str) -> str:
    """Return the text it is given, unchanged, for the benchmark's agent."""
    return x


AGENT = Agent("bench", "fake", "You answer.", cognition=ReActCognition([noop]))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def timed(coro: Any) -> float:
    start = time.perf_counter()
    await coro
    return time.perf_counter() - start


async def serve(app: Any) -> tuple[uvicorn.Server, asyncio.Task[None], str]:
    sock = socket.socket()
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        await asyncio.sleep(0.01)
    return server, task, f"http://127.0.0.1:{sock.getsockname()[1]}"


async def runs_at_once(store: SQLiteStore, n: int) -> None:
    llm = FakeLLM(reply="Done.")
    inline: list[float] = []
    for i in range(50):
        ctx = make_test_ctx(llm=llm, store=store, correlation_id=f"inline-{i}")
        inline.append(await timed(AGENT.run("go", ctx)))
    app = create_app([AGENT], context=lambda: make_test_ctx(llm=llm, store=store))
    server, task, url = await serve(app)
    limits = httpx2.Limits(max_connections=n)
    transport = httpx2.AsyncHTTPTransport(limits=limits, socket_options=NODELAY)
    async with httpx2.AsyncClient(base_url=url, transport=transport, timeout=120) as http:
        async def one(i: int) -> float:
            start = time.perf_counter()
            response = await http.post("/v1/agents/bench/runs", json={
                "input": "go", "run_id": f"http-{i}", "wait": True})
            assert response.json()["status"] == "complete", response.text
            return time.perf_counter() - start

        wall = time.perf_counter()
        latencies = await asyncio.gather(*(one(i) for i in range(n)))
        wall = time.perf_counter() - wall
        serial = [await one(n + i) for i in range(50)]
    server.should_exit = True
    await task
    print(f"{n} runs at once over HTTP: all complete in {wall * 1e3:.0f} ms; "
          f"latency p50 {percentile(latencies, 0.5) * 1e3:.1f} ms, "
          f"p99 {percentile(latencies, 0.99) * 1e3:.1f} ms")
    p50_http, p99_http = percentile(serial, 0.5), percentile(serial, 0.99)
    p50_in, p99_in = percentile(inline, 0.5), percentile(inline, 0.99)
    print(f"one run at a time: in process p50 {p50_in * 1e3:.2f} ms p99 {p99_in * 1e3:.2f} ms;"
          f" over HTTP p50 {p50_http * 1e3:.2f} ms p99 {p99_http * 1e3:.2f} ms; "
          f"added p50 {(p50_http - p50_in) * 1e3:.2f} ms, p99 {(p99_http - p99_in) * 1e3:.2f} ms")


async def fill(store: SQLiteStore, n: int, status: str, prefix: str) -> None:
    now = time.time()
    for i in range(n):
        pending = () if status != "suspended" else (WaitingCall(
            call_id="c1", tool="noop", arguments=FrozenDict({"x": str(i)}), since=now),)
        await store.put_run(RunRecord(
            run_id=f"{prefix}{i:05d}", agent="bench", status=status, scope=SCOPE.key(),
            created=now + i * 1e-3, updated=now, pending=pending))


async def pages(store: SQLiteStore) -> None:
    await fill(store, 10_000, "complete", "done-")
    await fill(store, 1_000, "suspended", "wait-")
    app = create_app([AGENT], context=lambda: make_test_ctx(llm=FakeLLM(reply="x"),
                                                            store=store))
    server, task, url = await serve(app)
    async with httpx2.AsyncClient(base_url=url, timeout=60) as http:
        async def page(path: str) -> Any:
            response = await http.get(path)
            assert response.status_code == 200, response.text
            return response.json()

        first = [await timed(page("/v1/runs?limit=50")) for _ in range(20)]
        middle_cursor = (await store.list_runs(RunQuery(limit=1000))).next_cursor
        for _ in range(4):
            middle_cursor = (await store.list_runs(
                RunQuery(limit=1000, cursor=middle_cursor))).next_cursor
        middle = [await timed(page(f"/v1/runs?limit=50&cursor={middle_cursor}"))
                  for _ in range(20)]
        direct = [await timed(store.list_runs(RunQuery(limit=50, cursor=middle_cursor)))
                  for _ in range(20)]
        filtered = [await timed(store.list_runs(RunQuery(status="suspended", limit=50)))
                    for _ in range(20)]
        inbox = [await timed(page("/v1/approvals?limit=50")) for _ in range(20)]
        got = await page("/v1/approvals?limit=50")
        assert len(got["approvals"]) == 50
    server.should_exit = True
    await task
    med = statistics.median
    print(f"11,000 runs registered: GET /v1/runs page of 50: first {med(first) * 1e3:.2f} ms, "
          f"from a cursor 5,000 deep {med(middle) * 1e3:.2f} ms; list_runs on the store "
          f"{med(direct) * 1e3:.2f} ms, status=suspended {med(filtered) * 1e3:.2f} ms")
    print(f"inbox with 1,000 pending: GET /v1/approvals page of 50 {med(inbox) * 1e3:.2f} ms")


async def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        async with SQLiteStore(Path(folder) / "runs.db") as store:
            await runs_at_once(store, 200)
        async with SQLiteStore(Path(folder) / "pages.db") as store:
            await pages(store)
    print(f"python {sys.version.split()[0]}")


if __name__ == "__main__":
    asyncio.run(main())
