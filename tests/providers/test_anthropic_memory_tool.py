"""FileTool through AnthropicLLM: declared as Claude's native memory tool on the wire,
and the model's memory commands run against the note tree."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.testing import make_test_ctx
from agentkit.providers import AnthropicLLM
from agentkit.tools import FileTool, LocalFiles

from .conftest import Reply, WireServer

MODEL = "claude-sonnet-4-6"


def message(content: list[dict[str, Any]], stop: str) -> Reply:
    return Reply(body={
        "id": "msg_1", "type": "message", "role": "assistant", "model": MODEL,
        "content": content, "stop_reason": stop, "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    })


def use(call_id: str, **command: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "memory", "input": command}


async def test_claude_sees_the_native_memory_tool_and_its_commands_run(
    wire: WireServer, tmp_path: Path
) -> None:
    wire.reply(
        message([use("toolu_1", command="view", path="/memories")], "tool_use"),
        message([use("toolu_2", command="create", path="/memories/ada.md",
                     file_text="Ada drinks tea.\n"),
                 use("toolu_3", command="view", path="/memories/../secret")], "tool_use"),
        message([{"type": "text", "text": "Saved."}], "end_turn"),
    )
    agent = Agent(name="assistant", model=MODEL, prompt="You remember things.",
                  cognition=ReActCognition(tools=[FileTool(LocalFiles(tmp_path / "mem"))]))
    llm = AnthropicLLM(api_key="test-key", base_url=wire.url, max_retries=0)

    result = await agent.run("Ada drinks tea.", make_test_ctx(llm=llm))

    assert result.output == "Saved."
    first, _, third = wire.bodies()
    assert first["tools"] == [{"type": "memory_20250818", "name": "memory"}]
    assert third["messages"][-1] == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "toolu_2",
         "content": "File created successfully at: /memories/ada.md"},
        {"type": "tool_result", "tool_use_id": "toolu_3", "is_error": True,
         "content": "Path /memories/../secret is refused: '..' is not allowed: a path may not "
                    "climb out of a directory"},
    ]}
    assert (tmp_path / "mem" / "ada.md").read_text() == "Ada drinks tea.\n"
