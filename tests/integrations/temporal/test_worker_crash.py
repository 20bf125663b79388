"""Two worker processes (``agentkit temporal worker``); the one running the tool calls is
killed with SIGKILL mid-call; the run completes on the other. The idempotent tool ran at
least once and the run holds one result for it; the side-effecting tool that is not
idempotent ran at most once, and the model is told its outcome is unknown."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from temporalio.client import Client

from agentkit.core.contracts.types import Message
from agentkit.integrations.temporal import RunOptions, TemporalAgents

HERE = Path(__file__).parent
AGENTKIT = Path(sys.executable).parent / "agentkit"
UNKNOWN = (
    "The outcome of this call to 'charge_card' is unknown: the worker running it stopped "
    "(it crashed or was killed) after the call started and before its result was "
    "recorded, so it may or may not have taken effect. It was not run again: "
    "'charge_card' is not declared idempotent, so it is not retried. "
    "Check whether it took effect before repeating it."
)


def _wait_for(predicate: object, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class Workers:
    """Worker processes started with the CLI, all killed when the test ends."""

    def __init__(self, address: str, task_queue: str, tmp_path: Path) -> None:
        self.effects = tmp_path / "effects.txt"
        self.effects.touch()
        self.hold = tmp_path / "hold"
        self.hold.touch()
        self.args = [str(AGENTKIT), "temporal", "worker", "crash_agents", "--address", address,
                     "--namespace", "default", "--task-queue", task_queue]
        self.env = {
            **os.environ,
            "EFFECTS_FILE": str(self.effects),
            "HOLD_FILE": str(self.hold),
            "STORE_FILE": str(tmp_path / "store.sqlite"),
            "PYTHONPATH": str(HERE),
        }
        self.procs: list[subprocess.Popen[str]] = []

    def start(self) -> subprocess.Popen[str]:
        proc = subprocess.Popen(self.args, env=self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        self.procs.append(proc)
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("agentkit: worker for payer on task queue"), (
            line + (proc.stderr.read() if proc.stderr and proc.poll() is not None else "")
        )
        return proc

    def started(self) -> list[str]:
        """Tool executions so far, without the pid."""
        return [line.rsplit(" ", 1)[0] for line in self.effects.read_text().splitlines()]

    def pids(self) -> set[int]:
        return {int(line.split()[-1]) for line in self.effects.read_text().splitlines()}

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=10)


@pytest.fixture
def workers(temporal_address: str, task_queue: str, tmp_path: Path) -> Iterator[Workers]:
    started = Workers(temporal_address, task_queue, tmp_path)
    try:
        yield started
    finally:
        started.stop()


async def test_killed_worker_run_completes_on_the_other(
    client: Client, task_queue: str, workers: Workers
) -> None:
    first = workers.start()
    agents = TemporalAgents(client, task_queue=task_queue,
                            options=RunOptions(heartbeat_timeout=2.0))
    run_id = await agents.start("payer", "Pay.", run_id="run-crash")
    _wait_for(lambda: len(workers.started()) == 2, "both tool calls to start")
    assert workers.pids() == {first.pid}
    second = workers.start()
    os.kill(first.pid, signal.SIGKILL)  # mid-call: both tools are holding
    workers.hold.unlink()

    result = await agents.result(run_id)

    assert workers.started().count("charge_card 500") == 1
    assert workers.started().count("set_flag ready") == 2
    assert workers.pids() == {first.pid, second.pid}
    assert result.stop_reason == "complete"
    tool_results = [m for m in result.messages if m.role == "tool"]
    assert tool_results == [
        Message(role="tool", content="flag ready is on", tool_call_id="c-flag",
                name="set_flag"),
        Message(role="tool", content=UNKNOWN, tool_call_id="c-charge", name="charge_card",
                is_error=True),
    ]
    assert result.output == f"flag ready is on | {UNKNOWN}"
