"""The agentkit command: help, version, tools inspect, and one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import agentkit

HERE = Path(__file__).resolve().parent


def agentkit_cmd(*args: str, cwd: Path = HERE) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentkit", *args], capture_output=True, text=True, cwd=cwd,
        timeout=60, check=False,
    )


def test_help_lists_the_commands() -> None:
    result = agentkit_cmd("--help")
    assert result.returncode == 0
    for command in ("demo", "tools", "mcp", "eval"):
        assert command in result.stdout


def test_version() -> None:
    result = agentkit_cmd("--version")
    assert result.stdout.strip() == f"agentkit {agentkit.__version__}"


def test_inspect_prints_the_schemas_the_page_shows() -> None:
    result = agentkit_cmd("tools", "inspect", "page_tools", "--json")
    assert result.returncode == 0, result.stderr
    tools = {t["name"]: t for t in json.loads(result.stdout)["tools"]}
    assert list(tools) == ["city_population", "forecast", "list_projects", "flexible", "refund"]
    assert tools["city_population"]["parameters"] == {
        "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
    }
    assert json.dumps(tools["forecast"]["parameters"]) == (
        '{"type": "object", "properties": {"city": {"type": "string"}, "unit": {"enum": '
        '["celsius", "fahrenheit"], "type": "string"}, "days": {"type": "integer"}, '
        '"mode": {"enum": ["hourly", "daily"], "type": "string"}}, "required": '
        '["city", "unit"]}'
    )
    assert tools["list_projects"]["parameters"] == {
        "type": "object", "properties": {"prefix": {"type": "string"}}, "required": ["prefix"],
    }
    assert tools["flexible"]["parameters"] == {
        "type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"],
    }
    refund = tools["refund"]
    assert (refund["side_effecting"], refund["idempotent"], refund["requires_approval"]) == (
        True, False, True,
    )
    assert refund["description_chars"] == len(refund["description"]) == 71
    assert refund["source"].endswith("page_tools.py:43")


def test_inspect_human_output_shows_flags_description_and_schema() -> None:
    result = agentkit_cmd("tools", "inspect", "page_tools:city_population")
    assert result.returncode == 0
    assert result.stdout.splitlines() == [
        f"city_population  (page_tools.py:{_line('def city_population') - 1})",
        "  side_effecting=False idempotent=True requires_approval=False",
        "  description (59 chars):",
        "    Look up the most recent census population for a named city.",
        '  parameters: {"type": "object", "properties": {"city": {"type": "string"}}, '
        '"required": ["city"]}',
        "",
    ]


def _line(text: str) -> int:
    lines = (HERE / "page_tools.py").read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.startswith(text))


def test_definition_errors_are_reported_per_tool_with_file_and_line(tmp_path: Path) -> None:
    (tmp_path / "bad_tools.py").write_text(
        "from agentkit.tools import tool\n"
        "\n"
        "@tool(side_effecting=False)\n"
        "def ok(q: str) -> str:\n"
        '    """Search the catalogue for a free-text query and return SKUs."""\n'
        "    return q\n"
        "\n"
        "@tool(side_effecting=False)\n"
        "def thin(q: str) -> str:\n"
        '    """Look it up."""\n'
        "    return q\n"
        "\n"
        "@tool\n"
        "def undeclared(q: str) -> str:\n"
        '    """Send an email to a single recipient and return the id."""\n'
        "    return q\n"
    )
    result = agentkit_cmd("tools", "inspect", "bad_tools.py", "--json", cwd=tmp_path)
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert [t["name"] for t in report["tools"]] == ["ok"]
    assert [(e["tool"], e["file"], e["line"]) for e in report["errors"]] == [
        ("thin", "bad_tools.py", 8), ("undeclared", "bad_tools.py", 13),
    ]
    assert report["errors"][0]["message"].startswith(
        "tool 'thin' needs a docstring/description of at least 30 characters"
    )
    human = agentkit_cmd("tools", "inspect", "bad_tools.py", cwd=tmp_path)
    assert human.returncode == 1
    assert "error: bad_tools.py:8: tool 'thin' needs" in human.stderr


def test_user_mistakes_are_one_line_without_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "empty.py").write_text("x = 1\n")
    cases = {
        ("tools", "inspect", "no_such_module"): (
            "agentkit: error: no module named 'no_such_module' (run from the directory that "
            "holds it, or pass the path to a .py file)"
        ),
        ("tools", "inspect", "empty.py:nope"): (
            "agentkit: error: 'empty.py' has no attribute 'nope'"
        ),
        ("tools", "inspect", "empty.py:x"): (
            "agentkit: error: 'empty.py:x' is an int, not tools: point at a tool, a list of "
            "tools, a ToolRegistry, a ReActCognition or an Agent"
        ),
        ("tools", "inspect", "missing.py"): "agentkit: error: no such file: 'missing.py'",
    }
    for args, message in cases.items():
        result = agentkit_cmd(*args, cwd=tmp_path)
        assert result.returncode == 2, args
        assert result.stderr.strip() == message
        assert "Traceback" not in result.stderr


def test_a_missing_extra_is_one_line_naming_the_install(tmp_path: Path) -> None:
    (tmp_path / "sitecustomize.py").write_text("import sys\nsys.modules['mcp'] = None\n")
    (tmp_path / "tools_mod.py").write_text(
        "from agentkit.tools import tool\n"
        "@tool(side_effecting=False)\n"
        "def echo(text: str) -> str:\n"
        '    """Return the given text unchanged, for checking the server."""\n'
        "    return text\n"
    )
    import os

    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-m", "agentkit", "mcp", "serve", "tools_mod.py"],
        capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60, check=False,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.count("\n") == 1
    assert 'pip install -U "agentkit-framework[mcp]"' in result.stderr


def test_inspect_lists_plain_functions_it_takes_as_read_only(tmp_path: Path) -> None:
    (tmp_path / "agent_mod.py").write_text(
        "from agentkit.agents.cognition import ReActCognition\n"
        "\n"
        "def delete_user(user_id: str) -> str:\n"
        '    """Delete a user account and everything it owns, permanently."""\n'
        "    return user_id\n"
        "\n"
        "COGNITION = ReActCognition(tools=[delete_user])\n"
    )
    result = agentkit_cmd("tools", "inspect", "agent_mod.py", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout.splitlines()[:3] == [
        "delete_user  (agent_mod.py:3)",
        "  side_effecting=False idempotent=False requires_approval=False",
        "  [plain function: taken as side_effecting=False; declare it with "
        "@tool(side_effecting=...)]",
    ]
    as_json = agentkit_cmd("tools", "inspect", "agent_mod.py", "--json", cwd=tmp_path)
    assert [t["bare_function"] for t in json.loads(as_json.stdout)["tools"]] == [True]


def _with_closed_stdout(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the command with its stdout a pipe whose reader is gone, as under `| true`."""
    import os

    read_end, write_end = os.pipe()
    os.close(read_end)
    env = {k: v for k, v in os.environ.items() if k != "AGENTKIT_MODEL"}
    try:
        return subprocess.run(
            [sys.executable, "-m", "agentkit", *args], stdout=write_end, stderr=subprocess.PIPE,
            text=True, cwd=HERE, env=env, timeout=60, check=False,
        )
    finally:
        os.close(write_end)


def test_a_closed_stdout_ends_the_command_quietly_with_the_sigpipe_status() -> None:
    runs = (("tools", "inspect", "page_tools"), ("tools", "inspect", "page_tools", "--json"),
            ("demo",))
    for args in runs:
        result = _with_closed_stdout(*args)
        assert (result.returncode, result.stderr) == (141, ""), args

