"""``agentkit temporal worker``: one-line errors for what it cannot use, and a worker
that serves the module's agents (the crash test runs two of them)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentkit.cli import main

AGENTKIT = Path(sys.executable).parent / "agentkit"

NO_CONTEXT = """
from agentkit.agents import Agent
helper = Agent("helper", "fake", "You help.")
"""

WITH_CONTEXT = NO_CONTEXT + """
import agentkit
from agentkit.core.testing import FakeLLM

def context():
    return agentkit.make_ctx(FakeLLM("hi"))
"""


def worker(tmp_path: Path, source: str, *args: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "my_agents.py").write_text(source)
    return subprocess.run(
        [str(AGENTKIT), "temporal", "worker", *args, "--task-queue", "q"],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )


@pytest.mark.parametrize(
    ("source", "target", "message"),
    [
        (NO_CONTEXT, "{name}",
         "agentkit: error: '{name}' has no context(): define `def context() -> RunContext` "
         "(e.g. returning agentkit.make_ctx(llm, store=...)) for the worker's activities"),
        (WITH_CONTEXT, "{name}:context",
         "agentkit: error: no agents found in '{name}:context': point at a module with "
         "top-level Agent objects, an Agent, or a list of them"),
        (WITH_CONTEXT, "{name}:nothing",
         "agentkit: error: '{name}' has no attribute 'nothing'"),
        ("raise RuntimeError('boom')", "{name}", None),
    ],
    ids=["no-context", "no-agents", "no-attribute", "import-fails"],
)
def test_mistakes_are_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
    source: str, target: str, message: str | None,
) -> None:
    name = f"agents_{tmp_path.name}"  # a fresh module name per case
    (tmp_path / f"{name}.py").write_text(source)
    monkeypatch.chdir(tmp_path)
    status = main(["temporal", "worker", target.format(name=name), "--task-queue", "q"])
    assert status == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1
    if message is None:
        assert lines[0].startswith(f"agentkit: error: importing '{name}' failed at ")
        assert lines[0].endswith("RuntimeError: boom")
    else:
        assert lines[0] == message.format(name=name)


def test_unreachable_server_is_one_line(tmp_path: Path) -> None:
    done = worker(tmp_path, WITH_CONTEXT, "my_agents", "--address", "127.0.0.1:1")
    assert done.returncode == 2
    assert done.stderr.startswith("agentkit: error: cannot reach Temporal at 127.0.0.1:1: ")
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_worker_serves_the_module_agents(tmp_path: Path, temporal_address: str) -> None:
    (tmp_path / "my_agents.py").write_text(WITH_CONTEXT)
    proc = subprocess.Popen(
        [str(AGENTKIT), "temporal", "worker", "my_agents", "--address", temporal_address,
         "--namespace", "default", "--task-queue", "cli-q"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(tmp_path)},
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == (
            f"agentkit: worker for helper on task queue 'cli-q' at {temporal_address} "
            "(namespace 'default')\n"
        )
        code = (
            "import asyncio\n"
            "from temporalio.client import Client\n"
            "from agentkit.integrations.temporal import TemporalAgents\n"
            "async def main():\n"
            f"    client = await Client.connect({temporal_address!r})\n"
            "    result = await TemporalAgents(client, task_queue='cli-q').run('helper', 'hi')\n"
            "    print(result.stop_reason, result.output, flush=True)\n"
            "asyncio.run(main())\n"
            # The SDK's native threads can crash the interpreter while it finalizes after
            # an update call (SIGSEGV/SIGABRT, 'PyGILState_Release ... finalizing'), now
            # and then; docs/temporal.md says so. Leave without finalizing.
            "import os; os._exit(0)\n"
        )
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=60, check=False)
        assert (done.returncode, done.stdout, done.stderr[-2000:]) == (0, "complete hi\n", "")
    finally:
        proc.kill()
        proc.wait(timeout=10)
