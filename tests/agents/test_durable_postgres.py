"""Durable runs over one PostgresStore shared by several worker processes (as several
hosts would share it): racing resumes and recoveries have one winner, an idempotent
side effect runs once for four callers, and a worker killed with SIGKILL mid-run is
recovered by another without losing or repeating anything."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

_WORKER = '''
import asyncio, json, os, sys, time
from agentkit import make_ctx
from agentkit.agents import Agent, RunNotResumable
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ToolCall, ToolRequest
from agentkit.core.policies import idempotent
from agentkit.core.testing import FakeLLM, Turn
from agentkit.state.stores.postgres import PostgresStore
from agentkit.tools import tool

dsn, schema, effects, barrier, command, run_id, *options = sys.argv[1:]
CHARGE = ToolCall("c-charge", "charge", {"order_id": "A1"})
NOTIFY = ToolCall("c-notify", "notify", {"to": "bob"})


def record(line):
    with open(effects, "a") as f:
        f.write(line + "\\n")


def say(line):
    print(line, flush=True)


@tool(side_effecting=True)
async def charge(order_id: str) -> str:
    """Charge the customer's card for an order; must never happen twice."""
    record("charge " + order_id)
    if "hang-in-charge" in options:
        say("charging")
        await asyncio.sleep(3600)  # killed here: the charge went out, no result came back
    if "slow-charge" in options:
        await asyncio.sleep(0.5)  # the other callers arrive while this one acts
    return "charged " + order_id


# Declared safe to repeat: a recovered run may send it again when the worker died
# inside it (before it acted, in these tests), rather than report an unknown outcome.
@tool(side_effecting=True, idempotent=True)
async def notify(to: str) -> str:
    """Send the customer a notification that their order was charged."""
    if "hang-in-notify" in options:
        say("in-notify")
        await asyncio.sleep(3600)  # killed here, before notify acts
    record("notify " + to)
    return "notified " + to


async def hang_after_charge(request, ctx, call_next):
    result = await call_next(request, ctx)
    if "hang-after-charge" in options and request.name == "charge":
        say("charged")
        await asyncio.sleep(3600)  # killed here: charge acted, no checkpoint saw it
    return result


def wait_at_barrier(count):
    os.makedirs(barrier, exist_ok=True)
    open(os.path.join(barrier, str(os.getpid())), "w").close()
    while len(os.listdir(barrier)) < count:
        time.sleep(0.001)


async def main():
    store = PostgresStore(dsn, schema=schema)
    await store.get("warm-up")  # connected before any race starts
    turns = {
        "start": [Turn(tool_calls=(CHARGE, NOTIFY))],
        "start-charge": [Turn(tool_calls=(CHARGE,))],
    }.get(command, []) + [Turn(content="All done.")]
    ctx = make_ctx(
        FakeLLM.script(turns),
        store=store,
        autonomy="gated" if "gated" in options else "auto",
        correlation_id=run_id,
        tool_middleware=[hang_after_charge, idempotent()],
        chat_middleware=[],
    )
    agent = Agent(
        "till", "fake", "p",
        cognition=ReActCognition([charge, notify], max_concurrency=1),
    )
    racers = int(next((o[5:] for o in options if o.startswith("race=")), "0"))
    try:
        if racers:
            wait_at_barrier(racers)
        if command == "charge-directly":
            request = ToolRequest("charge", {"order_id": "A1"}, tool=charge)
            say(json.dumps({"result": await ctx.invoker.invoke_tool(request, ctx),
                            "idempotency": request.meta["idempotency"]}))
            return
        if command.startswith("start"):
            result = await agent.run("charge order A1", ctx)
        elif command == "resume":
            result = await agent.resume(run_id, {"c-charge": "approve"}, ctx)
        else:
            result = await agent.recover(run_id, ctx)
    except RunNotResumable as exc:
        say(json.dumps({"not_resumable": str(exc)}))
        return
    finally:
        await store.close()
    say(json.dumps({
        "stop_reason": result.stop_reason,
        "output": result.output,
        "run_id": result.run_id,
        "tools": [[m.tool_call_id, m.content, m.is_error]
                  for m in result.messages if m.role == "tool"],
    }))

