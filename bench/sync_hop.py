"""Why a run with a sync tool costs more than the same run with an async tool plus one
thread hop: the runs of bench/run.py beside a run whose async tool makes the same
``asyncio.to_thread`` hop, and the floors with and without bare-Python work.

Run with ``.venv/bin/python bench/sync_hop.py [RUNS] [ROUNDS] [WORK]``; every variant is
timed in turns, and each figure is the median of the rounds (µs per run).
"""

import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as bench  # the operations of bench/run.py, measured the same way

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.tools import tool


def _answer(city: str) -> str:
    return city


@tool(side_effecting=False, idempotent=True, name="forecast")
async def forecast_hop(city: str, days: int = 3) -> str:
    """Return a short weather forecast for a city over the next few days."""
    return await asyncio.to_thread(_answer, city)  # an async tool making the sync tool's hop


HOP_AGENT = Agent(
    "forecaster", "fake", "Answer weather questions.",
    cognition=ReActCognition(tools=[forecast_hop]),
)


def _work(size: int) -> list[dict[str, object]]:
    return [{"a": i, "b": str(i)} for i in range(size)]


def floor_with_work(thread: bool, size: int) -> bench.Setup:
    """The floor of bench/run.py, with ``size`` dicts built after each step."""

    async def one() -> None:
        for step in range(2):
            await asyncio.sleep(0)
            _work(size)
            if step == 0:
                if thread:
                    await asyncio.to_thread(bench.forecast_sync.fn, city="Lisbon")
                else:
                    await bench.forecast_remote.fn(city="Lisbon")
                _work(size)

    async def setup(n: int) -> bench.Loop:
        async def run() -> None:
            for _ in range(n):
                await one()

        return run

    return setup


async def main(runs: int, rounds: int, size: int) -> None:
    setups = {
        "async tool": bench.remote_agent_runs(bench.ASYNC_AGENT),
        "async tool + hop": bench.remote_agent_runs(HOP_AGENT),
        "sync tool": bench.remote_agent_runs(bench.SYNC_AGENT),
        "floor": bench.floor_runs(True, "remote"),
        "floor, thread": bench.floor_runs(True, "thread"),
        "floor + work": floor_with_work(False, size),
        "floor, thread + work": floor_with_work(True, size),
    }
    samples: dict[str, list[float]] = {name: [] for name in setups}
    for setup in setups.values():
        await (await setup(runs))()  # warm-up
    for _ in range(rounds):
        for name, setup in setups.items():
            run = await setup(runs)
            start = time.perf_counter()
            await run()
            samples[name].append((time.perf_counter() - start) / runs * 1e6)
    median = {name: statistics.median(values) for name, values in samples.items()}
    for name, value in median.items():
        print(f"{name:22} {value:8.1f} µs")
    differences = (
        ("the hop alone (floor, thread - floor)", "floor, thread", "floor"),
        ("async tool + hop - async tool", "async tool + hop", "async tool"),
        ("sync tool - async tool", "sync tool", "async tool"),
    )
    for label, minuend, subtrahend in differences:
        print(f"{label}: {median[minuend] - median[subtrahend]:.1f} µs")
    print(
        f"the work: {median['floor + work'] - median['floor']:.1f} µs without the hop, "
        f"{median['floor, thread + work'] - median['floor, thread']:.1f} µs with it"
    )


if __name__ == "__main__":
    arguments = [int(a) for a in sys.argv[1:4]]
    asyncio.run(main(*(arguments + [200, 9, 40][len(arguments):])))
