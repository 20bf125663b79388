"""The package's public names, its lazy loading, and the message when the SDK is missing."""

from __future__ import annotations

import subprocess
import sys

import agentkit.integrations.mcp as mcp_integration

HIDE_MCP = "import sys\nsys.modules['mcp'] = None  # as if it were not installed\n"


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )


def test_without_the_sdk_the_import_error_names_the_extra() -> None:
    result = run_python(HIDE_MCP + "import agentkit.integrations.mcp\n")

    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "ImportError: agentkit.integrations.mcp cannot load: the official MCP SDK is not "
        'installed. Install it with: pip install -U "agentkit-framework[mcp]"'
    )


def test_the_cli_without_the_sdk_fails_with_the_same_message() -> None:
    script = "import sys\nfrom agentkit.cli import main\nsys.exit(main(['mcp', 'serve', 'x']))\n"
    result = run_python(HIDE_MCP + script)

    assert result.returncode == 2
    assert result.stderr == (
        "agentkit: error: agentkit.integrations.mcp cannot load: the official MCP SDK is not "
        'installed. Install it with: pip install -U "agentkit-framework[mcp]"\n'
    )


def test_an_sdk_older_than_2_is_refused_with_the_same_advice() -> None:
    result = run_python(
        "import importlib.metadata\n"
        "importlib.metadata.version = lambda name: '1.26.0'\n"
        "import agentkit.integrations.mcp\n"
    )

    assert result.stderr.strip().splitlines()[-1] == (
        "ImportError: agentkit.integrations.mcp cannot load: it is built on the 2.x API of "
        "the official MCP SDK, and mcp 1.26.0 is installed. Install it with: "
        'pip install -U "agentkit-framework[mcp]"'
    )


def test_importing_the_package_loads_the_sdk_only_when_a_name_is_used() -> None:
    result = run_python(
        "import sys\n"
        "import agentkit.integrations.mcp as m\n"
        "print('mcp' in sys.modules)\n"
        "m.connect_stdio\n"
        "print('mcp' in sys.modules)\n"
    )

    assert result.stdout.split() == ["False", "True"], result.stderr


def test_every_exported_name_resolves() -> None:
    assert mcp_integration.__all__ == [
        "RUN_ID_META",
        "ElicitationUnavailable",
        "Elicited",
        "MCPConnectionError",
        "MCPResources",
        "MCPSession",
        "MCPTimeoutError",
        "MCPTool",
        "MCPToolError",
        "build_server",
        "connect_http",
        "connect_stdio",
        "elicit",
        "serve",
        "serve_async",
    ]
    for name in mcp_integration.__all__:
        namespace: dict[str, object] = {}
        exec(f"from agentkit.integrations.mcp import {name}", namespace)
        assert namespace[name] is getattr(mcp_integration, name)


def test_errors_are_agentkit_errors_of_the_fitting_builtin_kind() -> None:
    from agentkit.core.contracts.errors import AgentkitError, is_transient

    timeout = mcp_integration.MCPTimeoutError("srv", "the call to 'x'", 2.0)
    closed = mcp_integration.MCPConnectionError("srv", "gone")
    failed = mcp_integration.MCPToolError("x", "srv", "")

    assert isinstance(timeout, TimeoutError) and isinstance(timeout, ConnectionError)
    assert isinstance(closed, ConnectionError) and isinstance(failed, AgentkitError)
    assert str(failed) == "tool 'x' on MCP server 'srv' reported an error: (no message)"
    # Whether a call that timed out or lost its connection took effect is unknown.
    assert not any(is_transient(e) for e in (timeout, closed, failed))
