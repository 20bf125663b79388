"""Every command that loads a tools module judges it the same way: one loader, one
message and one exit status per kind of mistake (`agentkit tools inspect` and
`agentkit mcp serve`, run as real commands)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

COMMANDS = (("tools", "inspect"), ("mcp", "serve"))

MODULES = {
    "bad_syntax.py": "def f(:\n    pass\n",
    "crashes.py": "x = 1\nraise RuntimeError('boom')\n",
    "empty.py": "x = 1\n",
    "undeclared.py": '''
        from agentkit.tools import tool

        @tool(side_effecting=False)
        def fine(q: str) -> str:
            """Search the catalogue for a free-text query and return SKUs."""
            return q

        @tool
        def undeclared(q: str) -> str:
            """Send an email to a single recipient and return the id."""
            return q
    ''',
    "twins.py": '''
        from agentkit.tools import tool

        @tool(side_effecting=False, name="echo")
        def first(text: str) -> str:
            """Echo the text back to the caller, unchanged."""
            return text

        @tool(side_effecting=False, name="echo")
        def second(text: str) -> str:
            """Echo the text back to the caller, reversed."""
            return text[::-1]
    ''',
}

UNDECLARED = (
    "error: undeclared.py:8: @tool requires an explicit `side_effecting=` keyword (True if the "
    "tool mutates the world / has external effects, False if it's read-only). The framework's "
    "approval gating and idempotency depend on knowing upfront."
)

# (target, exit status, stderr); {command} is the command that ran, {dir} the folder.
CASES = [
    ("bad_syntax.py", 2, "agentkit: error: importing 'bad_syntax.py' failed at "
                         "{dir}/bad_syntax.py:1: SyntaxError: invalid syntax"),
    ("crashes.py", 2, "agentkit: error: importing 'crashes.py' failed at {dir}/crashes.py:2: "
                      "RuntimeError: boom"),
    ("empty.py", 2, "agentkit: error: no tools found in 'empty.py': define tools with @tool at "
                    "module level, or name the object that holds them: agentkit {command} "
                    "empty.py:ATTR"),
    (".", 2, "agentkit: error: '.' is a directory: pass a .py file (such as ./tools.py) or an "
             "importable module name (such as package.tools)"),
    ("undeclared.py", 1, UNDECLARED),
    ("twins.py", 1, "error: twins.py:8: two different tools are named 'echo' (the other is at "
                    "twins.py:3): rename one with @tool(name=...), or name the one to use: "
                    "agentkit {command} twins.py:ATTR"),
]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("targets")
    for name, source in MODULES.items():
        (path / name).write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return path


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
@pytest.mark.parametrize(("target", "status", "stderr"), CASES, ids=[c[0] for c in CASES])
def test_every_command_reports_a_target_the_same_way(
    command: tuple[str, str], target: str, status: int, stderr: str, folder: Path
) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "agentkit", *command, target], capture_output=True, text=True,
        cwd=folder, timeout=60, check=False, stdin=subprocess.DEVNULL,
    )
    assert (result.returncode, result.stderr.strip()) == (
        status, stderr.format(command=" ".join(command), dir=folder),
    )
    if status == 2 or command == ("mcp", "serve"):
        assert result.stdout == ""  # nothing listed, nothing served
