"""agentkit tools served over MCP and consumed back by agentkit are the same tools."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from agentkit.agents import Agent, AgentResult, Suspended
from agentkit.agents.cognition import ReActCognition
from agentkit.cli.mcp import load_servable
from agentkit.core.contracts.types import ToolCall
from agentkit.core.policies import idempotent
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.integrations.mcp import connect_stdio
from agentkit.integrations.mcp.schemas import mcp_input_schema
from agentkit.tools import ToolRegistry

LIMIT = 20

SCRIPT = [
    Turn(tool_calls=(
        ToolCall("c1", "city_population", {"city": "Lisbon"}),
        ToolCall("c2", "city_population", {"town": "Lisbon"}),
        ToolCall("c3", "city_population", {"city": 7}),
        ToolCall("c4", "get_quote", {"symbol": "ACME"}),
        ToolCall("c5", "send_email", {"to": "ops@example.com", "body": "down"}),
    )),
    Turn(tool_calls=(ToolCall("c6", "send_email", {"to": "ops@example.com", "body": "down"}),)),
    Turn(tool_calls=(ToolCall("c7", "refund", {"order_id": "A-1", "amount_usd": 20.0}),)),
]


def local_tools(path: Path, effects: Path, monkeypatch: pytest.MonkeyPatch) -> ToolRegistry:
    monkeypatch.setenv("EFFECTS_FILE", str(effects))
    monkeypatch.setattr(sys, "path", list(sys.path))  # loading adds the file's folder
    return load_servable(str(path)).registry()


async def run_agent(tools: ToolRegistry | list[object], **ctx_options: object) -> AgentResult:
    agent = Agent(name="shop", model="fake", prompt="You run the shop.",
                  cognition=ReActCognition(tools=tools))  # type: ignore[arg-type]
    ctx = make_test_ctx(llm=FakeLLM.script(SCRIPT), **ctx_options)  # type: ignore[arg-type]
    return await agent.run("Handle the morning tasks", ctx)


async def test_served_tools_keep_their_schema_flags_and_behaviour(
    agentkit_tools: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    local_effects, remote_effects = tmp_path / "local.log", tmp_path / "remote.log"
    local_effects.touch()
    remote_effects.touch()
    local = local_tools(agentkit_tools, local_effects, monkeypatch)
    local_result = await run_agent(local, tool_middleware=[idempotent()])

    command = [sys.executable, "-m", "agentkit", "mcp", "serve", str(agentkit_tools)]
    async with asyncio.timeout(LIMIT), connect_stdio(
        command, env={"EFFECTS_FILE": str(remote_effects)}, trust_hints=True
    ) as session:
        remote = await session.list_tools()
        remote_result = await run_agent(remote)

    for tool in remote:
        twin = local.get(tool.name)
        assert tool.schema is not None and twin.schema is not None
        # The served schema is the MCP-facing form of the local one (2020-12 dialect,
        # additionalProperties: false, nested structs in $defs).
        assert (tool.schema.name, tool.schema.description, dict(tool.schema.parameters)) == (
            twin.schema.name, twin.schema.description, mcp_input_schema(twin.schema.parameters)
        )
        assert (tool.side_effecting, tool.idempotent, tool.requires_approval) == (
            twin.side_effecting, getattr(twin, "idempotent", None), twin.requires_approval
        )
    assert sorted(t.name for t in remote) == list(local.names())

    def transcript(result: AgentResult) -> list[tuple[str, str, bool]]:
        return [(m.role, m.content, m.is_error) for m in result.messages]

    assert transcript(remote_result) == transcript(local_result)
    assert transcript(local_result)[2:7] == [
        ("tool", "545000", False),
        ("tool", "tool 'city_population' call rejected: missing required argument(s) ['city']; "
                 "unexpected argument(s) ['town']. Accepted arguments: ['city']", True),
        ("tool", "tool 'city_population' call rejected: invalid argument(s): city: expected a "
                 "string, got integer 7. Accepted arguments: ['city']", True),
        ("tool", '{"symbol": "ACME", "price": 12.5}', False),
        ("tool", "queued for ops@example.com", False),
    ]
    for result in (local_result, remote_result):
        suspended = result.evals["suspended"]
        assert isinstance(suspended, Suspended)
        assert [c.name for c in suspended.pending] == ["refund"]
    # Locally idempotent() dedupes the model's repeated send within the run; the server
    # keys on the client's request identity, and c5 and c6 came as two requests.
    assert local_effects.read_text().splitlines() == ["email ops@example.com"]
    assert remote_effects.read_text().splitlines() == ["email ops@example.com"] * 2
