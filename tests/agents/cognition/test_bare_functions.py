"""A plain function in ReActCognition(tools=[...]) keeps the documented default
(side_effecting=False) and says so, once per function, with the fix."""

from __future__ import annotations

import warnings

import pytest

from agentkit.agents.cognition import ReActCognition
from agentkit.tools import ToolRegistry, tool


def delete_user(user_id: str) -> str:
    """Delete a user account and everything it owns, permanently."""
    return user_id


def test_a_plain_function_warns_once_naming_it_and_the_fix() -> None:
    def wipe_disk(device: str) -> str:
        """Erase every block of the named storage device, irreversibly."""
        return device

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = ReActCognition(tools=[wipe_disk])
        ReActCognition(tools=[wipe_disk])
        ToolRegistry().register(wipe_disk)
    assert [(w.category, str(w.message)) for w in caught] == [(
        UserWarning,
        "tool 'wipe_disk' is the plain function "
        "test_a_plain_function_warns_once_naming_it_and_the_fix.<locals>.wipe_disk, so it is "
        "treated as side_effecting=False: its calls may be cached and are never paused for "
        "approval under autonomy='gated'. Declare what it does with @tool(side_effecting=True) "
        "or @tool(side_effecting=False)",
    )]
    assert caught[0].filename == __file__  # points at the user's line, not at agentkit
    assert first.tools.get("wipe_disk").side_effecting is False


def test_a_declared_tool_does_not_warn() -> None:
    declared = tool(side_effecting=True)(delete_user)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ReActCognition(tools=[declared])


def test_each_function_warns_for_itself() -> None:
    def archive(path: str) -> str:
        """Move a file into the long-term archive bucket, keeping its name."""
        return path

    with pytest.warns(UserWarning, match="'delete_user'"):
        ReActCognition(tools=[delete_user])
    with pytest.warns(UserWarning, match="'archive'"):
        ReActCognition(tools=[archive, delete_user])
