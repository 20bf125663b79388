"""agentkit serve: one-line errors before anything is served, the address printed, a
clean stop on SIGTERM, and a server killed mid-call whose run is recovered on restart."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx2
import pytest

DEADLINE = 30.0

SHOP = '''
from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import LLMResult, ToolCall, Usage
from agentkit.core.testing import make_test_ctx
from agentkit.tools import tool
import asyncio, os, pathlib

EFFECTS = pathlib.Path(os.environ["SHOP_EFFECTS"])


class Model:
    """Asks for one refund, then answers with what the tool said."""

    async def chat(self, request, ctx):
        told = [m for m in request.messages if m.role == "tool"]
        if not told:
            call = ToolCall("c1", "refund", {"order_id": "A1"})
            return LLMResult(content="", tool_calls=(call,), usage=Usage(), model="fake")
        return LLMResult(content="told: " + told[-1].content, usage=Usage(), model="fake")

    async def stream(self, request, ctx):
        yield await self.chat(request, ctx)


@tool(side_effecting=True)
async def refund(order_id: str) -> str:
    """Refund a customer order in full to the card it was paid with."""
    with EFFECTS.open("a") as out:
        out.write(order_id + "\\n")
    if os.environ.get("SHOP_HANG"):
        await asyncio.Event().wait()  # the server is killed while this call runs
    return "refunded"


support = Agent("support", "fake", "You help.", cognition=ReActCognition([refund]))


def context():
    return make_test_ctx(llm=Model())
'''


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def agentkit_serve(*args: str, cwd: Path, env: dict[str, str] | None = None
                   ) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "agentkit", "serve", *args], cwd=cwd, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **(env or {})},
    )


def one_shot(*args: str, cwd: Path, env: dict[str, str] | None = None
             ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentkit", "serve", *args], cwd=cwd, text=True,
        capture_output=True, timeout=60, check=False, env={**os.environ, **(env or {})},
    )


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    (tmp_path / "shop.py").write_text(SHOP)
    return tmp_path


@pytest.mark.parametrize(("args", "env", "message"), [
    (["--store", "redis://x"], {}, "--store 'redis://x' is not a store URL: use memory:, "
     "sqlite:///runs.db (a file), or postgresql://user@host/db"),
    (["--store", "memory:", "--host", "0.0.0.0"], {}, "--host 0.0.0.0: refusing to serve "
     "'0.0.0.0' without tokens: anyone who can reach it could start runs and approve their "
     "tool calls. Give tokens (--token-env NAME or --tokens FILE, or create_app(..., "
     "auth={token: Principal(...)})), or bind to 127.0.0.1"),
    (["--store", "memory:", "--token-env", "SHOP_UNSET"], {}, "--token-env SHOP_UNSET: the "
     "environment variable SHOP_UNSET is not set or empty; set it to a long random secret"),
    (["--store", "memory:", "--host", "0.0.0.0", "--token-env", "SHOP_TOKEN"],
     {"SHOP_TOKEN": "s3cret"}, "--host 0.0.0.0: '0.0.0.0' listens on every address, so "
     "there is no one Host value to accept: name the host names clients use, e.g. "
     "--allow-host agents.example.com:8000 (allowed_hosts=[...])"),
    (["--store", "memory:", "--tokens", "missing.json"], {}, "--tokens: cannot read the "
     "tokens file missing.json: No such file or directory"),
])
def test_a_bad_command_line_is_one_line_and_status_2(
    shop: Path, args: list[str], env: dict[str, str], message: str
) -> None:
    result = one_shot("shop.py", *args, cwd=shop, env=env)
    assert (result.returncode, result.stdout, result.stderr) == (
        2, "", f"agentkit: error: {message}\n")


def test_a_module_without_agents_is_one_line_and_status_2(tmp_path: Path) -> None:
    (tmp_path / "empty.py").write_text("x = 1\n")
    result = one_shot("empty.py", "--store", "memory:", cwd=tmp_path)
    assert (result.returncode, result.stderr) == (2, "agentkit: error: no agents found in "
            "'empty.py': define Agent objects at module level, an `agents` list, or name "
            "one: agentkit serve MODULE:ATTR\n")


def read_line(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    return process.stdout.readline()


async def wait_for_line(path: Path) -> str:
    """The first line another process writes to ``path``."""
    async with asyncio.timeout(DEADLINE):
        while not path.exists() or not path.read_text():
            await asyncio.sleep(0.05)  # another process writes it: no event to await
    return path.read_text()


async def test_a_killed_server_recovers_its_run_on_restart_without_repeating_the_refund(
    shop: Path,
) -> None:
    port = free_port()
    effects = shop / "effects.txt"
    args = ("shop.py", "--store", "sqlite:///runs.db", "--port", str(port))
    env = {"SHOP_EFFECTS": str(effects), "SHOP_HANG": "1"}
    first = agentkit_serve(*args, cwd=shop, env=env)
    try:
        assert read_line(first) == (
            f"agentkit serve: support on http://127.0.0.1:{port}/v1 (Ctrl-C stops)\n")
        async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            started = await http.post("/v1/agents/support/runs",
                                      json={"input": "refund A1", "run_id": "r1"})
            assert started.status_code == 202
            assert await wait_for_line(effects) == "A1\n"
    finally:
        first.kill()  # SIGKILL mid-call: no shutdown code runs
        first.wait()
    second = agentkit_serve(*args, cwd=shop, env={"SHOP_EFFECTS": str(effects)})
    try:
        read_line(second)
        async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}") as http:
            async with asyncio.timeout(DEADLINE), http.stream(
                "GET", "/v1/runs/r1/events", timeout=DEADLINE) as events:
                kinds = [json.loads(line[6:])["kind"] async for line in events.aiter_lines()
                         if line.startswith("data: ")]
            run = (await http.get("/v1/runs/r1")).json()
        assert kinds == ["final"]  # a run recovered here starts a new event log
        # The intent rules: a side-effecting call the crash interrupted is not run
        # again; the model is told its outcome is unknown.
        assert (run["status"], run["pending"]) == ("complete", [])
        assert run["output"] == (
            "told: The outcome of this call to 'refund' is unknown: the worker running it "
            "stopped (it crashed or was killed) after the call started and before its result "
            "was recorded, so it may or may not have taken effect. It was not run again: "
            "'refund' is not declared idempotent. Check whether it took effect before "
            "repeating it.")
        assert effects.read_text() == "A1\n"  # the refund was not made a second time
    finally:
        second.send_signal(signal.SIGTERM)
        assert second.wait(timeout=DEADLINE) == 0
        assert second.stdout is not None
        assert second.stdout.read() == (
            "agentkit serve: stopped; runs in flight keep their last checkpoint\n")


def test_a_port_in_use_is_one_line_and_status_2(shop: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = one_shot("shop.py", "--store", "memory:", "--port", str(port), cwd=shop,
                          env={"SHOP_EFFECTS": str(shop / "effects.txt")})
    assert (result.returncode, result.stderr) == (
        2, f"agentkit: error: cannot listen on 127.0.0.1:{port}: Address already in use\n")


def test_temporal_without_a_task_queue_is_one_line_and_status_2(shop: Path) -> None:
    result = one_shot("shop.py", "--store", "memory:", "--temporal", "127.0.0.1:7233",
                      cwd=shop)
    assert (result.returncode, result.stderr) == (2, "agentkit: error: --temporal ADDRESS "
            "and --task-queue Q go together: the Temporal frontend and the task queue its "
            "`agentkit temporal worker`s poll\n")


async def test_with_temporal_the_runs_execute_on_the_worker_and_the_server_stops_cleanly(
    shop: Path, temporal_address: str
) -> None:
    port = free_port()
    effects = shop / "effects.txt"
    env = {"SHOP_EFFECTS": str(effects)}
    worker = subprocess.Popen(
        [sys.executable, "-m", "agentkit", "temporal", "worker", "shop.py", "--address",
         temporal_address, "--task-queue", "serve-cli"], cwd=shop, text=True,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **env})
    server = agentkit_serve("shop.py", "--store", "sqlite:///runs.db", "--port", str(port),
                            "--temporal", temporal_address, "--task-queue", "serve-cli",
                            cwd=shop, env=env)
    try:
        assert read_line(worker).startswith("agentkit: worker for support on task queue ")
        assert read_line(server) == (
            f"agentkit serve: support on http://127.0.0.1:{port}/v1 (Ctrl-C stops)\n")
        async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}",
                                      timeout=DEADLINE) as http:
            done = await http.post("/v1/agents/support/runs", json={
                "input": "refund A1", "run_id": f"cli-{port}", "wait": True})
            listed = (await http.get("/v1/runs?status=complete")).json()["runs"]
        assert (done.json()["status"], done.json()["output"]) == ("complete", "told: refunded")
        assert [r["run_id"] for r in listed] == [f"cli-{port}"]
        assert effects.read_text() == "A1\n"  # run by the worker, once
    finally:
        server.send_signal(signal.SIGTERM)
        worker.send_signal(signal.SIGTERM)
        assert server.wait(timeout=DEADLINE) == 0
        worker.wait(timeout=DEADLINE)
    assert server.stdout is not None
    assert server.stdout.read() == (
        "agentkit serve: stopped; runs in flight keep their last checkpoint\n")


REVIEW = SHOP + '''
from agentkit.agents.workflow import Workflow


async def draft(inputs, ctx):
    return "draft of " + inputs["task"]


review = Workflow("review").add("draft", draft).gate("publish", "Publish?", after=["draft"])
'''


async def test_a_module_s_workflows_are_served_beside_its_agents(tmp_path: Path) -> None:
    (tmp_path / "shop.py").write_text(REVIEW)
    port = free_port()
    server = agentkit_serve("shop.py", "--store", "memory:", "--port", str(port), cwd=tmp_path,
                            env={"SHOP_EFFECTS": str(tmp_path / "effects.txt")})
    try:
        assert read_line(server) == (
            f"agentkit serve: support, review on http://127.0.0.1:{port}/v1 (Ctrl-C stops)\n")
        async with httpx2.AsyncClient(base_url=f"http://127.0.0.1:{port}",
                                      timeout=DEADLINE) as http:
            served = (await http.get("/v1/agents")).json()["agents"]
            held = (await http.post("/v1/agents/review/runs", json={
                "input": "the post", "run_id": "w1", "wait": True})).json()
        assert [(a["name"], a["kind"]) for a in served] == [
            ("support", "agent"), ("review", "workflow")]
        assert (held["status"], [p["call_id"] for p in held["pending"]]) == (
            "suspended", ["publish"])
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=DEADLINE) == 0
