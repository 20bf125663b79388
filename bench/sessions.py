"""What a turn of a session costs: time per turn of ten-turn sessions against a fresh run
given the same history, plus the one read and one write a session adds; and the store
operations a session makes, counted.

Run with ``.venv/bin/python bench/sessions.py``. Standard
library only. Each timed figure is the median over ``--repeat`` sessions (or loops).
"""

import argparse
import asyncio
import cProfile
import pstats
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

from agentkit.agents import Agent
from agentkit.core.contracts.ports import Store
from agentkit.core.contracts.types import Message, Scope
from agentkit.core.testing import FakeLLM, make_test_ctx
from agentkit.state.sessions import SessionRecord
from agentkit.state.stores import InMemoryStore, SQLiteStore

TURNS = 10
SCOPE = Scope("bench", "chat")
AGENT = Agent("chat", "fake", "You are a helpful assistant. Answer briefly.")
ANSWER = "Sure: here is a short answer of a few words, as a chat model would give."


def task(n: int) -> str:
    return f"Question number {n}: what should I do about order A-{n} and its refund?"


class CountingStore:
    """Passes every call to ``store`` and counts the versioned ones by key family."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.counts: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    async def get_versioned(self, key: str) -> tuple[Any, int]:
        self.counts["read " + key.split(":", 1)[0]] += 1
        return await self.store.get_versioned(key)

    async def get_versioned_many(self, keys: Any) -> tuple[tuple[Any, int], ...]:
        self.counts["read many " + keys[0].split(":", 1)[0]] += 1  # one round trip
        return await self.store.get_versioned_many(keys)

    async def append(self, log: str, value: Any) -> None:
        self.counts["append " + log.split(":", 1)[0]] += 1
        await self.store.append(log, value)

    async def list(self, log: str) -> tuple[Any, ...]:
        self.counts["list " + log.split(":", 1)[0]] += 1
        return await self.store.list(log)

    async def set_versioned(self, key: str, value: Any, *, expected_version: int) -> int:
        self.counts["write " + key.split(":", 1)[0]] += 1
        return await self.store.set_versioned(key, value, expected_version=expected_version)


def history(turns: int) -> tuple[Message, ...]:
    return tuple(
        m for n in range(turns) for m in (Message("user", task(n)), Message("assistant", ANSWER))
    )


async def clock(op: Awaitable[Any]) -> float:
    start = time.perf_counter()
    await op
    return time.perf_counter() - start


async def measure(store: Store, repeat: int, label: str) -> dict[str, list[float]]:
    """Per turn n (0-based), the medians of: the session's turn; a fresh run given the
    same n turns as history= (no session); one read of the session as it stood before
    the turn; one write of it as it stands after. They are taken interleaved, turn by
    turn, so a machine busy with other work slows all four alike, and the two runs of a
    pair swap places every session."""
    figures: dict[str, list[list[float]]] = {k: [[] for _ in range(TURNS)]
                                              for k in ("turn", "fresh", "read", "write")}
    for r in range(repeat + 1):  # the first session warms up and is not counted
        session = f"{label}-{r}"
        for n in range(TURNS):
            in_session = AGENT.run(task(n), make_test_ctx(FakeLLM(ANSWER), store=store,
                                                          scope=SCOPE), session=session)
            fresh_run = AGENT.run(task(n), make_test_ctx(FakeLLM(ANSWER), store=store,
                                                         scope=SCOPE), history=history(n))
            # Whichever of a pair runs second finds the caches warm (about 10% faster
            # here), so the order alternates from one session to the next.
            if r % 2:
                fresh = await clock(fresh_run)
                turn = await clock(in_session)
            else:
                turn = await clock(in_session)
                fresh = await clock(fresh_run)
            key = f"bench:{session}:{n}"
            await store.set_versioned(key, SessionRecord(history(n)), expected_version=0)
            read = await clock(store.get_versioned(key))
            write = await clock(store.set_versioned(
                key, SessionRecord(history(n + 1)), expected_version=1
            ))
            if r:
                for name, value in (("turn", turn), ("fresh", fresh), ("read", read),
                                    ("write", write)):
                    figures[name][n].append(value)
    medians = {k: [statistics.median(v) for v in per_turn] for k, per_turn in figures.items()}
    # Whole sessions: each repetition's ten turns summed, against its ten bounds summed.
    medians["session"] = [statistics.median(
        sum(figures["turn"][n][r] for n in range(TURNS)) for r in range(repeat)
    )]
    medians["bounds"] = [statistics.median(
        sum(figures[k][n][r] for k in ("fresh", "read", "write") for n in range(TURNS))
        for r in range(repeat)
    )]
    return medians


async def count_calls() -> tuple[float, float]:
    """cProfile's function calls per run: a session's ten turns against ten fresh runs
    given the same histories, on InMemoryStore."""
    store = InMemoryStore()
    prior = [history(n) for n in range(TURNS)]

    async def session() -> None:
        for n in range(TURNS):
            ctx = make_test_ctx(FakeLLM(ANSWER), store=store, scope=SCOPE)
            await AGENT.run(task(n), ctx, session="profiled")

    async def fresh() -> None:
        for n in range(TURNS):
            ctx = make_test_ctx(FakeLLM(ANSWER), store=store, scope=SCOPE)
            await AGENT.run(task(n), ctx, history=prior[n])

    counts = []
    for op in (session, fresh):
        profiler = cProfile.Profile()
        profiler.enable()
        await op()
        profiler.disable()
        counts.append(pstats.Stats(profiler).total_calls / TURNS)
    return counts[0], counts[1]


async def count_operations() -> Counter[str]:
    store = CountingStore(InMemoryStore())
    for n in range(TURNS):
        ctx = make_test_ctx(FakeLLM(ANSWER), store=store, scope=SCOPE)
        await AGENT.run(task(n), ctx, session="counted")
    return store.counts


def us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f} µs"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    print(f"Python {sys.version.split()[0]}; {TURNS}-turn sessions, medians of {args.repeat}")
    with tempfile.TemporaryDirectory() as folder:
        sqlite = SQLiteStore(Path(folder) / "bench.db")
        stores: list[tuple[str, Store]] = [
            ("InMemoryStore", InMemoryStore()), ("SQLiteStore", sqlite)
        ]
        for name, store in stores:
            f = await measure(store, args.repeat, name)
            print(f"\n{name}: turn, session run | fresh run with history= + read + write "
                  "= bound | ratio")
            for n in range(TURNS):
                bound = f["fresh"][n] + f["read"][n] + f["write"][n]
                print(f"  {n + 1:>2}  {us(f['turn'][n]):>10} | {us(f['fresh'][n]):>10} + "
                      f"{us(f['read'][n]):>7} + {us(f['write'][n]):>7} = {us(bound):>10} | "
                      f"{f['turn'][n] / bound:.2f}")
            whole, bounds = f["session"][0], f["bounds"][0]
            print(f"  all ten turns {us(whole)} against {us(bounds)}: {whole / bounds:.2f}")
        sqlite.close()
    in_session, fresh = await count_calls()
    print(f"\nFunction calls per run: session turn {in_session:.1f}, fresh run with "
          f"history= {fresh:.1f}")
    counts = await count_operations()
    print(f"\nStore operations over one {TURNS}-turn session (InMemoryStore):")
    for name, value in sorted(counts.items()):
        print(f"  {name:<20} {value:>3}  ({value / TURNS:.1f} per turn)")


if __name__ == "__main__":
    asyncio.run(main())
