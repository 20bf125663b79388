"""A run suspended for approval right after a reasoning turn, resumed in another OS
process over one SQLite file, still sends the provider its reasoning: Anthropic's signed
thinking, OpenAI's encrypted reasoning item."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import Reply, WireServer
from .fake_responses import call, check_request, reasoning, reply, text

_APP = '''
import asyncio, json, sys
from agentkit import Reasoning
from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ModelSettings
from agentkit.core.testing import make_test_ctx
from agentkit.providers import AnthropicLLM, OpenAIResponsesLLM
from agentkit.state.stores.sqlite import SQLiteStore
from agentkit.tools import tool

db, provider, url, command = sys.argv[1:]


@tool(side_effecting=True)
def refund(order_id: str) -> str:
    """Refund an order to the customer's card; a person approves it first."""
    return "refunded " + order_id


if provider == "anthropic":
    llm = AnthropicLLM(api_key="k", base_url=url, max_retries=0, cache=None)
    model = "claude-sonnet-4-6"
else:
    llm, model = OpenAIResponsesLLM(api_key="k", base_url=url + "/v1", max_retries=0), "gpt-5"
agent = Agent("desk", model, "You handle refunds.", cognition=ReActCognition([refund]),
              settings=ModelSettings(reasoning=Reasoning(effort="low")))


async def main():
    ctx = make_test_ctx(llm=llm, store=SQLiteStore(db), autonomy="gated",
                        correlation_id="run-1" if command == "start" else None)
    if command == "start":
        result = await agent.run("Refund order A1.", ctx)
    else:
        result = await agent.resume("run-1", {"c1": "approve"}, ctx)
    print(json.dumps({"stop_reason": result.stop_reason, "output": result.output}))

asyncio.run(main())
'''

THINKING = {"type": "thinking", "thinking": "A refund needs approval.",
            "signature": "EqQBCkYIBxgCKkBsig=="}
ITEM = reasoning("rs_1", "A refund needs approval.", "gAAAAencrypted-1")


def anthropic_reply(content: list[dict[str, Any]], stop: str) -> Reply:
    return Reply(body={
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
        "content": content, "stop_reason": stop, "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    })


def run(tmp_path: Path, wire: WireServer, provider: str, command: str) -> Any:
    script = tmp_path / "app.py"
    script.write_text(_APP)
    proc = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "runs.db"), provider, wire.url, command],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_resumed_run_in_another_process_still_sends_the_reasoning(
    tmp_path: Path, wire: WireServer, provider: str
) -> None:
    if provider == "anthropic":
        wire.reply(
            anthropic_reply([THINKING, {"type": "tool_use", "id": "c1", "name": "refund",
                                        "input": {"order_id": "A1"}}], "tool_use"),
            anthropic_reply([{"type": "text", "text": "Refunded."}], "end_turn"),
        )
    else:
        wire.reply(reply([ITEM, call("c1", "refund", {"order_id": "A1"}, "fc_1")]),
                   reply([text("Refunded.")]))

    assert run(tmp_path, wire, provider, "start") == {"stop_reason": "suspended", "output": None}
    assert run(tmp_path, wire, provider, "resume") == {
        "stop_reason": "complete", "output": "Refunded."
    }

    resumed = wire.bodies()[1]
    if provider == "anthropic":
        assert resumed["messages"][1]["content"][0] == THINKING
    else:
        check_request(resumed)
        assert resumed["input"][1:3] == [ITEM, {
            "type": "function_call", "call_id": "c1", "name": "refund",
            "arguments": '{"order_id": "A1"}',
        }]
