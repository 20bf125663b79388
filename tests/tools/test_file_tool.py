"""FileTool keeps Anthropic's client-side memory tool contract: the name, the six
commands, the /memories root, the flags, the native declaration; and it is an ordinary,
fully described tool to every other provider and to the agent loop."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.errors import AgentkitError, is_transient
from agentkit.core.contracts.types import ToolCall
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.tools import (
    FileTool,
    FileToolError,
    FrozenDict,
    InMemoryFiles,
    Tool,
    ToolArgumentError,
    ToolDefinitionError,
    ToolRegistry,
)

COMMANDS = ["view", "create", "str_replace", "insert", "delete", "rename"]


def test_the_contract_is_pinned() -> None:
    ft = FileTool()

    assert (ft.name, ft.schema.name) == ("memory", "memory")
    assert (ft.side_effecting, ft.requires_approval, ft.idempotent) == (True, False, False)
    assert ft.output_schema is None
    assert isinstance(ft.backend, InMemoryFiles)
    assert isinstance(ft, Tool)
    assert ft.schema.parameters["properties"]["command"]["enum"] == COMMANDS


def test_it_is_declared_as_anthropics_native_memory_tool() -> None:
    assert FileTool().schema.native == {
        "anthropic": {"type": "memory_20250818", "name": "memory"}
    }


def test_the_anthropic_provider_sends_the_native_declaration() -> None:
    anthropic = pytest.importorskip("agentkit.providers.anthropic")

    assert anthropic.anthropic_tools((FileTool().schema,)) == [
        {"type": "memory_20250818", "name": "memory"}
    ]


def test_other_providers_get_a_full_json_schema() -> None:
    parameters = FileTool().schema.parameters

    assert parameters["type"] == "object"
    assert parameters["required"] == ["command"]
    assert parameters["additionalProperties"] is False
    assert {name: spec["type"] for name, spec in parameters["properties"].items()} == {
        "command": "string",
        "path": "string",
        "view_range": "array",
        "file_text": "string",
        "old_str": "string",
        "new_str": "string",
        "insert_line": "integer",
        "insert_text": "string",
        "old_path": "string",
        "new_path": "string",
    }
    assert all(spec["description"] for spec in parameters["properties"].values())
    assert parameters["properties"]["view_range"]["items"] == {"type": "integer"}
    assert FileTool.accepted_arguments == tuple(parameters["properties"])


def test_the_description_teaches_the_model_the_tool() -> None:
    description = FileTool().description

    assert description == FileTool().schema.description
    assert len(description) >= 30
    assert "/memories" in description
    assert all(command in description for command in COMMANDS)


def test_a_registry_lists_it_under_memory() -> None:
    registry = ToolRegistry.from_tools([FileTool()])

    assert registry.names() == ("memory",)
    assert registry.schemas() == (FileTool.schema,)


def test_each_tool_has_its_own_default_tree() -> None:
    assert FileTool().backend is not FileTool().backend


def test_a_backend_that_is_not_files_is_refused_at_construction() -> None:
    with pytest.raises(ToolDefinitionError, match=r"FileTool\(backend=...\) takes a Files"):
        FileTool("/tmp/notes")  # type: ignore[arg-type]


def test_a_backend_without_the_write_lock_is_refused_naming_what_is_missing() -> None:
    """A Files backend written before exclusive() existed cannot keep the limits."""

    class OldBackend:
        async def stat(self, path: Any) -> None: ...
        async def listing(self, path: Any, depth: Any) -> tuple[()]: return ()
        async def read(self, path: Any) -> str: return ""
        async def write(self, path: Any, text: str, *, exclusive: bool = False) -> None: ...
        async def delete(self, path: Any) -> None: ...
        async def rename(self, old: Any, new: Any) -> None: ...
        async def usage(self) -> None: ...

    with pytest.raises(ToolDefinitionError) as caught:
        FileTool(OldBackend())  # type: ignore[arg-type]
    assert str(caught.value).endswith(
        "which lacks exclusive(). exclusive() is the write lock that keeps the limits when "
        "several writers share the tree; see docs/filetool.md"
    )


def test_file_tool_errors_are_permanent_tool_errors() -> None:
    assert issubclass(FileToolError, AgentkitError)
    assert not issubclass(FileToolError, ToolArgumentError)
    assert not is_transient(FileToolError("The path /memories/x does not exist"))


# -- argument errors: a repair turn -----------------------------------------------------


async def rejected(args: dict[str, Any]) -> ToolArgumentError:
    with pytest.raises(ToolArgumentError) as caught:
        await FileTool().run(args, None)
    return caught.value


async def test_a_call_without_a_command_lists_every_argument() -> None:
    error = await rejected({"path": "/memories"})

    assert error.missing == ("command",)
    assert error.accepted == FileTool.accepted_arguments


async def test_an_unknown_command_lists_the_six() -> None:
    error = await rejected({"command": "list", "path": "/memories"})

    assert str(error) == (
        "tool 'memory' call rejected: invalid argument(s): command: 'list' is not one of "
        "['view', 'create', 'str_replace', 'insert', 'delete', 'rename']. Accepted arguments: "
        "['command', 'path', 'view_range', 'file_text', 'old_str', 'new_str', 'insert_line', "
        "'insert_text', 'old_path', 'new_path']"
    )


@pytest.mark.parametrize("command", [["view"], {"view": 1}, 3, ""])
async def test_a_command_that_is_not_a_command_name_is_invalid(command: Any) -> None:
    error = await rejected({"command": command, "path": "/memories"})

    assert error.invalid == ((
        "command",
        f"{command!r} is not one of ['view', 'create', 'str_replace', 'insert', 'delete', "
        "'rename']",
    ),)


@pytest.mark.parametrize(
    ("args", "missing", "accepted"),
    [
        ({"command": "view"}, ("path",), ("command", "path", "view_range")),
        ({"command": "create", "path": "/memories/a"}, ("file_text",),
         ("command", "path", "file_text")),
        ({"command": "str_replace", "path": "/memories/a"}, ("old_str", "new_str"),
         ("command", "path", "old_str", "new_str")),
        ({"command": "insert", "path": "/memories/a", "insert_text": "x"}, ("insert_line",),
         ("command", "path", "insert_line", "insert_text")),
        ({"command": "delete"}, ("path",), ("command", "path")),
        ({"command": "rename", "old_path": "/memories/a"}, ("new_path",),
         ("command", "old_path", "new_path")),
    ],
)
async def test_each_command_names_what_it_is_missing(
    args: dict[str, Any], missing: tuple[str, ...], accepted: tuple[str, ...]
) -> None:
    error = await rejected(args)

    assert (error.missing, error.accepted) == (missing, accepted)


async def test_arguments_of_another_command_are_unexpected() -> None:
    error = await rejected({"command": "delete", "path": "/memories/a", "file_text": "x"})

    assert str(error) == (
        "tool 'memory' call rejected: unexpected argument(s) ['file_text']. Accepted "
        "arguments: ['command', 'path']"
    )


@pytest.mark.parametrize(
    ("args", "invalid"),
    [
        ({"command": "insert", "path": "/memories/a", "insert_line": "2", "insert_text": "x"},
         ("insert_line", "expected an integer, got str")),
        ({"command": "insert", "path": "/memories/a", "insert_line": True, "insert_text": "x"},
         ("insert_line", "expected an integer, got bool")),
        ({"command": "view", "path": "/memories/a", "view_range": [1, 2, 3]},
         ("view_range", "expected two integers [first line, last line], got [1, 2, 3]")),
        ({"command": "view", "path": "/memories/a", "view_range": "1-2"},
         ("view_range", "expected two integers [first line, last line], got '1-2'")),
        ({"command": "create", "path": "/memories/a", "file_text": 42},
         ("file_text", "expected a string, got int")),
    ],
)
async def test_arguments_of_the_wrong_type_are_invalid(
    args: dict[str, Any], invalid: tuple[str, str]
) -> None:
    assert (await rejected(args)).invalid == (invalid,)


async def test_nulls_for_unused_fields_stand_for_not_given() -> None:
    tool = FileTool()
    args = {"command": "create", "path": "/memories/a.md", "file_text": "x",
            "old_str": None, "view_range": None, "new_path": None}

    assert await tool.run(args, None) == "File created successfully at: /memories/a.md"


async def test_frozen_arguments_from_the_invoker_work() -> None:
    tool = FileTool()
    await tool.run(FrozenDict({"command": "create", "path": "/memories/a.md",
                               "file_text": "1\n2\n3"}), None)

    assert await tool.run(
        FrozenDict({"command": "view", "path": "/memories/a.md", "view_range": (2, 3)}), None
    ) == "Here's the content of /memories/a.md with line numbers:\n     2\t2\n     3\t3"


async def test_concurrent_calls_run_one_at_a_time() -> None:
    tool = FileTool(max_files=1)
    calls = [
        tool.run({"command": "create", "path": f"/memories/{i}.md", "file_text": "x"}, None)
        for i in range(5)
    ]

    outcomes = await asyncio.gather(*calls, return_exceptions=True)

    assert sum(isinstance(o, str) for o in outcomes) == 1
    assert (await tool.backend.usage()).files == 1


# -- inside an agent: failures come back as tool results ------------------------------------


async def test_command_failures_reach_the_model_as_error_results() -> None:
    memory = FileTool()
    llm = FakeLLM.script([
        Turn(tool_calls=(
            ToolCall("c1", "memory", {"command": "view", "path": "/memories/todo.md"}),
            ToolCall("c2", "memory", {"command": "view", "path": "/memories/../etc/passwd"}),
            ToolCall("c3", "memory", {"command": "view"}),
            ToolCall("c4", "memory", {"command": "create", "path": "/memories/todo.md",
                                      "file_text": "- ship it\n"}),
        )),
        Turn(content="Noted."),
    ])
    agent = Agent("a", "fake", "p", cognition=ReActCognition([memory]))

    result = await agent.run("remember to ship it", make_test_ctx(llm=llm))

    assert result.output == "Noted."
    tool_results = [(m.content, m.is_error) for m in llm.requests[1].messages if m.role == "tool"]
    assert tool_results == [
        ("The path /memories/todo.md does not exist. Please provide a valid path.", True),
        ("Path /memories/../etc/passwd is refused: '..' is not allowed: a path may not climb "
         "out of a directory", True),
        ("tool 'memory' call rejected: missing required argument(s) ['path']. Accepted "
         "arguments: ['command', 'path', 'view_range']", True),
        ("File created successfully at: /memories/todo.md", False),
    ]
    assert llm.requests[0].tools == (FileTool.schema,)


async def test_it_pauses_for_a_human_only_where_side_effects_are_gated() -> None:
    memory = FileTool()
    call = ToolCall("c1", "memory", {"command": "create", "path": "/memories/a.md",
                                     "file_text": "x"})

    auto = await Agent("a", "fake", "p", cognition=ReActCognition([memory])).run(
        "t", make_test_ctx(llm=FakeLLM.script([Turn(tool_calls=(call,)), Turn("ok")]))
    )
    gated = await Agent("a", "fake", "p", cognition=ReActCognition([memory])).run(
        "t", make_test_ctx(llm=FakeLLM.script([Turn(tool_calls=(call,))]), autonomy="gated")
    )

    assert (auto.stop_reason, gated.stop_reason) == ("complete", "suspended")
