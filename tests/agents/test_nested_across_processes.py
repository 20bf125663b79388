"""Nested approval across OS processes over one SQLite file: a sub-agent suspends the
run in one process, a person's decision resumes it in another, and every tool body
runs exactly once under the default tool chain (audit, meter, retry, idempotent)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

_APP = '''
import asyncio, json, sys
from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ToolCall
from agentkit.core.policies import Budget, default_chat_chain, default_tool_chain
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.state.stores.sqlite import SQLiteStore
from agentkit.tools import as_tool, tool

db, effects, command, *decisions = sys.argv[1:]


def record(line):
    with open(effects, "a") as f:
        f.write(line + "\\n")


@tool(side_effecting=True)
def log_case(text: str) -> str:
    """Write a line to the customer's case log and return the entry id."""
    record("log_case " + text)
    return "entry-1"


@tool(side_effecting=False)
def lookup(order_id: str) -> str:
    """Look up a customer order and return its current status."""
    record("lookup " + order_id)
    return "delivered"


@tool(side_effecting=True, requires_approval=True)
def refund(order_id: str, amount_usd: float) -> str:
    """Issue a refund against a customer order and return the confirmation."""
    record(f"refund {order_id} {amount_usd}")
    return f"refunded {amount_usd} on {order_id}"


billing = Agent("billing", "fake", "You handle refunds.",
                cognition=ReActCognition(tools=[lookup, log_case, refund]))
support = Agent("support", "fake", "You help customers.", cognition=ReActCognition(tools=[
    as_tool(billing, name="billing", description="Delegate a billing task to billing.",
            side_effecting=True),
    log_case,
]))

TURNS = {
    "run": [
        Turn(tool_calls=(ToolCall("c1", "billing", {"task": "refund A-1"}),
                         ToolCall("c2", "log_case", {"text": "refund asked"}))),
        Turn(tool_calls=(ToolCall("s1", "lookup", {"order_id": "A-1"}),
                         ToolCall("s2", "log_case", {"text": "checking A-1"}))),
        Turn(tool_calls=(ToolCall("s3", "refund", {"order_id": "A-1", "amount_usd": 20.0}),)),
    ],
    "resume": [Turn(content="Refunded $20 on A-1."), Turn(content="Your refund is on its way.")],
}


async def main():
    store = SQLiteStore(db)
    llm = FakeLLM.script(TURNS[command])
    budget = Budget()
    ctx = make_test_ctx(
        llm=llm, store=store, budget=budget, correlation_id="run-x",
        tool_middleware=default_tool_chain(), chat_middleware=default_chat_chain(),
    )
    if command == "run":
        result = await support.run("help with A-1", ctx)
    else:
        result = await support.resume("run-x", dict(d.split("=") for d in decisions), ctx)
    llm.assert_all_used()
    store.close()
    suspended = result.evals.get("suspended")
    print(json.dumps({
        "stop_reason": result.stop_reason,
        "output": result.output,
        "pending": [c.id for c in suspended.pending] if suspended else None,
        "agents": {k: list(v) for k, v in suspended.agents.items()} if suspended else None,
        "tools": [[m.tool_call_id, m.content] for m in result.messages if m.role == "tool"],
        "model_calls": len(llm.requests),
    }))

asyncio.run(main())
'''


def run_app(tmp_path: Path, *args: str) -> Any:
    script = tmp_path / "app.py"
    script.write_text(_APP)
    proc = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "runs.db"), str(tmp_path / "effects.txt"),
         *args],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_a_nested_suspension_is_resumed_in_another_process(tmp_path: Path) -> None:
    first = run_app(tmp_path, "run")

    assert first == {
        "stop_reason": "suspended",
        "output": None,
        "pending": ["c1/s3"],
        "agents": {"c1/s3": ["support", "billing"]},
        "tools": [],
        "model_calls": 3,
    }
    effects = tmp_path / "effects.txt"
    assert sorted(effects.read_text().splitlines()) == [
        "log_case checking A-1", "log_case refund asked", "lookup A-1",
    ]

    done = run_app(tmp_path, "resume", "c1/s3=approve")

    assert done == {
        "stop_reason": "complete",
        "output": "Your refund is on its way.",
        "pending": None,
        "agents": None,
        "tools": [["c1", "Refunded $20 on A-1."], ["c2", "entry-1"]],
        "model_calls": 2,
    }
    assert sorted(effects.read_text().splitlines()) == [
        "log_case checking A-1", "log_case refund asked", "lookup A-1", "refund A-1 20.0",
    ]
