"""UsageError: one type for every command's user mistakes, importable from agentkit.cli."""

from __future__ import annotations

import pytest

import agentkit.cli
import agentkit.cli.errors
from agentkit.cli import UsageError
from agentkit.cli.mcp import serve_command
from agentkit.cli.targets import load_target
from agentkit.cli.temporal import worker_command


def test_usage_error_lives_beside_the_commands_and_is_exported_by_the_package() -> None:
    assert UsageError is agentkit.cli.errors.UsageError
    assert UsageError.__module__ == "agentkit.cli.errors"
    assert agentkit.cli.__all__ == ["UsageError", "main"]


def test_each_command_raises_the_one_usage_error() -> None:
    with pytest.raises(UsageError) as loading:
        load_target("no_such_module_for_agentkit:tools")
    with pytest.raises(UsageError) as serving:
        serve_command("x", token_env="TOKEN")
    with pytest.raises(UsageError) as working:
        worker_command("agentkit.cli.errors", address="localhost:1", namespace="default",
                       task_queue="q")
    assert str(loading.value) == (
        "no module named 'no_such_module_for_agentkit' (run from the directory that holds "
        "it, or pass the path to a .py file)"
    )
    assert str(serving.value) == (
        "--token-env, --insecure-no-auth, --allow-host and --allow-origin apply to --http "
        "only: a stdio server has exactly one client, the process that started it"
    )
    assert str(working.value) == (
        "no agents found in 'agentkit.cli.errors': point at a module with top-level Agent "
        "objects, an Agent, or a list of them"
    )