asyncio.run(main())
'''


class Workers:
    """The worker script, run as fresh OS processes over one Postgres schema."""

    def __init__(self, tmp_path: Path, dsn: str, schema: str) -> None:
        self.script = tmp_path / "worker.py"
        self.script.write_text(_WORKER)
        self.dsn, self.schema = dsn, schema
        self.effects = tmp_path / "effects.txt"
        self.effects.touch()
        self.barrier = tmp_path / "barrier"

    def argv(self, command: str, run_id: str, *options: str) -> list[str]:
        return [sys.executable, str(self.script), self.dsn, self.schema, str(self.effects),
                str(self.barrier), command, run_id, *options]

    def run(self, command: str, run_id: str, *options: str) -> Any:
        proc = subprocess.run(
            self.argv(command, run_id, *options),
            capture_output=True, text=True, timeout=60, check=False,
        )
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    def race(self, count: int, command: str, run_id: str, *options: str) -> list[Any]:
        procs = [
            subprocess.Popen(
                self.argv(command, run_id, f"race={count}", *options),
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )
            for _ in range(count)
        ]
        outcomes = []
        for proc in procs:
            out, err = proc.communicate(timeout=90)
            assert proc.returncode == 0, err
            outcomes.append(json.loads(out))
        return outcomes

    def kill_when(self, marker: str, command: str, run_id: str, *options: str) -> None:
        """Start a worker, SIGKILL it once it prints ``marker``."""
        proc = subprocess.Popen(
            self.argv(command, run_id, *options),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert line == marker + "\n", proc.stderr.read() if proc.stderr else line
            os.kill(proc.pid, signal.SIGKILL)
        finally:
            proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL

    def effect_lines(self) -> list[str]:
        return self.effects.read_text().splitlines()


@pytest.fixture
def workers(tmp_path: Path, postgres_dsn: str, postgres_schema: str) -> Workers:
    return Workers(tmp_path, postgres_dsn, postgres_schema)


def tools_done(*entries: tuple[str, str]) -> list[list[Any]]:
    return [[call_id, content, False] for call_id, content in entries]


COMPLETE = {
    "stop_reason": "complete", "output": "All done.",
    "tools": tools_done(("c-charge", "charged A1"), ("c-notify", "notified bob")),
}


def test_of_four_workers_racing_to_resume_a_run_exactly_one_proceeds(workers: Workers) -> None:
    held = workers.run("start-charge", "run-r", "gated")
    assert held["stop_reason"] == "suspended"

    outcomes = workers.race(4, "resume", "run-r", "gated")

    winners = [o for o in outcomes if "stop_reason" in o]
    losers = [o["not_resumable"] for o in outcomes if "not_resumable" in o]
    assert winners == [{
        "stop_reason": "complete", "output": "All done.", "run_id": "run-r",
        "tools": tools_done(("c-charge", "charged A1")),
    }]
    assert len(losers) == 3
    assert all(loser.startswith("run 'run-r' cannot be resumed: ") for loser in losers)
    assert workers.effect_lines() == ["charge A1"]


def test_of_four_workers_racing_to_recover_a_killed_run_exactly_one_proceeds(
    workers: Workers,
) -> None:
    workers.kill_when("in-notify", "start", "run-k", "hang-in-notify")
    assert workers.effect_lines() == ["charge A1"]

    outcomes = workers.race(4, "recover", "run-k")

    winners = [o for o in outcomes if "stop_reason" in o]
    losers = [o["not_resumable"] for o in outcomes if "not_resumable" in o]
    assert winners == [{**COMPLETE, "run_id": "run-k"}]
    assert len(losers) == 3
    assert all(loser.startswith("run 'run-k' cannot be resumed: ") for loser in losers)
    assert workers.effect_lines() == ["charge A1", "notify bob"]


def test_four_workers_calling_one_idempotent_side_effect_run_it_once(workers: Workers) -> None:
    outcomes = workers.race(4, "charge-directly", "run-i", "slow-charge")

    assert sorted(o["idempotency"] for o in outcomes) == ["executed"] + ["replayed"] * 3
    assert {o["result"] for o in outcomes} == {"charged A1"}
    assert workers.effect_lines() == ["charge A1"]


def test_a_worker_killed_after_a_side_effect_is_recovered_elsewhere_without_repeating_it(
    workers: Workers,
) -> None:
    """SIGKILL after charge acted but before the run's checkpoint saw its result: the
    idempotency record in Postgres answers the recovered call."""
    workers.kill_when("charged", "start", "run-c", "hang-after-charge")
    assert workers.effect_lines() == ["charge A1"]

    recovered = workers.run("recover", "run-c")

    assert recovered == {**COMPLETE, "run_id": "run-c"}
    assert workers.effect_lines() == ["charge A1", "notify bob"]


def test_a_worker_killed_mid_tool_is_recovered_elsewhere_with_nothing_lost(
    workers: Workers,
) -> None:
    workers.kill_when("in-notify", "start", "run-n", "hang-in-notify")

    recovered = workers.run("recover", "run-n")

    assert recovered == {**COMPLETE, "run_id": "run-n"}
    assert workers.effect_lines() == ["charge A1", "notify bob"]
    again = workers.run("recover", "run-n")
    assert again == {
        "not_resumable": "run 'run-n' cannot be resumed: it is complete, not running"
    }


def test_a_worker_killed_inside_a_side_effect_is_recovered_with_its_outcome_unknown(
    workers: Workers,
) -> None:
    """SIGKILL inside charge's body, after it acted: the intent stored in Postgres before
    the body started tells the recovering worker, which does not charge again and tells
    the model the outcome is unknown."""
    workers.kill_when("charging", "start-charge", "run-u", "hang-in-charge")
    assert workers.effect_lines() == ["charge A1"]

    recovered = workers.run("recover", "run-u")

    assert recovered == {
        "stop_reason": "complete", "output": "All done.", "run_id": "run-u",
        "tools": [["c-charge", UNKNOWN, True]],
    }
    assert workers.effect_lines() == ["charge A1"]


UNKNOWN = (
    "The outcome of this call to 'charge' is unknown: the worker running it stopped (it "
    "crashed or was killed) after the call started and before its result was recorded, so "
    "it may or may not have taken effect. It was not run again: 'charge' is not declared "
    "idempotent. Check whether it took effect before repeating it."
)
