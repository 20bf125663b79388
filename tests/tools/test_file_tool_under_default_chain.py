"""FileTool under make_ctx's default chain: repeats run again, retries replay."""

from __future__ import annotations

from agentkit import make_ctx
from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ToolCall
from agentkit.core.testing import FakeLLM, Turn
from agentkit.tools import FileTool


async def test_a_second_view_after_an_edit_sees_the_edit() -> None:
    files = FileTool()
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "memory", {"command": "view", "path": "/memories"}),)),
        Turn(tool_calls=(ToolCall("c2", "memory", {"command": "create",
                                                   "path": "/memories/a.md",
                                                   "file_text": "hello"}),)),
        Turn(tool_calls=(ToolCall("c3", "memory", {"command": "view", "path": "/memories"}),)),
        Turn(content="done"),
    ])
    agent = Agent(name="notes", model="fake", prompt="p", cognition=ReActCognition(tools=[files]))
    result = await agent.run("take a note", make_ctx(llm))
    assert result.output == "done"
    tool_results = [m.content for m in result.messages if m.role == "tool"]
    assert "a.md" not in tool_results[0]
    assert "a.md" in tool_results[2]


async def test_under_gated_autonomy_a_view_runs_and_a_write_waits() -> None:
    files = FileTool()
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "memory", {"command": "view", "path": "/memories"}),)),
        Turn(tool_calls=(ToolCall("c2", "memory", {"command": "create",
                                                   "path": "/memories/a.md",
                                                   "file_text": "hello"}),)),
    ])
    agent = Agent(name="notes", model="fake", prompt="p", cognition=ReActCognition(tools=[files]))
    result = await agent.run("take a note", make_ctx(llm, autonomy="gated"))
    assert result.stop_reason == "suspended"
    assert [c.id for c in result.evals["suspended"].pending] == ["c2"]
    assert [m.tool_call_id for m in result.messages if m.role == "tool"] == ["c1"]
