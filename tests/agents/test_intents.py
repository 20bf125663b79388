"""Side effects across crashes: a worker SIGKILLed while a side-effecting tool runs, or
after it returned but before its result was recorded, and a fresh process recovers the
run from the same SQLite file. The body runs at most once unless the tool is declared
idempotent; otherwise the outcome is reported as unknown, or held for a person."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

_APP = '''
import asyncio, json, os, sys, time
from agentkit.agents import Agent, RunNotResumable
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ToolCall
from agentkit.core.policies import idempotent
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.state.stores.sqlite import SQLiteStore
from agentkit.tools import tool

db, folder, command, *options = sys.argv[1:]
PAUSE = os.environ.get("PAUSE_AT", "")  # "body" or "returned": where to wait to be killed


def mark(name):
    open(os.path.join(folder, name), "w").close()


def pause(where):
    if PAUSE == where:
        mark("paused-" + where)
        time.sleep(600)  # the test kills us here


def charge_body(order_id):
    with open(os.path.join(folder, "effects"), "a") as f:
        f.write("charge " + order_id + "\\n")  # the side effect: one line per run
    pause("body")
    return "charged " + order_id


@tool(side_effecting=True)
def charge(order_id: str) -> str:
    """Charge the customer's card for an order; must never happen twice."""
    return charge_body(order_id)


@tool(side_effecting=True, idempotent=True, name="charge_safe")
def charge_safe(order_id: str) -> str:
    """Charge with the payment provider's own idempotency key: safe to repeat."""
    return charge_body(order_id)


async def pause_after_return(request, ctx, call_next):
    result = await call_next(request, ctx)
    pause("returned")  # the body returned; the run has not recorded its result
    return result


async def main():
    name = "charge_safe" if "safe" in options else "charge"
    call = ToolCall("c1", name, {"order_id": "A1"})
    turns = [Turn(tool_calls=(call,))] if command == "start" else []
    turns.append(Turn(content="All done."))
    middleware = [pause_after_return] + ([idempotent()] if "idempotent" in options else [])
    ctx = make_test_ctx(
        llm=FakeLLM.script(turns),
        store=SQLiteStore(db),
        autonomy="gated" if "gated" in options else "auto",
        correlation_id="run-1" if command == "start" else None,
        tool_middleware=middleware,
    )
    agent = Agent("till", "fake", "p", cognition=ReActCognition([charge, charge_safe]))
    if command == "start":
        result = await agent.run("charge order A1", ctx)
    elif command == "recover":
        result = await agent.recover("run-1", ctx)
    else:
        result = await agent.resume("run-1", {"c1": command.split(":")[1]}, ctx)
    suspended = result.evals.get("suspended")
    print(json.dumps({
        "stop_reason": result.stop_reason,
        "suspended": [suspended.reason, [c.id for c in suspended.pending]] if suspended else None,
        "tools": [[m.content, m.is_error] for m in result.messages if m.role == "tool"],
    }))

asyncio.run(main())
'''

UNKNOWN = (
    "The outcome of this call to 'charge' is unknown: the worker running it stopped (it "
    "crashed or was killed) after the call started and before its result was recorded, so "
    "it may or may not have taken effect. It was not run again: {why}. Check whether it "
    "took effect before repeating it."
)


class App:
    def __init__(self, tmp_path: Path) -> None:
        self.folder = tmp_path
        self.script = tmp_path / "app.py"
        self.script.write_text(_APP)
        self.db = tmp_path / "runs.db"

    def argv(self, command: str, *options: str) -> list[str]:
        return [sys.executable, str(self.script), str(self.db), str(self.folder), command,
                *options]

    def start_and_kill(self, pause_at: str, *options: str, command: str = "start") -> None:
        """Run ``command``, wait until it pauses at ``pause_at``, and SIGKILL it there."""
        env = {**os.environ, "PAUSE_AT": pause_at}
        proc = subprocess.Popen(self.argv(command, *options), env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        marker = self.folder / f"paused-{pause_at}"
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert proc.poll() is None, proc.communicate()[1].decode()
            assert time.monotonic() < deadline, "the run never reached the pause"
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL
        marker.unlink()

    def run(self, command: str, *options: str) -> Any:
        done = subprocess.run(self.argv(command, *options), capture_output=True, text=True,
                              timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def effects(self) -> list[str]:
        path = self.folder / "effects"
        return path.read_text().splitlines() if path.exists() else []


@pytest.mark.parametrize("pause_at", ["body", "returned"])
def test_a_call_killed_mid_flight_is_not_run_again_and_the_model_is_told(
    tmp_path: Path, pause_at: str
) -> None:
    app = App(tmp_path)
    app.start_and_kill(pause_at)
    assert app.effects() == ["charge A1"]

    recovered = app.run("recover")
    assert recovered == {
        "stop_reason": "complete",
        "suspended": None,
        "tools": [[UNKNOWN.format(why="'charge' is not declared idempotent"), True]],
    }
    assert app.effects() == ["charge A1"]


@pytest.mark.parametrize("pause_at", ["body", "returned"])
def test_an_idempotent_tool_killed_mid_flight_runs_again(tmp_path: Path, pause_at: str) -> None:
    app = App(tmp_path)
    app.start_and_kill(pause_at, "safe")

    recovered = app.run("recover", "safe")
    assert recovered == {
        "stop_reason": "complete", "suspended": None, "tools": [["charged A1", False]],
    }
    assert app.effects() == ["charge A1", "charge A1"]


def test_a_result_idempotent_recorded_before_the_kill_is_used_not_rerun(tmp_path: Path) -> None:
    app = App(tmp_path)
    app.start_and_kill("returned", "idempotent")

    recovered = app.run("recover", "idempotent")
    assert recovered == {
        "stop_reason": "complete", "suspended": None, "tools": [["charged A1", False]],
    }
    assert app.effects() == ["charge A1"]


def test_under_gated_autonomy_an_unknown_outcome_waits_for_a_person(tmp_path: Path) -> None:
    app = App(tmp_path)
    assert app.run("start", "gated")["suspended"] == ["awaiting_approval", ["c1"]]
    app.start_and_kill("body", "gated", command="resume:approve")  # approved, then killed
    assert app.effects() == ["charge A1"]

    held = app.run("recover", "gated")
    assert held == {"stop_reason": "suspended", "suspended": ["outcome_unknown", ["c1"]],
                    "tools": []}
    assert app.effects() == ["charge A1"]

    refused = app.run("resume:reject", "gated")
    assert refused == {
        "stop_reason": "complete", "suspended": None,
        "tools": [[UNKNOWN.format(why="a person decided not to run it again"), True]],
    }
    assert app.effects() == ["charge A1"]


def test_under_gated_autonomy_a_person_may_run_it_again(tmp_path: Path) -> None:
    app = App(tmp_path)
    app.run("start", "gated")
    app.start_and_kill("returned", "gated", command="resume:approve")

    assert app.run("recover", "gated")["suspended"] == ["outcome_unknown", ["c1"]]
    again = app.run("resume:approve", "gated")
    assert again == {
        "stop_reason": "complete", "suspended": None, "tools": [["charged A1", False]],
    }
    assert app.effects() == ["charge A1", "charge A1"]
