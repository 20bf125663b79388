"""Durable runs across OS processes over one SQLiteStore file: suspend here and resume
there, recover a run whose process was killed without redoing finished calls, and let
only one of two racing workers resume a run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

_APP = '''
import asyncio, json, os, sys
from agentkit.agents import Agent, RunNotResumable
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ToolCall
from agentkit.core.policies import idempotent
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.state.stores.sqlite import SQLiteStore
from agentkit.tools import tool

db, effects, command, run_id, *options = sys.argv[1:]
CHARGE = ToolCall("c-charge", "charge", {"order_id": "A1"})
NOTIFY = ToolCall("c-notify", "notify", {"to": "bob"})


def record(line):
    with open(effects, "a") as f:
        f.write(line + "\\n")


@tool(side_effecting=True)
def charge(order_id: str) -> str:
    """Charge the customer's card for an order; must never happen twice."""
    record("charge " + order_id)
    return "charged " + order_id


@tool(side_effecting=True)
def notify(to: str) -> str:
    """Send the customer a notification that their order was charged."""
    if "crash-in-notify" in options:
        os._exit(1)  # the process dies after charge finished, before notify acts
    record("notify " + to)
    return "notified " + to


async def crash_after_charge(request, ctx, call_next):
    result = await call_next(request, ctx)
    if "crash-after-charge" in options and request.name == "charge":
        os._exit(1)  # charge acted, but the run never checkpointed its result
    return result


def barrier():
    folder = os.path.join(os.path.dirname(effects), "barrier")
    os.makedirs(folder, exist_ok=True)
    open(os.path.join(folder, str(os.getpid())), "w").close()
    while len(os.listdir(folder)) < 2:
        pass


async def main():
    turns = {
        "start": [Turn(tool_calls=(CHARGE, NOTIFY))],
        "start-charge": [Turn(tool_calls=(CHARGE,))],
    }.get(command, []) + [Turn(content="All done.")]
    middleware = [crash_after_charge]
    if "idempotent" in options:
        middleware.append(idempotent())
    ctx = make_test_ctx(
        llm=FakeLLM.script(turns),
        store=SQLiteStore(db),
        autonomy="gated" if "gated" in options else "auto",
        correlation_id=run_id if command.startswith("start") else None,
        tool_middleware=middleware,
    )
    agent = Agent(
        "till", "fake", "p",
        cognition=ReActCognition([charge, notify], max_concurrency=1),
    )
    try:
        if command.startswith("start"):
            result = await agent.run("charge order A1", ctx)
        elif command == "resume":
            if "race" in options:
                barrier()
            result = await agent.resume(run_id, {"c-charge": "approve"}, ctx)
        else:
            result = await agent.recover(run_id, ctx)
    except RunNotResumable as exc:
        print(json.dumps({"not_resumable": str(exc)}))
        return
    suspended = result.evals.get("suspended")
    print(json.dumps({
        "stop_reason": result.stop_reason,
        "output": result.output,
        "run_id": result.run_id,
        "pending": [c.id for c in suspended.pending] if suspended else None,
        "tools": [[m.tool_call_id, m.content, m.is_error]
                  for m in result.messages if m.role == "tool"],
    }))

