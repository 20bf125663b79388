"""`agentkit demo`: offline it is scripted, suspends before the refund, resumes once
approved and answers; a model that cannot be used is one line on stderr and status 2."""

from __future__ import annotations

import http.server
import json
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import ClassVar

ROOT = Path(__file__).resolve().parents[1]


def _demo(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "AGENTKIT_MODEL"}
    return subprocess.run(
        [sys.executable, "-m", "agentkit", "demo", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
        cwd=ROOT,
    )


def test_offline_demo_is_scripted_suspends_is_approved_and_answers() -> None:
    result = _demo()
    assert (result.returncode, result.stderr) == (0, "")
    # The run id is random and the token counts are FakeLLM's estimate.
    stdout = re.sub(r"run [0-9a-f]{32} ", "run <id> ", result.stdout)
    stdout = re.sub(r"\d+ input \+ \d+ output", "<n> input + <n> output", stdout)
    # The pip of whichever environment runs the tests.
    stdout = re.sub(r"\n  \S+ install -e ", "\n  <pip> install -e ", stdout)
    assert stdout == EXPECTED


EXPECTED = """\
agentkit demo: SCRIPTED and offline. No model is called: FakeLLM plays the
model from the script in agentkit/demo.py. With a real model:
  <pip> install -e '.[anthropic]'
  ANTHROPIC_API_KEY=... python -m agentkit demo --model anthropic:claude-sonnet-4-6

task    Order A-1042 arrived broken. Please refund it in full.
tools   lookup_order (read-only), issue_refund (side-effecting, requires approval)
chain   tracing > audit > egress > meter > retry > idempotent  (make_ctx's default tool chain)

model   Let me look that order up first.
call    lookup_order(order_id='A-1042')  [call_1]
result  {"order_id": "A-1042", "item": "espresso machine", "paid_usd": 129.0, "status": "delivered"}
model   It was delivered and the customer paid $129.00, so I will refund all of it.
call    issue_refund(order_id='A-1042', amount_usd=129.0, reason='arrived broken')  [call_2]
PAUSED  run <id> is awaiting_approval; nothing of this turn ran
held    call_2 issue_refund {'order_id': 'A-1042', 'amount_usd': 129.0, 'reason': 'arrived broken'}
        arguments are frozen (FrozenDict): what is approved is exactly what runs
approve by the demo (a human, in real use): agent.resume(run_id, {'call_2': 'approve'}, ctx)
result  refund RF-A-1042 of $129.00 issued to the original payment method
model   Refunded $129.00 for order A-1042 (refund RF-A-1042). Sorry it arrived broken!

final   complete after 3 model calls; <n> input + <n> output tokens; $0.0000 of a $0.50 budget
cache   0 prompt tokens read from the provider's cache, 0 written to it
audit   lookup_order  executed  [call_1]
audit   issue_refund  executed  [call_2]
"""


def test_a_model_that_cannot_be_used_is_one_line_and_status_2() -> None:
    result = _demo("--model", "no-such-provider:some-model")
    assert result.returncode == 2
    assert result.stderr.startswith("agentkit demo: model 'no-such-provider:some-model' failed: ")
    assert len(result.stderr.splitlines()) == 1
    assert "Traceback" not in result.stderr


def _keyless_env() -> dict[str, str]:
    hidden = {"AGENTKIT_MODEL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL",
              "OPENAI_API_KEY", "OPENAI_BASE_URL"}
    return {k: v for k, v in os.environ.items() if k not in hidden}


def test_without_a_key_both_providers_say_so_in_one_line_before_any_banner() -> None:
    expected = {
        "anthropic:claude-sonnet-4-6": "anthropic: no credentials: set ANTHROPIC_API_KEY or "
                                       "pass AnthropicLLM(api_key=...)",
        "openai:gpt-4o-mini": "openai: no credentials: set OPENAI_API_KEY or pass "
                              "OpenAIResponsesLLM(api_key=...) (a local OpenAI-compatible "
                              "server needs "
                              "only its address: openai:MODEL@http://HOST/v1)",
    }
    for spec, reason in expected.items():
        result = subprocess.run(
            [sys.executable, "-m", "agentkit", "demo", "--model", spec], capture_output=True,
            text=True, timeout=60, env=_keyless_env(), check=False,
        )
        assert (result.returncode, result.stdout, result.stderr) == (
            2, "", f"agentkit demo: model {spec!r} failed: {reason}\n",
        )


class _ChatServer(http.server.BaseHTTPRequestHandler):
    """A local OpenAI-compatible server (as Ollama is) that needs no key: it answers
    every streamed chat completion with one sentence and records what it was sent."""

    seen: ClassVar[list[tuple[str, str | None]]] = []

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        request = json.loads(self.rfile.read(length))
        self.seen.append((self.path, self.headers.get("Authorization")))
        assert request["stream"] is True
        chunks = [
            {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "No refund "
                          "needed."}, "finish_reason": None}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            {"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 3,
                                      "total_tokens": 15}},
        ]
        body = "".join(
            "data: " + json.dumps({"id": "c1", "object": "chat.completion.chunk", "created": 0,
                                   "model": "llama3.1", **chunk}) + "\n\n"
            for chunk in chunks
        ) + "data: [DONE]\n\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(body.encode())))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_a_local_openai_compatible_server_needs_no_key() -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _ChatServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        spec = f"openai:llama3.1@http://127.0.0.1:{server.server_address[1]}/v1"
        result = subprocess.run(
            [sys.executable, "-m", "agentkit", "demo", "--model", spec], capture_output=True,
            text=True, timeout=60, env=_keyless_env(), check=False,
        )
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert (result.returncode, result.stderr) == (0, "")
    assert "final   complete after 1 model calls; 12 input + 3 output tokens" in result.stdout
    # No key was configured, so none of the user's was sent: only a placeholder.
    assert _ChatServer.seen == [("/v1/chat/completions", "Bearer no-key")]


