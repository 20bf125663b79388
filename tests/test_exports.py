"""`from agentkit import Agent, tool, ...`: the everyday names at the top, loaded lazily."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import agentkit
import agentkit.agents
import agentkit.agents.cognition
import agentkit.core.contracts.errors
import agentkit.core.contracts.state_errors
import agentkit.core.contracts.types
import agentkit.core.testing
import agentkit.tools

EVERYDAY = {
    "Agent": agentkit.agents.Agent,
    "AgentResult": agentkit.agents.AgentResult,
    "FakeLLM": agentkit.core.testing.FakeLLM,
    "ReActCognition": agentkit.agents.cognition.ReActCognition,
    "Reasoning": agentkit.core.contracts.types.Reasoning,
    "Suspended": agentkit.agents.Suspended,
    "ToolCall": agentkit.core.contracts.types.ToolCall,
    "Turn": agentkit.core.testing.Turn,
    "make_test_ctx": agentkit.core.testing.make_test_ctx,
    "tool": agentkit.tools.tool,
}


def _public_errors() -> dict[str, type[BaseException]]:
    modules = (agentkit.core.contracts.errors, agentkit.core.contracts.state_errors)
    return {
        name: value for module in modules for name, value in vars(module).items()
        if isinstance(value, type) and issubclass(value, BaseException)
        and value.__module__ == module.__name__ and not name.startswith("_")
    }


def test_the_everyday_names_and_every_public_error_are_exported_from_agentkit() -> None:
    from agentkit.core.assembly import make_ctx

    expected = {**EVERYDAY, **_public_errors(), "make_ctx": make_ctx}
    assert agentkit.__all__ == sorted(["__version__", *expected])
    for name, value in expected.items():
        assert getattr(agentkit, name) is value, name


def test_from_agentkit_import_works_in_a_fresh_interpreter() -> None:
    code = (
        "from agentkit import Agent, ReActCognition, ToolCall, FakeLLM, Turn, make_test_ctx, "
        "tool, RunNotResumable; print(Agent.__name__, tool.__name__, RunNotResumable.__name__)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert (result.returncode, result.stdout, result.stderr) == (
        0, "Agent tool RunNotResumable\n", ""
    )


def test_import_agentkit_loads_nothing_until_a_name_is_used() -> None:
    code = (
        "import json, sys, agentkit\n"
        "before = sorted(m for m in sys.modules if m.startswith('agentkit'))\n"
        "agentkit.Agent\n"
        "after = 'agentkit.agents.agent' in sys.modules\n"
        "print(json.dumps([before, after]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert json.loads(result.stdout) == [["agentkit"], True]


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError) as info:
        agentkit.Agnet  # noqa: B018
    assert str(info.value) == "module 'agentkit' has no attribute 'Agnet'"


def test_type_checkers_see_the_top_level_names(tmp_path: Path) -> None:
    """The lazy names are declared for mypy (and IDEs) under TYPE_CHECKING."""
    (tmp_path / "use.py").write_text(
        "from typing import assert_type\n"
        "from agentkit import Agent, AgentResult, ReActCognition, RunNotResumable, ToolCall, "
        "make_test_ctx, tool\n"
        "from agentkit.core.runtime import RunContext\n"
        "\n"
        "@tool(side_effecting=False)\n"
        "def echo(text: str) -> str:\n"
        '    """Return the given text unchanged, for checking types."""\n'
        "    return text\n"
        "\n"
        'agent = Agent(name="a", model="fake", prompt="p",\n'
        "              cognition=ReActCognition(tools=[echo]))\n"
        "assert_type(agent, Agent)\n"
        'assert_type(ToolCall("c1", "echo", {"text": "hi"}), ToolCall)\n'
        "assert_type(make_test_ctx(), RunContext)\n"
        "error: type[Exception] = RunNotResumable\n"
        "result: AgentResult | None = None\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"),
         str(tmp_path / "use.py")],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert (result.returncode, result.stdout.splitlines()[-1:]) == (
        0, ["Success: no issues found in 1 source file"]
    ), result.stdout
