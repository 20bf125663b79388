"""Crash recovery through a delegation: a worker SIGKILLed inside a sub-agent's
side-effecting tool, then ``recover`` of the top-level run in a fresh process, over
SQLite and over PostgreSQL. The sub-run continues from its own checkpoint, so the body
runs once; a delegating call answered as "outcome unknown" leaves no stale sub-run."""

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
from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.agents.intents import intent_key
from agentkit.core.contracts.types import ToolCall
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.tools import as_tool, tool

folder, command, delegation, *options = sys.argv[1:]


def mark(name):
    open(os.path.join(folder, name), "w").close()


@tool(side_effecting=True)
def charge(order_id: str) -> str:
    """Charge the customer's card for an order; must never happen twice."""
    with open(os.path.join(folder, "effects"), "a") as f:
        f.write("charge " + order_id + "\\n")
    if os.environ.get("PAUSE_AT") == "charge":
        mark("paused")
        time.sleep(600)  # the test kills us here
    return "charged " + order_id


async def pause_after_delegation(request, ctx, call_next):
    if os.environ.get("PAUSE_AT") == "second" and request.arguments.get("task") == "refund A1":
        mark("paused")
        time.sleep(600)  # a second delegation under the same call id, before it starts
    result = await call_next(request, ctx)
    if os.environ.get("PAUSE_AT") == "delegated" and request.name == "billing":
        mark("paused")
        time.sleep(600)  # the sub-run completed; the run above has not recorded it
    return result


class Desk:
    """Answers each agent by what it last read: its task gets its tool call, a tool
    result gets an answer quoting it. A sub-run started afresh calls charge again."""

    async def chat(self, request, ctx):
        last = request.messages[-1]
        answers = sum(m.role == "tool" for m in request.messages)
        if request.agent == "billing" and last.content == "refund A1":
            turn = Turn(content="billing refunds A1")
        elif last.role == "user":
            call = (ToolCall("s1", "charge", {"order_id": "A1"}) if request.agent == "billing"
                    else ToolCall("c1", "billing", {"task": "charge order A1"}))
            turn = Turn(tool_calls=(call,))
        elif request.agent == "support" and answers == 1 and "twice" in sys.argv:
            # The model reuses the call id "c1" for a second delegation.
            turn = Turn(tool_calls=(ToolCall("c1", "billing", {"task": "refund A1"}),))
        else:
            turn = Turn(content=request.agent + " read: " + last.content)
        return await FakeLLM.script([turn]).chat(request, ctx)


def store():
    if os.environ.get("PG_DSN"):
        from agentkit.state.stores.postgres import PostgresStore
        return PostgresStore(os.environ["PG_DSN"], schema=os.environ["PG_SCHEMA"])
    from agentkit.state.stores.sqlite import SQLiteStore
    return SQLiteStore(os.path.join(folder, "runs.db"))


async def main():
    kind = {
        "idempotent": dict(side_effecting=True, idempotent=True),
        "reads": dict(side_effecting=False),
        "unknown": dict(side_effecting=True),
    }[delegation]
    billing = Agent("billing", "fake", "You charge orders.",
                    cognition=ReActCognition(tools=[charge]))
    delegate = as_tool(billing, name="billing",
                       description="Hand a billing task to the billing team.", **kind)
    support = Agent("support", "fake", "You help customers.",
                    cognition=ReActCognition(tools=[delegate]))
    db = store()
    ctx = make_test_ctx(llm=Desk(), store=db, correlation_id="run-1",
                        autonomy="gated" if "gated" in options else "auto",
                        tool_middleware=[pause_after_delegation])
    if command == "start":
        result = await support.run("charge my order A1", ctx)
    elif command == "recover":
        result = await support.recover("run-1", ctx)
    else:
        path, decision = command.split("=")
        result = await support.resume("run-1", {path: decision}, ctx)
    sub_key = "run-1:support/c1"
    sub, _ = await db.get_versioned("checkpoint:" + sub_key)
    waiting = result.evals.get("suspended")
    print(json.dumps({
        "waiting": None if waiting is None else [waiting.reason, [c.id for c in waiting.pending]],
        "stop_reason": result.stop_reason,
        "output": result.output,
        "sub_run": sub.status if sub is not None else None,
        "stale_intents": [k for k in (intent_key(sub_key, "s1"), intent_key("run-1:support", "c1"))
                          if await db.get(k) is not None],
    }))
    close = getattr(db, "close")
    if asyncio.iscoroutinefunction(close):
        await close()
    else:
        close()

