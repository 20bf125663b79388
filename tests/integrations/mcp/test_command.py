"""`agentkit mcp serve MODULE[:ATTR]`: finding the tools, and one-line mistakes."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentkit.cli import UsageError, main
from agentkit.cli.mcp import load_servable, serve_command

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
    return [tool.name for tool in load_servable(target).tools]


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
    assert names(str(holders)) == ["ask_human", "alpha", "beta", "gamma"]  # definition order


def test_a_module_name_imports_from_the_working_directory(
    holders: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(holders.parent)
    assert names("holders:beta") == ["beta"]


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("no_such_module_xyz",
         "no module named 'no_such_module_xyz' (run from the directory that holds it, or pass "
         "the path to a .py file)"),
        ("{dir}/missing.py", "no such file: '{dir}/missing.py'"),
        ("{dir}/broken.py", "importing '{dir}/broken.py' failed at {dir}/broken.py:1: "
                            "ZeroDivisionError: division by zero"),
        ("{dir}/holders.py:nope", "'{dir}/holders.py' has no attribute 'nope'"),
        ("{dir}/holders.py:NUMBER", "'{dir}/holders.py:NUMBER' is an int, not tools: point at "
                                    "a tool, a list of tools, a ToolRegistry, a ReActCognition "
                                    "or an Agent"),
        ("{dir}/empty.py", "no tools found in '{dir}/empty.py': define tools with @tool at "
                           "module level, or name the object that holds them: agentkit mcp "
                           "serve {dir}/empty.py:ATTR"),
        ("{dir}", "'{dir}' is a directory: pass a .py file (such as {dir}/tools.py) or an "
                  "importable module name (such as package.tools)"),
    ],
)
def test_a_bad_target_is_a_one_line_usage_error(
    target: str, message: str, holders: Path, script: Callable[[str, str], Path]
) -> None:
    script("broken.py", "1 / 0\n")
    script("empty.py", "VALUE = 1\n")
    directory = str(holders.parent)
    with pytest.raises(UsageError) as error:
        serve_command(target.replace("{dir}", directory))
    assert str(error.value) == message.replace("{dir}", directory)
    assert "\n" not in str(error.value)


def test_two_tools_under_one_name_are_a_definition_problem_and_nothing_is_served(
    script: Callable[[str, str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    twins = script("twins.py", '''
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
    assert serve_command(str(twins)) == 1
    assert capsys.readouterr().err.splitlines() == [
        f"error: {twins}:8: two different tools are named 'echo' (the other is at "
        f"{twins}:3): rename one with @tool(name=...), or name the one to use: agentkit mcp "
        f"serve {twins}:ATTR"
    ]


def test_the_cli_prints_a_bad_target_on_one_line_and_exits_2(
    holders: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["mcp", "serve", str(holders), "--http", "localhost"]) == 2
    assert main(["mcp", "serve", f"{holders.parent}/missing.py"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "agentkit: error: --http: expected HOST:PORT such as 127.0.0.1:8000, got 'localhost'",
        f"agentkit: error: no such file: '{holders.parent}/missing.py'",
    ]


def test_the_command_says_at_start_up_what_it_can_do_about_approval_tools(
    script: Callable[[str, str], Path],
) -> None:
    import subprocess

    shop = script("shop.py", '''
        from agentkit.tools import tool

        @tool(side_effecting=True, requires_approval=True)
        def refund(order_id: str) -> str:
            """Issue a refund against a customer order and return the confirmation id."""
            return order_id
    ''')
    result = subprocess.run(  # stdin at EOF: the stdio server starts, then ends cleanly
        [sys.executable, "-m", "agentkit", "mcp", "serve", str(shop)], stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert (result.returncode, result.stdout, result.stderr) == (0, "", (
        "agentkit mcp serve: ['refund'] need a human's approval: each call is put to the "
        "client's user through elicitation, and refused when the client cannot elicit. To "
        "decide in code, start the server from Python with serve(tools, approve=callback); to "
        f"leave them out, name a list of the other tools: agentkit mcp serve {shop}:ATTR\n"
    ))
