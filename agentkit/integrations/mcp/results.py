"""A served tool's return value as an MCP ``CallToolResult``.

| the tool returns | the client receives |
| --- | --- |
| ``str`` | one text block |
| ``None`` | no content |
| a number or bool | one text block with its JSON |
| a dict, dataclass, model... | its JSON as text, and ``structuredContent`` for an object |
| ``Image`` / ``Audio`` | an image / audio block (base64 on the wire) |
| ``File``, ``bytes`` | an embedded resource: text for ``text/*`` and JSON types, a blob otherwise |
| a list or tuple holding any media value | one block per item, in order |

JSON has no NaN, infinities or bytes: a result holding one (anywhere) is refused with a
tool error naming where, instead of sending invalid JSON or a Python ``repr``.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Mapping
from typing import Any

import mcp.types as types

from agentkit.agents.tool_messages import render_value
from agentkit.core.contracts.errors import AgentkitError
from agentkit.core.contracts.media import Audio, File, Image
from agentkit.tools.declarations.adapt import thaw

__all__ = ["NotJSON", "to_call_result"]

_MEDIA = (Image, Audio, File, bytes, bytearray)
_TEXT_TYPES = ("application/json", "application/xml", "application/yaml", "application/javascript")
_MAX_PATH = 80


class NotJSON(AgentkitError, ValueError):
    """A tool result holds a value JSON cannot carry (NaN, an infinity, bytes)."""

    def __init__(self, tool: str, path: str, what: str) -> None:
        self.tool = tool
        self.path = path
        super().__init__(
            f"tool {tool!r} returned {what} at {path}, which JSON cannot carry, so the result "
            "was not sent. Return None or a string for a missing number, and an "
            "agentkit.tools.File (or Image, Audio) for binary data"
        )


def to_call_result(tool: str, value: Any) -> types.CallToolResult:
    """The MCP result for ``value``, returned by ``tool``. Raises :class:`NotJSON`."""
    if isinstance(value, list | tuple) and any(isinstance(item, _MEDIA) for item in value):
        return types.CallToolResult(content=[_block(tool, item, f"$[{i}]") for i, item in
                                             enumerate(value)])
    if isinstance(value, _MEDIA):
        return types.CallToolResult(content=[_block(tool, value, "$")])
    if value is None:
        return types.CallToolResult(content=[])
    if isinstance(value, str):
        return types.CallToolResult(content=[types.TextContent(text=value)])
    _check_json(tool, thaw(value) if isinstance(value, Mapping) else value, "$")
    text = render_value(value)
    structured = None
    if text.startswith("{"):
        try:
            structured = json.loads(text)
        except ValueError:
            structured = None
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        structured_content=structured if isinstance(structured, dict) else None,
    )


def _block(tool: str, item: Any, path: str) -> types.ContentBlock:
    if isinstance(item, Image | Audio | File) and item.url is not None:
        # Held by reference, it has no bytes to embed: the client gets the link.
        name = getattr(item, "name", None) or item.url.rstrip("/").rsplit("/", 1)[-1]
        return types.ResourceLink(name=name, uri=item.url, mime_type=item.mime_type)
    if isinstance(item, Image):
        return types.ImageContent(data=_b64(item.data), mime_type=item.mime_type)
    if isinstance(item, Audio):
        return types.AudioContent(data=_b64(item.data), mime_type=item.mime_type)
    if isinstance(item, bytes | bytearray):
        item = File(bytes(item))
    if isinstance(item, File):
        return types.EmbeddedResource(resource=_resource(item))
    if isinstance(item, str):
        return types.TextContent(text=item)
    _check_json(tool, thaw(item) if isinstance(item, Mapping) else item, path)
    return types.TextContent(text=render_value(item))


def _resource(file: File) -> types.TextResourceContents | types.BlobResourceContents:
    # A File's name may already be a URI ("test://report"); otherwise it gets one in
    # agentkit's own scheme, since an embedded resource must have a URI.
    name = file.name or "file"
    uri = name if ":" in name else f"agentkit://file/{name}"
    mime = file.mime_type
    if mime.startswith("text/") or mime in _TEXT_TYPES or mime.endswith(("+json", "+xml")):
        try:
            return types.TextResourceContents(uri=uri, mime_type=mime, text=file.data.decode())
        except UnicodeDecodeError:
            pass
    return types.BlobResourceContents(uri=uri, mime_type=mime, blob=_b64(file.data))


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _check_json(tool: str, value: Any, path: str) -> None:
    """Raise NotJSON at the first NaN, infinity or bytes inside ``value``."""
    if isinstance(value, float):
        if not math.isfinite(value):
            raise NotJSON(tool, _short(path), repr(value))
    elif isinstance(value, bytes | bytearray | memoryview):
        raise NotJSON(tool, _short(path), f"{len(value):,} raw bytes")
    elif isinstance(value, Mapping):
        for key, item in value.items():
            _check_json(tool, item, f"{path}.{key}")
    elif isinstance(value, list | tuple | set | frozenset):
        for index, item in enumerate(value):
            _check_json(tool, item, f"{path}[{index}]")
    elif hasattr(value, "__dataclass_fields__"):
        for name in value.__dataclass_fields__:
            _check_json(tool, getattr(value, name, None), f"{path}.{name}")
    elif hasattr(value, "model_dump"):
        _check_json(tool, value.model_dump(), path)


def _short(path: str) -> str:
    return path if len(path) <= _MAX_PATH else path[: _MAX_PATH - 3] + "..."