def test_a_missing_provider_sdk_names_the_clones_install_line(tmp_path: Path) -> None:
    (tmp_path / "sitecustomize.py").write_text("import sys\nsys.modules['anthropic'] = None\n")
    env = {**_keyless_env(), "PYTHONPATH": str(tmp_path), "ANTHROPIC_API_KEY": "sk-ant-x"}
    result = subprocess.run(
        [sys.executable, "-m", "agentkit", "demo", "--model", "anthropic:claude-sonnet-4-6"],
        capture_output=True, text=True, timeout=60, env=env, check=False, cwd=ROOT,
    )
    stderr = re.sub(r"\(in this clone: \S+ install ", "(in this clone: <pip> install ",
                    result.stderr)
    assert (result.returncode, result.stdout, stderr) == (2, "", (
        "agentkit demo: model 'anthropic:claude-sonnet-4-6' failed: the Anthropic provider "
        "needs the 'anthropic' package: pip install \"agentkit-framework[anthropic]\" (in this "
        "clone: <pip> install -e '.[anthropic]')\n"
    ))


async def test_the_demo_keeps_its_run_in_a_store_the_console_shows(tmp_path: Path) -> None:
    import httpx2

    from agentkit import demo
    from agentkit.serve import create_app
    from agentkit.state.stores.sqlite import SQLiteStore
    from tests.serve.served import served

    url = f"sqlite:///{tmp_path / 'demo.db'}"
    result = _demo("--store", url)
    assert (result.returncode, result.stderr) == (0, "")
    kept = re.search(r"agentkit demo: run ([0-9a-f]{32}) is kept in (\S+); open it in the "
                     r"console:\n  python -m agentkit serve agentkit.demo --store (\S+)\n"
                     r"  then http://127.0.0.1:8000/ in a browser\n\Z", result.stdout)
    assert kept is not None and kept.group(2) == kept.group(3) == url
    run_id = kept.group(1)
    store = SQLiteStore(tmp_path / "demo.db")
    app = create_app(demo.agents, context=lambda: demo.context().for_run(
        "console", store=store))
    async with served(app) as base, httpx2.AsyncClient(base_url=base) as http:
        runs = (await http.get("/")).text
        assert f'<tr data-run="{run_id}">' in runs
        assert '<span class="status s-complete">complete</span>' in runs
        run = (await http.get(f"/runs/{run_id}")).text
        assert '<span class="label">tool issue_refund [call_2]</span>' in run
        assert "Refunded $129.00 for order A-1042 (refund RF-A-1042)." in run
    store.close()
