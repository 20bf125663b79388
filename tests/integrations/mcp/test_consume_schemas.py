"""Tool definitions as real servers send them: JSON Schema beyond the basics, names
that collide once made provider-safe, and results that break the tool's outputSchema."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from agentkit.core.contracts.errors import ToolShapeError
from agentkit.core.testing import make_test_ctx
from agentkit.integrations.mcp import MCPTool, connect_stdio
from agentkit.tools import ToolArgumentError

LIMIT = 20

ODD_SERVER = '''
"""A low-level SDK server whose tools declare whatever schemas the test needs."""
import json

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

OPEN = {"type": "object"}
TOOLS = [
    types.Tool(name="nullable", description="Take a note that may be null.", input_schema={
        "type": "object",
        "properties": {"note": {"type": ["string", "null"]}, "count": {"type": ["integer"]}},
        "required": ["note"],
    }),
    types.Tool(name="anything", description="Accept any arguments at all.", input_schema=OPEN),
    types.Tool(name="refs", description="Schemas built from $defs.", input_schema={
        "type": "object",
        "$defs": {
            "point": {"type": "object", "properties": {"x": {"type": "number"}},
                      "required": ["x"], "additionalProperties": False},
            "color": {"enum": ["red", "green"]},
        },
        "properties": {
            "at": {"$ref": "#/$defs/point"},
            "color": {"$ref": "#/$defs/color"},
            "when": {"type": "string", "format": "date-time"},
            "id": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
            "mode": {"oneOf": [{"const": "fast"}, {"const": "slow"}]},
            "tags": {"type": "object", "additionalProperties": {"type": "string"}},
        },
        "required": ["at"],
    }),
    types.Tool(name="extras", description="Declared keys plus any others.", input_schema={
        "type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": True,
    }),
    types.Tool(name="strange", description="Keywords the checker cannot read.", input_schema={
        "type": "object",
        "properties": {
            "size": {"type": "integer", "minimum": "ten"},
            "pick": {"enum": "abc"},
            "far": {"$ref": "https://example.com/schema.json"},
            "loop": {"$ref": "#/properties/loop"},
            "bag": {"type": "array", "prefixItems": 3, "items": [{"type": "string"}]},
            "odd": {"type": "decimal"},
            "req": {"type": "object", "required": True},
        },
    }),
    types.Tool(name="files.read", description="Read a file (dotted name).", input_schema=OPEN),
    types.Tool(name="files_read", description="Read a file (plain name).", input_schema=OPEN),
    types.Tool(name="a.b", description="First rewritten name.", input_schema=OPEN),
    types.Tool(name="a b", description="Second rewritten name.", input_schema=OPEN),
    types.Tool(name="shape", description="Return a result that breaks its outputSchema.",
               input_schema=OPEN,
               output_schema={"type": "object", "properties": {"n": {"type": "integer"}},
                              "required": ["n"]}),
]


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx, params):
    if params.name == "shape":
        return types.CallToolResult(content=[types.TextContent(text="{}")],
                                    structured_content={"n": "many"})
    echo = json.dumps({"tool": params.name, "arguments": params.arguments}, sort_keys=True)
    return types.CallToolResult(content=[types.TextContent(text=echo)])


server = Server("odd", on_list_tools=list_tools, on_call_tool=call_tool)


async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())

anyio.run(main)
'''


@pytest.fixture
def odd_server(script: Callable[[str, str], Path]) -> list[str]:
    return [sys.executable, str(script("odd_server.py", ODD_SERVER))]


async def tools_of(command: list[str]) -> dict[str, MCPTool]:
    async with connect_stdio(command) as session:
        return {tool.name: tool for tool in await session.list_tools()}


async def test_schemas_real_servers_send_accept_valid_calls(odd_server: list[str]) -> None:
    """Type arrays, open objects, $defs/$ref, anyOf/oneOf, additionalProperties, enums
    and formats: valid calls go out, and the server receives them unchanged."""
    calls = [
        ("nullable", {"note": None}),
        ("nullable", {"note": "hi", "count": 2}),
        ("anything", {"path": "/tmp", "depth": 3}),
        ("anything", {}),
        ("refs", {"at": {"x": 1.5}, "color": "red", "when": "2026-11-30T10:00:00Z",
                  "id": 7, "mode": "slow", "tags": {"k": "v"}}),
        ("extras", {"a": "x", "b": 2}),
        ("strange", {"size": 3, "pick": "z", "far": 1, "loop": [1], "bag": ["a", 2],
                     "odd": 1.5, "req": {}}),
    ]
    async with asyncio.timeout(LIMIT), connect_stdio(odd_server) as session:
        tools = {tool.name: tool for tool in await session.list_tools()}
        ctx = make_test_ctx()
        results = [await tools[name].run(args, ctx) for name, args in calls]

    import json

    assert [json.loads(r) for r in results] == [
        {"tool": name, "arguments": args} for name, args in calls
    ]


async def test_schemas_real_servers_send_still_refuse_invalid_calls(
    odd_server: list[str],
) -> None:
    async with asyncio.timeout(LIMIT), connect_stdio(odd_server) as session:
        tools = {tool.name: tool for tool in await session.list_tools()}
        ctx = make_test_ctx()
        problems = []
        for name, args in [
            ("nullable", {"note": 5}),
            ("nullable", {"note": "x", "count": "two"}),
            ("refs", {"at": {"x": "far"}}),
            ("refs", {"at": {"x": 1, "y": 2}}),
            ("refs", {"at": {"x": 1}, "color": "blue"}),
            ("refs", {"at": {"x": 1}, "id": 1.5}),
            ("refs", {"at": {"x": 1}, "tags": {"k": 1}}),
            ("extras", {"a": 1}),
        ]:
            with pytest.raises(ToolArgumentError) as caught:
                await tools[name].run(args, ctx)
            problems.append(str(caught.value))

    assert problems == [
        "tool 'nullable' call rejected: invalid argument(s): note: expected string or null, "
        "got integer. Accepted arguments: ['note', 'count']",
        "tool 'nullable' call rejected: invalid argument(s): count: expected an integer, got "
        "string 'two'. Accepted arguments: ['note', 'count']",
        "tool 'refs' call rejected: invalid argument(s): at: expected number, got string "
        "(at at.x). Accepted arguments: ['at', 'color', 'when', 'id', 'mode', 'tags']",
        "tool 'refs' call rejected: invalid argument(s): at: unexpected property 'y'; "
        "allowed: ['x']. Accepted arguments: ['at', 'color', 'when', 'id', 'mode', 'tags']",
        "tool 'refs' call rejected: invalid argument(s): color: 'blue' is not one of "
        "['red', 'green']. Accepted arguments: ['at', 'color', 'when', 'id', 'mode', 'tags']",
        "tool 'refs' call rejected: invalid argument(s): id: matches none of the allowed "
        "shapes. Accepted arguments: ['at', 'color', 'when', 'id', 'mode', 'tags']",
        "tool 'refs' call rejected: invalid argument(s): tags: expected string, got integer "
        "(at tags.k). Accepted arguments: ['at', 'color', 'when', 'id', 'mode', 'tags']",
        "tool 'extras' call rejected: invalid argument(s): a: expected a string, got integer 1. "
        "Accepted arguments: ['a']",
    ]


async def test_names_that_collide_after_rewriting_are_disambiguated(
    odd_server: list[str],
) -> None:
    """A name that needed no rewriting keeps it; a rewritten name that collides gets
    ``_`` and the first 6 hex digits of the SHA-256 of the server's name appended."""
    async with asyncio.timeout(LIMIT), connect_stdio(odd_server) as session:
        tools = await session.list_tools()
        renamed = {tool.remote_name: tool.name for tool in tools}
        result = await {t.name: t for t in tools}["files_read_601e4e"].run({}, make_test_ctx())

    import hashlib

    assert hashlib.sha256(b"files.read").hexdigest()[:6] == "601e4e"
    clashing = ("files.read", "files_read", "a.b", "a b")
    assert {k: v for k, v in renamed.items() if k in clashing} == {
        "files.read": "files_read_601e4e",
        "files_read": "files_read",
        "a.b": "a_b_" + hashlib.sha256(b"a.b").hexdigest()[:6],
        "a b": "a_b_" + hashlib.sha256(b"a b").hexdigest()[:6],
    }
    assert result == '{"arguments": {}, "tool": "files.read"}'
    assert len(tools) == 10


async def test_structured_result_breaking_output_schema_is_a_shape_error(
    odd_server: list[str],
) -> None:
    async with asyncio.timeout(LIMIT), connect_stdio(odd_server) as session:
        shape = {t.name: t for t in await session.list_tools()}["shape"]
        with pytest.raises(ToolShapeError) as caught:
            await shape.run({}, make_test_ctx())

    assert str(caught.value) == (
        "tool 'shape' returned value not matching schema "
        "'{\"properties\": {\"n\": {\"type\": \"integer\"}}, \"required\": [\"n\"], "
        "\"type\": \"object\"}'"
    )
    assert caught.value.reason == "$.n: 'many' is not of type 'integer'"
    assert caught.value.raw == "many"
    assert shape.output_schema == {
        "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]
    }
