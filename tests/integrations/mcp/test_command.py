"""`agentkit mcp serve MODULE[:ATTR]`: finding the tools, and one-line mistakes."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentkit.cli import UsageError, main
from agentkit.integrations.mcp.command import find_tools, load_target, serve_command

HOLDERS = '''
from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.tools import ToolRegistry, ask_human, tool


@tool(side_effecting=False)
def alpha(x: int) -> int:
    """Return the number it was given, unchanged, for testing."""
    return x


@tool(side_effecting=False)
def beta(x: int) -> int:
    """Return twice the number it was given, for testing doubling."""
    return 2 * x


@tool(side_effecting=False, name="gamma")
def _hidden(x: int) -> int:
    """Return three times the number it was given, for testing."""
    return 3 * x


PAIR = [alpha, beta]
REGISTRY = ToolRegistry.from_tools([beta])
COGNITION = ReActCognition(tools=[alpha, ask_human])
AGENT = Agent(name="a", model="fake", prompt="p", cognition=ReActCognition(tools=[_hidden]))
NUMBER = 42
'''


def names(target: str) -> list[str]:
    module, attr = load_target(target)
    return list(find_tools(module, attr, target).names())


@pytest.fixture(autouse=True)
def isolated_imports(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Targets are imported into this process; forget them (and their folder) after."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", "") or "").startswith(str(tmp_path)):
            del sys.modules[name]


@pytest.fixture
def holders(script: Callable[[str, str], Path]) -> Path:
    return script("holders.py", HOLDERS)


def test_attr_may_name_a_tool_a_list_a_registry_a_cognition_or_an_agent(holders: Path) -> None:
    assert names(f"{holders}:alpha") == ["alpha"]
    assert names(f"{holders}:PAIR") == ["alpha", "beta"]
    assert names(f"{holders}:REGISTRY") == ["beta"]
    assert names(f"{holders}:COGNITION") == ["alpha", "ask_human"]  # asked by elicitation
    assert names(f"{holders}:AGENT") == ["gamma"]


def test_without_attr_the_module_is_scanned(holders: Path) -> None:
    # Public tools and the tools of public holders, each once (ask_human is asked of
    # the client's user through elicitation).
    assert names(str(holders)) == ["alpha", "ask_human", "beta", "gamma"]


def test_a_module_name_imports_from_the_working_directory(
    holders: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(holders.parent)
    assert names("holders:beta") == ["beta"]


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("no_such_module_xyz",
         "cannot import 'no_such_module_xyz': no module named 'no_such_module_xyz' (run from "
         "the directory that holds it, or pass the path to a .py file)"),
        ("{dir}/missing.py", "cannot serve '{dir}/missing.py': no such file"),
        ("{dir}/broken.py", "importing '{dir}/broken.py' failed: ZeroDivisionError: division "
                            "by zero"),
        ("{dir}/holders.py:nope", "'holders' has no attribute 'nope'"),
        ("{dir}/holders.py:NUMBER", "'{dir}/holders.py:NUMBER' is a int, not tools: point at a "
                                    "tool, a list of tools, a ToolRegistry, a ReActCognition "
                                    "or an Agent"),
        ("{dir}/empty.py", "no tools found in '{dir}/empty.py': define tools with @tool at "
                           "module level, or name the object that holds them: agentkit mcp "
                           "serve {dir}/empty.py:ATTR"),
        ("{dir}/twins.py", "'{dir}/twins.py' holds two different tools named 'echo'; name the "
                           "one to serve: agentkit mcp serve {dir}/twins.py:ATTR"),
    ],
)
def test_a_bad_target_is_a_one_line_usage_error(
    target: str, message: str, holders: Path, script: Callable[[str, str], Path]
) -> None:
    script("broken.py", "1 / 0\n")
    script("empty.py", "VALUE = 1\n")
    script("twins.py", '''
        from agentkit.tools import tool

        @tool(side_effecting=False, name="echo")
        def first(text: str) -> str:
            """Echo the text back to the caller, unchanged."""
            return text

        @tool(side_effecting=False, name="echo")
        def second(text: str) -> str:
            """Echo the text back to the caller, reversed."""
            return text[::-1]
    ''')
    directory = str(holders.parent)
    with pytest.raises(UsageError) as error:
        serve_command(target.replace("{dir}", directory))
    assert str(error.value) == message.replace("{dir}", directory)
    assert "\n" not in str(error.value)


def test_the_cli_prints_a_bad_target_on_one_line_and_exits_2(
    holders: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["mcp", "serve", str(holders), "--http", "localhost"]) == 2
    assert main(["mcp", "serve", f"{holders.parent}/missing.py"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "agentkit: error: --http: expected HOST:PORT such as 127.0.0.1:8000, got 'localhost'",
        f"agentkit: error: cannot serve '{holders.parent}/missing.py': no such file",
    ]
