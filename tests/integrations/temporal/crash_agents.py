"""Agents for the crash test, run by worker processes (``agentkit temporal worker``).

Every tool execution appends a line to the file ``EFFECTS_FILE`` names (with the worker's
pid), then holds while the file ``HOLD_FILE`` names exists, so a test can kill the worker
mid-call. The model
decides from the transcript alone, so any worker can take any step.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import agentkit
from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ChatRequest, LLMResult, ToolCall
from agentkit.core.runtime.context import RunContext
from agentkit.state.stores.sqlite import SQLiteStore
from agentkit.tools import tool

EFFECTS = Path(os.environ.get("EFFECTS_FILE", os.devnull))
HOLD = Path(os.environ.get("HOLD_FILE", "/nonexistent/hold"))


def _record(line: str) -> None:
    with EFFECTS.open("a", encoding="utf-8") as out:
        out.write(f"{line} {os.getpid()}\n")


async def _hold() -> None:
    for _ in range(600):
        if not HOLD.exists():
            return
        await asyncio.sleep(0.05)


@tool(side_effecting=True, idempotent=True)
async def set_flag(name: str) -> str:
    """Set a named flag to on; setting it again changes nothing."""
    _record(f"set_flag {name}")
    await _hold()
    return f"flag {name} is on"


@tool(side_effecting=True)
async def charge_card(cents: int) -> str:
    """Charge the customer's card once, by the given number of cents."""
    _record(f"charge_card {cents}")
    await _hold()
    return f"charged {cents}"


class TranscriptModel:
    """First turn: ask for both tools; then answer with what the tools said."""

    async def chat(self, request: ChatRequest, ctx: RunContext) -> LLMResult:
        results = [m for m in request.messages if m.role == "tool"]
        if not results:
            calls = (
                ToolCall("c-flag", "set_flag", {"name": "ready"}),
                ToolCall("c-charge", "charge_card", {"cents": 500}),
            )
            return LLMResult(content="", tool_calls=calls)
        return LLMResult(content=" | ".join(m.content for m in results))

    def stream(self, request: ChatRequest, ctx: RunContext) -> object:
        raise NotImplementedError


agent = Agent("payer", "transcript", "You pay.", cognition=ReActCognition([set_flag, charge_card]))


def context() -> RunContext:
    store = SQLiteStore(os.environ["STORE_FILE"], claim_lease=2.0, poll_interval=0.05)
    return agentkit.make_ctx(TranscriptModel(), store=store)
