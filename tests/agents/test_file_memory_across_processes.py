"""What the model wrote yesterday is recalled today: a ReAct agent creates, edits and
reads back notes through FileTool on LocalFiles in one process; a second agent in a new
process recalls them through FileMemory."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

_WRITER = '''
import asyncio, json, sys
from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ToolCall
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.tools import FileTool, LocalFiles

def call(i, **args):
    return Turn(tool_calls=(ToolCall(f"c{i}", "memory", args),))

llm = FakeLLM.script([
    call(1, command="view", path="/memories"),
    call(2, command="create", path="/memories/people/ada.md",
         file_text="# Ada\\n- Drinks: coffee\\n- Team: platform\\n"),
    call(3, command="str_replace", path="/memories/people/ada.md",
         old_str="coffee", new_str="green tea, no sugar"),
    call(4, command="insert", path="/memories/people/ada.md", insert_line=3,
         insert_text="- Timezone: Europe/Lisbon"),
    call(5, command="view", path="/memories/people/ada.md"),
    Turn(content="I will remember that Ada drinks green tea."),
])
agent = Agent("assistant", "fake", "You help the team.",
              cognition=ReActCognition([FileTool(LocalFiles(sys.argv[1]))]))
result = asyncio.run(agent.run("Ada switched from coffee to green tea, no sugar.",
                               make_test_ctx(llm=llm)))
llm.assert_all_used()
print(json.dumps({
    "output": result.output,
    "results": [[m.content, m.is_error] for m in result.messages if m.role == "tool"],
}))
'''

_READER = '''
import asyncio, json, sys
from agentkit.agents import Agent
from agentkit.core.testing import FakeLLM, make_test_ctx
from agentkit.state.memory import FileMemory
from agentkit.tools import LocalFiles

llm = FakeLLM("Green tea, no sugar.")
agent = Agent("assistant", "fake", "You help the team.",
              memory=FileMemory(LocalFiles(sys.argv[1])))
result = asyncio.run(agent.run("What does Ada drink?", make_test_ctx(llm=llm)))
print(json.dumps({"output": result.output, "system": llm.requests[0].system}))
'''


def _run(script: str, directory: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", script, str(directory)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_notes_written_in_one_process_are_recalled_in_the_next(tmp_path: Path) -> None:
    directory = tmp_path / "memories"

    written = _run(_WRITER, directory)

    assert written["output"] == "I will remember that Ada drinks green tea."
    assert written["results"] == [
        ["Here're the files and directories up to 2 levels deep in /memories, excluding "
         "hidden items:\n0B\t/memories", False],
        ["File created successfully at: /memories/people/ada.md", False],
        ["The memory file has been edited. Here is the snippet showing the change (with line "
         "numbers):\n     1\t# Ada\n     2\t- Drinks: green tea, no sugar\n     3\t- Team: "
         "platform\n     4\t", False],
        ["The file /memories/people/ada.md has been edited.", False],
        ["Here's the content of /memories/people/ada.md with line numbers:\n     1\t# Ada\n"
         "     2\t- Drinks: green tea, no sugar\n     3\t- Team: platform\n"
         "     4\t- Timezone: Europe/Lisbon\n     5\t", False],
    ]
    note = "# Ada\n- Drinks: green tea, no sugar\n- Team: platform\n- Timezone: Europe/Lisbon\n"
    assert (directory / "people" / "ada.md").read_text() == note

    recalled = _run(_READER, directory)

    assert recalled["output"] == "Green tea, no sugar."
    assert recalled["system"] == (
        "You help the team.\n\n"
        "Notes recalled from your memory for this task (they may be out of date):\n"
        "<memories>\n"
        f'<memory source="/memories/people/ada.md">\n{note.strip()}\n</memory>\n'
        "</memories>"
    )