asyncio.run(main())
'''


class App:
    """The helper script, run as fresh OS processes over one SQLite file."""

    def __init__(self, tmp_path: Path) -> None:
        self.script = tmp_path / "app.py"
        self.script.write_text(_APP)
        self.db = tmp_path / "runs.db"
        self.effects = tmp_path / "effects.txt"
        self.effects.touch()

    def argv(self, command: str, run_id: str, *options: str) -> list[str]:
        return [sys.executable, str(self.script), str(self.db), str(self.effects), command,
                run_id, *options]

    def run(self, command: str, run_id: str, *options: str, exit_code: int = 0) -> Any:
        proc = subprocess.run(
            self.argv(command, run_id, *options),
            capture_output=True, text=True, timeout=60, check=False,
        )
        assert proc.returncode == exit_code, proc.stderr
        return json.loads(proc.stdout) if exit_code == 0 else None

    def effect_lines(self) -> list[str]:
        return self.effects.read_text().splitlines()


def unknown(tool: str) -> str:
    return (
        f"The outcome of this call to {tool!r} is unknown: the worker running it stopped (it "
        "crashed or was killed) after the call started and before its result was recorded, "
        "so it may or may not have taken effect. It was not run again: "
        f"{tool!r} is not declared idempotent. Check whether it took effect before "
        "repeating it."
    )


def tools_done(*entries: tuple[str, str]) -> list[list[Any]]:
    return [[call_id, content, False] for call_id, content in entries]


def test_a_run_suspended_in_one_process_resumes_in_a_fresh_one(tmp_path: Path) -> None:
    app = App(tmp_path)

    held = app.run("start-charge", "run-1", "gated")
    assert held == {
        "stop_reason": "suspended", "output": None, "run_id": "run-1",
        "pending": ["c-charge"], "tools": [],
    }
    assert app.effect_lines() == []

    done = app.run("resume", "run-1", "gated")
    assert done == {
        "stop_reason": "complete", "output": "All done.", "run_id": "run-1",
        "pending": None, "tools": tools_done(("c-charge", "charged A1")),
    }
    assert app.effect_lines() == ["charge A1"]

    again = app.run("resume", "run-1", "gated")
    assert again == {
        "not_resumable": "run 'run-1' cannot be resumed: it is complete, not suspended"
    }
    assert app.effect_lines() == ["charge A1"]


@pytest.mark.parametrize("middleware", [(), ("idempotent",)], ids=["plain", "idempotent"])
def test_a_killed_run_recovers_without_running_a_finished_call_twice(
    tmp_path: Path, middleware: tuple[str, ...]
) -> None:
    app = App(tmp_path)

    app.run("start", "run-2", "crash-in-notify", *middleware, exit_code=1)
    assert app.effect_lines() == ["charge A1"]

    recovered = app.run("recover", "run-2", *middleware)
    assert recovered == {
        "stop_reason": "complete", "output": "All done.", "run_id": "run-2", "pending": None,
        "tools": [*tools_done(("c-charge", "charged A1")), ["c-notify", unknown("notify"), True]],
    }
    assert app.effect_lines() == ["charge A1"]  # notify died mid-body: not run again

    again = app.run("recover", "run-2")
    assert again == {
        "not_resumable": "run 'run-2' cannot be resumed: it is complete, not running"
    }


def test_idempotent_protects_a_call_whose_result_was_never_checkpointed(
    tmp_path: Path,
) -> None:
    app = App(tmp_path)

    app.run("start", "run-3", "crash-after-charge", "idempotent", exit_code=1)
    assert app.effect_lines() == ["charge A1"]

    recovered = app.run("recover", "run-3", "idempotent")
    assert recovered["stop_reason"] == "complete"
    assert recovered["tools"] == tools_done(
        ("c-charge", "charged A1"), ("c-notify", "notified bob")
    )
    assert app.effect_lines() == ["charge A1", "notify bob"]


def test_without_idempotent_a_call_interrupted_before_its_checkpoint_is_reported_unknown(
    tmp_path: Path,
) -> None:
    """A call that acted but whose result was never recorded is not run again: the model
    is told its outcome is unknown."""
    app = App(tmp_path)

    app.run("start", "run-4", "crash-after-charge", exit_code=1)
    recovered = app.run("recover", "run-4")

    assert recovered["stop_reason"] == "complete"
    assert recovered["tools"] == [
        ["c-charge", unknown("charge"), True], *tools_done(("c-notify", "notified bob"))
    ]
    assert app.effect_lines() == ["charge A1", "notify bob"]


def test_of_two_processes_racing_to_resume_exactly_one_proceeds(tmp_path: Path) -> None:
    app = App(tmp_path)
    assert app.run("start-charge", "run-5", "gated")["stop_reason"] == "suspended"

    racers = [
        subprocess.Popen(
            app.argv("resume", "run-5", "gated", "race"),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for _ in range(2)
    ]
    outcomes = []
    for racer in racers:
        out, err = racer.communicate(timeout=60)
        assert racer.returncode == 0, err
        outcomes.append(json.loads(out))

    winners = [o for o in outcomes if "stop_reason" in o]
    losers = [o["not_resumable"] for o in outcomes if "not_resumable" in o]
    assert winners == [{
        "stop_reason": "complete", "output": "All done.", "run_id": "run-5",
        "pending": None, "tools": tools_done(("c-charge", "charged A1")),
    }]
    prefix = "run 'run-5' cannot be resumed: "
    assert len(losers) == 1
    assert losers[0] in {
        prefix + "another worker resumed it first",
        prefix + "it is running, not suspended",
        prefix + "it is complete, not suspended",
    }
    assert app.effect_lines() == ["charge A1"]
