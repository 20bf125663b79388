"""agentkit against agentkit across two processes: ``agentkit serve --a2a`` in one, an
agent using it through ``A2AAgent(...).as_tool()`` in this one; the remote refund waits
for approval, is approved from here, and runs exactly once."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.errors import RunNotResumable
from agentkit.core.contracts.types import ToolCall
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.integrations.a2a import A2AAgent

DEADLINE = 30.0

SHOP = '''
import os, pathlib
from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import LLMResult, ToolCall, Usage
from agentkit.core.testing import make_test_ctx
from agentkit.tools import tool

EFFECTS = pathlib.Path(os.environ["SHOP_EFFECTS"])


class Model:
    """Asks for the refund its task names, then says what the tool said."""

    async def chat(self, request, ctx):
        told = [m for m in request.messages if m.role == "tool"]
        if not told:
            order = request.messages[-1].content.split()[-1]
            call = ToolCall("c1", "refund", {"order_id": order})
            return LLMResult(content="", tool_calls=(call,), usage=Usage(), model="fake")
        return LLMResult(content="support: " + told[-1].content, usage=Usage(), model="fake")

    async def stream(self, request, ctx):
        yield await self.chat(request, ctx)


@tool(side_effecting=True)
def refund(order_id: str) -> str:
    """Refund a customer order in full to the card it was paid with."""
    with EFFECTS.open("a") as out:
        out.write(order_id + "\\n")
    return f"refunded {order_id}"


support = Agent("support", "fake", "You refund.", cognition=ReActCognition([refund]),
                description="Refunds customer orders, each only once a person approves.")


def context():
    return make_test_ctx(llm=Model(), autonomy="gated")
'''


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """``agentkit serve shop.py --a2a`` on a free port; its base URL and effects file."""
    (tmp_path / "shop.py").write_text(SHOP)
    effects = tmp_path / "effects.txt"
    with socket.socket() as sock:  # a free port, for the server to bind again
        sock.bind(("127.0.0.1", 0))
        port = str(sock.getsockname()[1])
    process = subprocess.Popen(
        [sys.executable, "-m", "agentkit", "serve", "shop.py", "--a2a", "--port", port,
         "--store", f"sqlite:///{tmp_path / 'runs.db'}", "--token-env", "SHOP_TOKEN"],
        cwd=tmp_path, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env={**os.environ, "SHOP_TOKEN": "s3cret", "SHOP_EFFECTS": str(effects)},
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # the address, once it listens
        assert line.startswith("agentkit serve: support on http://127.0.0.1:"), (
            line, process.stderr.read() if process.stderr else "")
        yield line.split(" on ")[1].split("/v1")[0], effects
    finally:
        process.terminate()
        process.wait(timeout=DEADLINE)


async def test_a_remote_agentkit_refund_is_approved_from_here_and_runs_once(
    server: tuple[str, Path],
) -> None:
    base, effects = server
    remote = A2AAgent(f"{base}/a2a/support", token="s3cret", private_hosts=["127.0.0.1"])
    assert (remote.name, remote.card.streaming, remote.card.bearer) == ("support", True, True)
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "support", {"task": "refund order A7"}),)),
        Turn(content="Done: A7 is refunded."),
    ])
    ctx = make_test_ctx(llm=llm)
    desk = Agent("desk", "fake", "You route.", cognition=ReActCognition([remote.as_tool()]))
    async with asyncio.timeout(DEADLINE):
        waiting = await desk.run("please refund A7", ctx)
        suspended = waiting.evals["suspended"]
        assert [(c.id, c.name, dict(c.arguments)) for c in suspended.pending] == [
            ("c1/c1", "refund", {"order_id": "A7"})]
        assert dict(suspended.agents) == {"c1/c1": ("desk", "support")}
        assert not effects.exists()  # nothing ran before the approval
        done = await desk.resume(waiting.run_id, {"c1/c1": "approve"}, ctx)
        with pytest.raises(RunNotResumable):
            await desk.resume(waiting.run_id, {"c1/c1": "approve"}, ctx)
    assert done.output == "Done: A7 is refunded."
    assert [m.content for m in done.messages if m.role == "tool"] == ["support: refunded A7"]
    assert effects.read_text() == "A7\n"
