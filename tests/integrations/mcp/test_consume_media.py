"""Images, audio and binary resources from an MCP server reach the model as media,
never as base64 text."""

from __future__ import annotations

import asyncio
import base64
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.media import Audio, File, Image
from agentkit.core.contracts.types import ToolCall
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.integrations.mcp import connect_stdio

LIMIT = 20
PNG_SIZE = 300 * 1024

MEDIA_SERVER = '''
"""A low-level SDK server whose results mix text, structured content and media."""
import base64

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

PNG = b"\\x89PNG\\r\\n\\x1a\\n" + bytes(300 * 1024 - 8)
OPEN = {"type": "object"}


def b64(data):
    return base64.b64encode(data).decode()


TOOLS = [
    types.Tool(name="photo", description="A photo of a place, with its size.", input_schema=OPEN),
    types.Tool(name="bundle", description="Every other kind of content.", input_schema=OPEN),
]


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx, params):
    if params.name == "photo":
        return types.CallToolResult(
            content=[types.TextContent(text='{"width": 640}'),
                     types.ImageContent(data=b64(PNG), mime_type="image/png")],
            structured_content={"width": 640},
        )
    return types.CallToolResult(content=[
        types.TextContent(text="Here is everything."),
        types.AudioContent(data=b64(b"RIFF" + bytes(96)), mime_type="audio/wav"),
        types.EmbeddedResource(resource=types.TextResourceContents(
            uri="notes://todo", mime_type="text/plain", text="Buy oat milk.")),
        types.EmbeddedResource(resource=types.BlobResourceContents(
            uri="file:///report.pdf", mime_type="application/pdf", blob=b64(b"%PDF" + bytes(46)))),
        types.ResourceLink(uri="file:///big.csv", name="big.csv"),
    ])


server = Server("media", on_list_tools=list_tools, on_call_tool=call_tool)


async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())

anyio.run(main)
'''


@pytest.fixture
def media_server(script: Callable[[str, str], Path]) -> list[str]:
    return [sys.executable, str(script("media_server.py", MEDIA_SERVER))]


async def test_a_300kb_image_is_attached_not_inlined(media_server: list[str]) -> None:
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "photo", {}),)),
        Turn(content="A 640-pixel-wide photo."),
    ])
    async with asyncio.timeout(LIMIT), connect_stdio(media_server) as session:
        agent = Agent(name="viewer", model="fake", prompt="You describe photos.",
                      cognition=ReActCognition(tools=await session.list_tools()))
        result = await agent.run("Show me the harbour.", make_test_ctx(llm=llm))

    tool_message = result.messages[2]
    assert tool_message.content == '{"width": 640}\n[image: image/png, 307,200 bytes]'
    assert tool_message.attachments == (
        Image(b"\x89PNG\r\n\x1a\n" + bytes(PNG_SIZE - 8), "image/png"),
    )
    assert llm.requests[1].messages[2] == tool_message


async def test_audio_blobs_and_resources_are_described_and_attached(
    media_server: list[str],
) -> None:
    async with asyncio.timeout(LIMIT), connect_stdio(media_server) as session:
        bundle = {t.name: t for t in await session.list_tools()}["bundle"]
        llm = FakeLLM.script([
            Turn(tool_calls=(ToolCall("c1", "bundle", {}),)),
            Turn(content="Done."),
        ])
        agent = Agent(name="viewer", model="fake", prompt="You read results.",
                      cognition=ReActCognition(tools=[bundle]))
        result = await agent.run("Everything, please.", make_test_ctx(llm=llm))

    tool_message = result.messages[2]
    assert tool_message.content == (
        "Here is everything.\n"
        "[audio: audio/wav, 100 bytes]\n"
        "[resource notes://todo]\nBuy oat milk.\n"
        "[file file:///report.pdf: application/pdf, 50 bytes]\n"
        "[resource link 'big.csv': file:///big.csv]"
    )
    assert tool_message.attachments == (
        Audio(b"RIFF" + bytes(96), "audio/wav"),
        File(b"%PDF" + bytes(46), "application/pdf", name="file:///report.pdf"),
    )
    assert base64.b64encode(b"RIFF").decode()[:4] not in tool_message.content
