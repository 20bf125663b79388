"""Bytes per Temporal payload of one agent run, read from its workflow history.

Run with ``.venv/bin/python bench/temporal_payloads.py [--page BYTES]`` (dev extra). It
starts a local dev server and an in-process worker, runs the two-turn agent of
``bench/temporal_agents.py`` (model call, one ``forecast`` call, model call) and prints,
for every activity, the size of its input and result payloads as they sit in the
history, and how many payloads crossed by key (stored as blobs in the workers' store)
rather than inline. ``--page`` makes the forecast that many bytes long, to see large
results go by key.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from temporalio.api.common.v1 import Payload
from temporalio.testing import WorkflowEnvironment

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import agentkit  # noqa: E402
from agentkit.agents import Agent  # noqa: E402
from agentkit.agents.cognition import ReActCognition  # noqa: E402
from agentkit.integrations.temporal import AgentWorker, TemporalAgents  # noqa: E402
from agentkit.tools import tool  # noqa: E402
from bench.temporal_agents import TwoTurns, agent  # noqa: E402

_STORED = b"agentkit/blob"


def _sizes(payloads: list[Payload]) -> str:
    parts = [f"{p.ByteSize():,} B" + (" (by key)" if p.metadata.get("encoding") == _STORED
                                        else "") for p in payloads]
    return ", ".join(parts) or "-"


def _agent(page: int) -> Agent:
    if page <= 0:
        return agent

    @tool(side_effecting=False)
    async def forecast(city: str) -> str:
        """Return today's weather forecast for a city."""
        return f"{city}: " + "sunny " * (page // 6)

    return Agent("bench", "two-turns", "You report the weather.",
                 cognition=ReActCognition([forecast]))


async def main(page: int) -> None:
    server = Path(sys.executable).parent / "temporal"
    ctx = agentkit.make_ctx(TwoTurns())
    async with await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(server), ui=False, dev_server_log_level="error"
    ) as env:
        async with AgentWorker(env.client, task_queue="bench", agents=[_agent(page)],
                               context=lambda: ctx):
            agents = TemporalAgents(env.client, task_queue="bench", store=ctx.store)
            result = await agents.run("bench", "Weather in Lisbon?", run_id="payloads")
            assert result.stop_reason == "complete", result
        history = await env.client.get_workflow_handle("payloads").fetch_history()
    names: dict[int, str] = {}
    total = 0
    for event in history.events:
        if event.HasField("activity_task_scheduled_event_attributes"):
            scheduled = event.activity_task_scheduled_event_attributes
            name = names[event.event_id] = scheduled.activity_type.name
            print(f"{name:24} input  {_sizes(list(scheduled.input.payloads))}")
            total += sum(p.ByteSize() for p in scheduled.input.payloads)
        if event.HasField("activity_task_completed_event_attributes"):
            done = event.activity_task_completed_event_attributes
            name = names[done.scheduled_event_id]
            print(f"{name:24} result {_sizes(list(done.result.payloads))}")
            total += sum(p.ByteSize() for p in done.result.payloads)
    print(f"all activity payloads: {total:,} B")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--page", type=int, default=0,
                        help="bytes of forecast text (0: the bench agent's short one)")
    asyncio.run(main(parser.parse_args().page))
