"""Workflow tool steps across crashes: a worker SIGKILLed inside a side-effecting tool
step, then ``Workflow.recover`` in a fresh process over the same SQLite file. The step
keeps an intent as an agent's tool call does, so it is not silently run twice: it runs
again only when that is provably safe, and otherwise waits for a person."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

_APP = '''
import asyncio, json, os, sys, time
from agentkit.agents import Agent, Workflow
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ToolCall
from agentkit.core.policies import idempotent
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.state.stores.sqlite import SQLiteStore
from agentkit.tools import tool

folder, command, *options = sys.argv[1:]
PAUSE = os.environ.get("PAUSE_AT", "")


def pause(where):
    if PAUSE == where:
        open(os.path.join(folder, "paused"), "w").close()
        time.sleep(600)  # the test kills us here


def charge_body(order_id):
    with open(os.path.join(folder, "effects"), "a") as f:
        f.write("charge " + order_id + "\\n")
    pause("body")
    return "charged " + order_id


@tool(side_effecting=True)
def charge(order_id: str) -> str:
    """Charge the customer's card for an order; must never happen twice."""
    return charge_body(order_id)


@tool(side_effecting=True, idempotent=True, name="charge")
def charge_safe(order_id: str) -> str:
    """Charge with the payment provider's own idempotency key: safe to repeat."""
    return charge_body(order_id)


async def pause_after_return(request, ctx, call_next):
    result = await call_next(request, ctx)
    pause("returned")  # the body returned; the workflow has not recorded its output
    return result


async def receipt(inputs, ctx):
    return "receipt for " + inputs["charge"]


class Desk:
    """The billing agent's model: its task gets a charge call, a tool result gets an
    answer quoting it. A sub-run started afresh charges again."""

    async def chat(self, request, ctx):
        last = request.messages[-1]
        turn = (Turn(tool_calls=(ToolCall("s1", "charge", {"order_id": "A1"}),))
                if last.role == "user" else Turn(content="billing read: " + last.content))
        return await FakeLLM.script([turn]).chat(request, ctx)


async def main():
    step = charge_safe if "safe" in options else charge
    if "agent" in options:
        step = Agent("billing", "fake", "You charge orders.",
                     cognition=ReActCognition(tools=[charge]))
    wf = (Workflow("orders")
          .add("charge", step, input=lambda inputs: {"order_id": "A1"})
          .add("receipt", receipt, after=["charge"]))
    middleware = [pause_after_return] + ([idempotent()] if "idempotent" in options else [])
    ctx = make_test_ctx(llm=Desk(), store=SQLiteStore(os.path.join(folder, "runs.db")),
                        correlation_id="wf-1", tool_middleware=middleware)
    if command == "start":
        result = await wf.run("charge A1", ctx)
    elif command == "recover":
        result = await wf.recover("wf-1", ctx)
    else:
        result = await wf.resume("wf-1", {"charge": command.split(":")[1]}, ctx)
    waiting = result.suspended
    print(json.dumps({
        "stop_reason": result.stop_reason,
        "outputs": dict(result.outputs),
        "skipped": list(result.skipped),
        "waiting": None if waiting is None else [
            waiting.reason, [[c.id, c.name] for c in waiting.pending], dict(waiting.kinds)],
    }))

asyncio.run(main())
'''

HELD = {
    "stop_reason": "suspended",
    "outputs": {},
    "skipped": [],
    "waiting": ["outcome_unknown", [["charge", "charge"]], {"charge": "unknown_outcome"}],
}
DONE = {
    "stop_reason": "complete",
    "outputs": {"charge": "charged A1", "receipt": "receipt for charged A1"},
    "skipped": [],
    "waiting": None,
}


class App:
    def __init__(self, tmp_path: Path) -> None:
        self.folder = tmp_path
        self.script = tmp_path / "app.py"
        self.script.write_text(_APP)

    def argv(self, command: str, *options: str) -> list[str]:
        return [sys.executable, str(self.script), str(self.folder), command, *options]

    def start_and_kill(self, pause_at: str, *options: str) -> None:
        proc = subprocess.Popen(self.argv("start", *options),
                                env={**os.environ, "PAUSE_AT": pause_at},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        marker = self.folder / "paused"
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert proc.poll() is None, proc.communicate()[1].decode()
            assert time.monotonic() < deadline, "the workflow never reached the pause"
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL

    def run(self, command: str, *options: str) -> Any:
        done = subprocess.run(self.argv(command, *options), capture_output=True, text=True,
                              timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def effects(self) -> list[str]:
        return (self.folder / "effects").read_text().splitlines()


def test_a_tool_step_killed_mid_flight_is_not_run_again_and_waits_for_a_person(
    tmp_path: Path,
) -> None:
    """A workflow has no model to tell, so a person decides: reject skips the step and
    what follows it, as a rejected gate does."""
    app = App(tmp_path)
    app.start_and_kill("body")

    assert app.run("recover") == HELD
    assert app.effects() == ["charge A1"]

    refused = app.run("resume:reject")
    assert refused == {
        "stop_reason": "complete", "outputs": {}, "skipped": ["charge", "receipt"],
        "waiting": None,
    }
    assert app.effects() == ["charge A1"]


def test_a_person_may_run_an_interrupted_tool_step_again(tmp_path: Path) -> None:
    app = App(tmp_path)
    app.start_and_kill("returned")
    assert app.run("recover") == HELD

    assert app.run("resume:approve") == DONE
    assert app.effects() == ["charge A1", "charge A1"]


def test_an_idempotent_tool_step_killed_mid_flight_runs_again(tmp_path: Path) -> None:
    app = App(tmp_path)
    app.start_and_kill("body", "safe")

    assert app.run("recover", "safe") == DONE
    assert app.effects() == ["charge A1", "charge A1"]


def test_a_result_idempotent_recorded_before_the_kill_is_used_not_rerun(tmp_path: Path) -> None:
    app = App(tmp_path)
    app.start_and_kill("returned", "idempotent")

    assert app.run("recover", "idempotent") == DONE
    assert app.effects() == ["charge A1"]


def test_an_agent_step_killed_inside_a_side_effect_continues_its_sub_run(tmp_path: Path) -> None:
    """An agent step is a delegation: recover continues its sub-run from the sub-run's
    checkpoint, whose interrupted charge is settled by its intent, not run again."""
    app = App(tmp_path)
    app.start_and_kill("body", "agent")

    recovered = app.run("recover", "agent")

    unknown = (
        "billing read: The outcome of this call to 'charge' is unknown: the worker running "
        "it stopped (it crashed or was killed) after the call started and before its result "
        "was recorded, so it may or may not have taken effect. It was not run again: "
        "'charge' is not declared idempotent. Check whether it took effect before repeating it."
    )
    assert recovered == {
        "stop_reason": "complete",
        "outputs": {"charge": unknown, "receipt": "receipt for " + unknown},
        "skipped": [],
        "waiting": None,
    }
    assert app.effects() == ["charge A1"]
