"""The tools the MCP conformance suite's server scenarios call, written as agentkit tools.

Served with ``agentkit mcp serve tests/integrations/mcp/conformance_tools.py --http ...``
by tests/integrations/mcp/test_conformance.py. Each tool does what its scenario's
description asks (tool names and behaviours are the suite's), using only agentkit's
public API: return values become MCP content, ``ctx.progress`` / ``ctx.log`` become
notifications, ``elicit`` asks the client's user, and ``ctx.invoker.chat`` reaches the
client's model through sampling.
"""

from __future__ import annotations

import asyncio
import io
import json
import struct
import wave
import zlib
from dataclasses import dataclass

from agentkit.core.contracts.types import ChatRequest, Message
from agentkit.core.runtime import RunContext
from agentkit.integrations.mcp import elicit
from agentkit.tools import Audio, File, Image, tool


def _png_pixel() -> bytes:
    """A 1x1 red PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(
        b"IEND", b""
    )


def _wav_silence() -> bytes:
    """A tenth of a second of 8 kHz mono silence."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as clip:
        clip.setnchannels(1)
        clip.setsampwidth(1)
        clip.setframerate(8000)
        clip.writeframes(b"\x80" * 800)
    return buffer.getvalue()


PNG = _png_pixel()
WAV = _wav_silence()


@tool(side_effecting=False)
def test_simple_text() -> str:
    """Return a fixed sentence of plain text, for the simple-text scenario."""
    return "This is a simple text response for testing."


@tool(side_effecting=False)
def test_image_content() -> Image:
    """Return a one-pixel red PNG image, for the image scenario."""
    return Image(PNG, "image/png")


@tool(side_effecting=False)
def test_audio_content() -> Audio:
    """Return a short WAV clip of silence, for the audio scenario."""
    return Audio(WAV, "audio/wav")


@tool(side_effecting=False)
def test_embedded_resource() -> File:
    """Return a text resource embedded in the result, for the embedded-resource scenario."""
    return File(b"This is an embedded resource content.", "text/plain",
                name="test://embedded-resource")


@tool(side_effecting=False)
def test_multiple_content_types() -> list[object]:
    """Return text, an image and a JSON resource together, for the mixed-content scenario."""
    return [
        "Multiple content types test:",
        Image(PNG, "image/png"),
        File(b'{"test":"data","value":123}', "application/json",
             name="test://mixed-content-resource"),
    ]


@tool(side_effecting=False)
async def test_tool_with_logging(ctx: RunContext) -> str:
    """Log three lines while working, for the logging scenario."""
    await ctx.log("info", "Tool execution started")
    await asyncio.sleep(0.05)
    await ctx.log("info", "Tool processing data")
    await asyncio.sleep(0.05)
    await ctx.log("info", "Tool execution completed")
    return "Tool with logging executed successfully"


@tool(side_effecting=False)
def test_error_handling() -> str:
    """Always fail, for the error-reporting scenario."""
    raise RuntimeError("This tool intentionally returns an error for testing")


@tool(side_effecting=False)
async def test_tool_with_progress(ctx: RunContext) -> str:
    """Report progress at 0, 50 and 100 of 100 while working, for the progress scenario."""
    await ctx.progress(0, 100, "starting")
    await asyncio.sleep(0.05)
    await ctx.progress(50, 100, "halfway")
    await asyncio.sleep(0.05)
    await ctx.progress(100, 100, "done")
    return "Tool with progress executed successfully"


@tool(side_effecting=False)
async def test_sampling(prompt: str, ctx: RunContext) -> str:
    """Ask the model for an answer to a prompt and return it, for the sampling scenario."""
    request = ChatRequest(model="", messages=(Message("user", prompt),), max_tokens=100)
    result = await ctx.invoker.chat(request, ctx)
    return f"LLM response: {result.content}"


@tool(side_effecting=False)
async def test_elicitation(message: str) -> str:
    """Ask the user for a username and email address, for the elicitation scenario."""
    answer = await elicit(message, {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    })
    return f"User response: action={answer.action}, content={json.dumps(dict(answer.content))}"


@tool(side_effecting=False)
async def test_elicitation_sep1034_defaults() -> str:
    """Ask the user for a form whose fields all have defaults (SEP-1034 scenario)."""
    answer = await elicit("Please review your details", {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {"type": "string", "description": "User status",
                       "enum": ["active", "inactive", "pending"], "default": "active"},
            "verified": {"type": "boolean", "description": "Verified", "default": True},
        },
        "required": [],
    })
    return f"Elicitation completed: action={answer.action}, content={dict(answer.content)}"


@tool(side_effecting=False)
async def test_elicitation_sep1330_enums() -> str:
    """Ask the user to pick from the five kinds of enum field (SEP-1330 scenario)."""
    answer = await elicit("Please choose your options", {
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ]},
            "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                           "enumNames": ["Option One", "Option Two", "Option Three"]},
            "untitledMulti": {"type": "array", "items": {
                "type": "string", "enum": ["option1", "option2", "option3"]}},
            "titledMulti": {"type": "array", "items": {"anyOf": [
                {"const": "value1", "title": "First Choice"},
                {"const": "value2", "title": "Second Choice"},
                {"const": "value3", "title": "Third Choice"},
            ]}},
        },
        "required": [],
    })
    return f"Elicitation completed: action={answer.action}, content={dict(answer.content)}"


@dataclass
class Address:
    street: str
    city: str


@tool(side_effecting=False)
def json_schema_2020_12_tool(name: str, address: Address | None = None) -> str:
    """Greet someone at an address; its input schema uses JSON Schema 2020-12 features."""
    return f"{name} at {address.street if address else 'no address'}"