asyncio.run(main())
'''

UNKNOWN = (
    "The outcome of this call to {tool!r} is unknown: the worker running it stopped (it "
    "crashed or was killed) after the call started and before its result was recorded, so "
    "it may or may not have taken effect. It was not run again: {tool!r} is not declared "
    "idempotent. Check whether it took effect before repeating it."
)


class App:
    def __init__(self, tmp_path: Path, env: dict[str, str]) -> None:
        self.folder = tmp_path
        self.script = tmp_path / "app.py"
        self.script.write_text(_APP)
        self.env = {**os.environ, **env}

    def argv(self, command: str, delegation: str) -> list[str]:
        options = [delegation] if delegation in ("twice", "gated") else []
        delegation = {"twice": "reads", "gated": "unknown"}.get(delegation, delegation)
        return [sys.executable, str(self.script), str(self.folder), command, delegation,
                *options]

    def start_and_kill(
        self, delegation: str, pause_at: str = "charge", command: str = "start"
    ) -> None:
        """Start the run and SIGKILL it inside the sub-agent's charge (or once the
        delegating call returned)."""
        proc = subprocess.Popen(self.argv(command, delegation),
                                env={**self.env, "PAUSE_AT": pause_at},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        marker = self.folder / "paused"
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert proc.poll() is None, proc.communicate()[1].decode()
            assert time.monotonic() < deadline, "the run never reached the pause"
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL

    def recover(self, delegation: str, command: str = "recover") -> Any:
        done = subprocess.run(self.argv(command, delegation), env=self.env,
                              capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def effects(self) -> list[str]:
        return (self.folder / "effects").read_text().splitlines()


@pytest.fixture(params=["sqlite", "postgres"])
def app(request: pytest.FixtureRequest, tmp_path: Path) -> App:
    if request.param == "sqlite":
        return App(tmp_path, {})
    dsn = request.getfixturevalue("postgres_dsn")
    schema = request.getfixturevalue("postgres_schema")
    return App(tmp_path, {"PG_DSN": dsn, "PG_SCHEMA": schema})


@pytest.mark.parametrize("delegation", ["idempotent", "reads"])
def test_a_sub_run_killed_inside_a_side_effect_continues_and_settles_it_by_its_intent(
    app: App, delegation: str
) -> None:
    """The delegating call may run again (idempotent, or it only reads), so it does:
    its sub-run continues from its checkpoint, and the interrupted charge is settled by
    its intent instead of running a second time."""
    app.start_and_kill(delegation)
    assert app.effects() == ["charge A1"]

    recovered = app.recover(delegation)

    assert recovered == {
        "waiting": None,
        "stop_reason": "complete",
        "output": "support read: billing read: " + UNKNOWN.format(tool="charge"),
        "sub_run": "complete",
        "stale_intents": [],
    }
    assert app.effects() == ["charge A1"]


def test_a_sub_run_that_completed_before_the_kill_gives_its_answer_without_running_again(
    app: App,
) -> None:
    app.start_and_kill("reads", pause_at="delegated")

    recovered = app.recover("reads")

    assert recovered == {
        "waiting": None,
        "stop_reason": "complete",
        "output": "support read: billing read: charged A1",
        "sub_run": "complete",
        "stale_intents": [],
    }
    assert app.effects() == ["charge A1"]


def test_a_delegation_answered_as_unknown_leaves_no_stale_sub_run(app: App) -> None:
    """The delegating call may not run again: the model is told its outcome is unknown,
    and the sub-run it started is ended with its intents dropped, so nothing is left to
    recover or to mistake for a live run."""
    app.start_and_kill("unknown")

    recovered = app.recover("unknown")

    assert recovered == {
        "waiting": None,
        "stop_reason": "complete",
        "output": "support read: " + UNKNOWN.format(tool="billing"),
        "sub_run": "error",
        "stale_intents": [],
    }
    assert app.effects() == ["charge A1"]


def test_a_reused_call_id_does_not_take_an_earlier_calls_sub_run(app: App) -> None:
    """The model delegates twice under the call id "c1"; killed before the second
    sub-run saved anything, recover starts that sub-run: the first one's checkpoint,
    under the same key, is for another task."""
    app.start_and_kill("twice", pause_at="second")

    recovered = app.recover("twice")

    assert recovered == {
        "waiting": None,
        "stop_reason": "complete",
        "output": "support read: billing refunds A1",
        "sub_run": "complete",
        "stale_intents": [],
    }
    assert app.effects() == ["charge A1"]


def test_a_held_delegation_a_person_rejects_leaves_no_stale_sub_run(app: App) -> None:
    """Under gated autonomy the delegating call is held for a person; until they decide
    its sub-run is kept, and once they reject it the sub-run is ended."""
    assert app.recover("gated", command="start")["waiting"] == ["awaiting_approval", ["c1"]]
    assert app.recover("gated", command="c1=approve")["waiting"] == [
        "awaiting_approval", ["c1/s1"]
    ]
    app.start_and_kill("gated", command="c1/s1=approve")

    held = app.recover("gated")
    assert (held["waiting"], held["sub_run"]) == (["outcome_unknown", ["c1"]], "running")

    refused = app.recover("gated", command="c1=reject")

    why = "a person decided not to run it again"
    assert refused == {
        "waiting": None,
        "stop_reason": "complete",
        "output": "support read: " + UNKNOWN.format(tool="billing").replace(
            "'billing' is not declared idempotent", why
        ),
        "sub_run": "error",
        "stale_intents": [],
    }
    assert app.effects() == ["charge A1"]
