"""Whether a session's writes stay flat as its conversation grows: bytes written and time
per turn over one long conversation on SQLite.

Run with ``.venv/bin/python bench/session_growth.py`` (``--turns 200``). Standard
library only. Bytes are the encoded values the store is asked to write (the store codec's
JSON text, which is what lands in the database), counted by a wrapper around a real
``SQLiteStore``, for every write a turn makes: checkpoints, session rows, the scope's
list. Time is each turn's wall clock, end to end.
"""

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from agentkit.agents import Agent
from agentkit.core.contracts.types import Scope
from agentkit.core.testing import FakeLLM, make_test_ctx
from agentkit.state.codec import dumps
from agentkit.state.stores import SQLiteStore

SCOPE = Scope("bench", "chat")
AGENT = Agent("chat", "fake", "You are a helpful assistant. Answer briefly.")
ANSWER = "Sure: here is a short answer of a few words, as a chat model would give."


class BytesWritten:
    """Passes every call to ``store``; counts the encoded bytes of each write."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self.written = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    async def set(self, key: str, value: Any, *, ttl: float | None = None) -> None:
        self.written += len(key) + len(dumps(value))
        await self.store.set(key, value, ttl=ttl)

    async def append(self, log: str, value: Any) -> None:
        self.written += len(log) + len(dumps(value))
        await self.store.append(log, value)

    async def set_versioned(self, key: str, value: Any, *, expected_version: int) -> int:
        self.written += len(key) + len(dumps(value))
        return await self.store.set_versioned(key, value, expected_version=expected_version)


async def main(turns: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "growth.db"
        store = SQLiteStore(path)
        counted = BytesWritten(store)
        per_turn: list[tuple[int, float]] = []
        for n in range(1, turns + 1):
            ctx = make_test_ctx(FakeLLM(ANSWER), store=counted, scope=SCOPE)  # type: ignore[arg-type]
            before, start = counted.written, time.perf_counter()
            await AGENT.run(f"Question {n}: what about order A-{n} and its refund?", ctx,
                            session="long")
            per_turn.append((counted.written - before, time.perf_counter() - start))
        store.close()
        size = path.stat().st_size
    total = sum(b for b, _ in per_turn)
    print(f"{'turn':>6} {'bytes written':>14} {'ms (median of 5 around)':>24}")
    for n in sorted({1, 10, 50, 100, turns}):
        if n > turns:
            continue
        near = [t for _, t in per_turn[max(0, n - 3):n + 2]]
        print(f"{n:>6} {per_turn[n - 1][0]:>14,} {statistics.median(near) * 1000:>24.1f}")
    print(f"all {turns} turns: {total:,} bytes written; database file {size:,} bytes")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=200)
    asyncio.run(main(parser.parse_args().turns))
