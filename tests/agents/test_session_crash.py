"""A session turn survives its worker dying between the run's final checkpoint and the
session append: a real worker process is SIGKILLed at that point, on SQLite and on
PostgreSQL, and then ``recover`` of that run, or (separately) the next run of the
session, appends the missing turn exactly once, so the next model knows the refund
happened."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agentkit.core.contracts.ports import Store
from agentkit.core.contracts.types import Message, Scope, ToolCall
from agentkit.state.sessions import read_session
from agentkit.state.stores import SQLiteStore

_WORKER = '''
import asyncio, json, os, sys, time
from agentkit.agents import Agent, SessionBusy
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import Scope, ToolCall
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.state.stores import SQLiteStore
from agentkit.tools import tool

kind, where, folder, command = sys.argv[1:]
SCOPE = Scope("acme", "support")


@tool(side_effecting=True)
def refund(order_id: str, amount: int) -> str:
    """Refund part of a customer order, in whole dollars, and return a receipt line."""
    with open(os.path.join(folder, "refunds"), "a") as f:
        f.write(order_id + "\\n")  # the side effect: one line each time it runs
    return f"refunded ${amount} on {order_id}"


class PauseBeforeAppend:
    """A real store that stops this process just before the session write of the turn
    (the only one this store sees): after the run's final checkpoint, before the append."""

    def __init__(self, store):
        self.store = store

    def __getattr__(self, name):
        return getattr(self.store, name)

    async def set_versioned(self, key, value, *, expected_version):
        if key.startswith("session") and not key.startswith("sessions:"):
            open(os.path.join(folder, "paused"), "w").close()
            time.sleep(600)  # the test kills us here
        return await self.store.set_versioned(key, value, expected_version=expected_version)


def open_store():
    if kind == "sqlite":
        return SQLiteStore(where)
    from agentkit.state.stores.postgres import PostgresStore
    dsn, schema = where.split(" ", 1)
    return PostgresStore(dsn, schema=schema, pool_size=2)


async def main():
    store = open_store()
    agent = Agent("desk", "fake", "You handle refunds.", cognition=ReActCognition([refund]))
    call = ToolCall("c1", "refund", {"order_id": "A-1", "amount": 20})
    out = {}
    if command == "start":
        llm = FakeLLM.script([Turn("Which order?"), Turn(tool_calls=(call,)),
                              Turn("Refunded $20 on A-1.")])
        await agent.run("I want a refund", make_test_ctx(llm, store=store, scope=SCOPE),
                        session="chat")
        ctx = make_test_ctx(llm, store=PauseBeforeAppend(store), scope=SCOPE,
                            correlation_id="turn-2")
        await agent.run("order A-1, $20 please", ctx, session="chat")
    elif command == "recover":
        result = await agent.recover("turn-2", make_test_ctx(FakeLLM.script([]), store=store,
                                                             scope=SCOPE))
        out = {"stop_reason": result.stop_reason, "output": result.output,
               "messages": len(result.messages)}
    else:
        llm = FakeLLM.script([Turn("You're welcome.")])
        await agent.run("thanks", make_test_ctx(llm, store=store, scope=SCOPE), session="chat")
        out = {"seen": [[m.role, m.content] for m in llm.requests[-1].messages]}
    close = store.close()
    if asyncio.iscoroutine(close):
        await close
    print(json.dumps(out))

asyncio.run(main())
'''

SCOPE = Scope("acme", "support")
REFUND = ToolCall("c1", "refund", {"order_id": "A-1", "amount": 20})
TURN_ONE = (Message("user", "I want a refund"), Message("assistant", "Which order?"))
TURN_TWO = (
    Message("user", "order A-1, $20 please"),
    Message("assistant", tool_calls=(REFUND,)),
    Message("tool", "refunded $20 on A-1", tool_call_id="c1", name="refund"),
    Message("assistant", "Refunded $20 on A-1."),
)
SEEN = [
    ["user", "I want a refund"], ["assistant", "Which order?"],
    ["user", "order A-1, $20 please"], ["assistant", ""], ["tool", "refunded $20 on A-1"],
    ["assistant", "Refunded $20 on A-1."], ["user", "thanks"],
]


class Worker:
    def __init__(self, tmp_path: Path, kind: str, where: str) -> None:
        self.folder = tmp_path
        self.script = tmp_path / "worker.py"
        self.script.write_text(_WORKER)
        self.kind, self.where = kind, where

    def argv(self, command: str) -> list[str]:
        return [sys.executable, str(self.script), self.kind, self.where, str(self.folder),
                command]

    def start_and_kill(self) -> None:
        """Start the session's second turn and SIGKILL its worker just before the append."""
        proc = subprocess.Popen(self.argv("start"), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        marker = self.folder / "paused"
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert proc.poll() is None, proc.communicate()[1].decode()
            assert time.monotonic() < deadline, "the run never reached the append"
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL

    def run(self, command: str) -> Any:
        done = subprocess.run(self.argv(command), capture_output=True, text=True, timeout=60,
                              check=False)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def refunds(self) -> list[str]:
        return (self.folder / "refunds").read_text().splitlines()

    def session(self) -> tuple[Message, ...]:
        return asyncio.run(_read(self.open_store()))

    def open_store(self) -> Store:
        if self.kind == "sqlite":
            return SQLiteStore(self.where)
        from agentkit.state.stores.postgres import PostgresStore

        dsn, schema = self.where.split(" ", 1)
        return PostgresStore(dsn, schema=schema, pool_size=2)


async def _read(store: Store) -> tuple[Message, ...]:
    try:
        return await read_session(store, SCOPE, "chat")
    finally:
        closing = store.close()  # type: ignore[attr-defined]
        if asyncio.iscoroutine(closing):
            await closing


@pytest.fixture(params=["sqlite", "postgres"])
def worker(request: pytest.FixtureRequest, tmp_path: Path) -> Worker:
    if request.param == "sqlite":
        return Worker(tmp_path, "sqlite", str(tmp_path / "chat.db"))
    dsn = request.getfixturevalue("postgres_dsn")
    return Worker(tmp_path, "postgres", f"{dsn} {request.getfixturevalue('postgres_schema')}")


def test_recover_appends_the_turn_a_worker_killed_before_the_append_left_out(
    worker: Worker,
) -> None:
    worker.start_and_kill()
    assert worker.session() == TURN_ONE  # the final checkpoint is in, the turn is not

    assert worker.run("recover") == {
        "stop_reason": "complete", "output": "Refunded $20 on A-1.", "messages": 6
    }
    assert worker.session() == (*TURN_ONE, *TURN_TWO)
    assert worker.run("next") == {"seen": SEEN}
    assert worker.session() == (*TURN_ONE, *TURN_TWO, *(
        Message("user", "thanks"), Message("assistant", "You're welcome.")))
    assert worker.refunds() == ["A-1"]


def test_the_next_run_of_the_session_appends_the_left_out_turn_first(worker: Worker) -> None:
    worker.start_and_kill()
    assert worker.session() == TURN_ONE

    assert worker.run("next") == {"seen": SEEN}
    assert worker.session() == (*TURN_ONE, *TURN_TWO, *(
        Message("user", "thanks"), Message("assistant", "You're welcome.")))
    # Recovering the run afterwards finds its turn in and appends nothing more.
    assert worker.run("recover")["output"] == "Refunded $20 on A-1."
    assert len(worker.session()) == 8
    assert worker.refunds() == ["A-1"]
