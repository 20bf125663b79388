"""MCPTool: one tool of an MCP server, adapted into agentkit's Tool Protocol.

The server's name, description and input schema are passed through (the name made
provider-safe and optionally prefixed). What the tool *does* is only ever a claim by
the server, so the declarations that loosen a safeguard fail closed: a tool is
side-effecting unless its annotations say ``readOnlyHint: true`` and the user trusts
the server's hints, and idempotent only under the same rule. Hints that tighten a
safeguard (``agentkit/requiresApproval``) are honoured from any server.

Arguments are checked against the server's schema before anything is sent, so a
malformed call becomes the same :class:`~agentkit.tools.ToolArgumentError` repair turn
a local tool gives.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

import mcp.types as types

from agentkit.core.contracts.errors import ToolArgumentError
from agentkit.core.contracts.frozen import freeze
from agentkit.core.contracts.media import Audio, File, Image, Media
from agentkit.core.contracts.traits import ToolTraits
from agentkit.core.contracts.types import ToolContext, ToolSchema
from agentkit.core.runtime.context import RunContext
from agentkit.integrations.mcp.errors import MCPToolError
from agentkit.tools.declarations.adapt import describe_value, thaw
from agentkit.tools.declarations.jsonschema import schema_errors, schema_errors_at

__all__ = [
    "REQUIRES_APPROVAL_META",
    "MCPTool",
    "assign_names",
    "describe_content",
    "read_result",
    "safe_name",
]

REQUIRES_APPROVAL_META = "agentkit/requiresApproval"
"""Tool ``_meta`` key an agentkit server sets on tools that declare ``requires_approval``."""

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_COMBINATORS = ("allOf", "anyOf", "oneOf", "not", "if", "$ref", "patternProperties")
_ARTICLES = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
    "object": "an object",
    "array": "an array",
}


class _Caller(Protocol):
    """The connection an MCPTool sends its calls through (an ``MCPSession``)."""

    server_name: str

    async def call_tool(
        self, name: str, arguments: Mapping[str, Any], ctx: RunContext | None = None
    ) -> types.CallToolResult: ...


def safe_name(name: str, prefix: str = "") -> str:
    """``prefix + name`` as providers accept it: 1-64 of ``[A-Za-z0-9_-]`` (MCP also
    allows ``.``, which becomes ``_``)."""
    return _UNSAFE.sub("_", prefix + name)[:64] or "_"


def assign_names(names: Sequence[str], prefix: str = "") -> list[str | None]:
    """A provider-safe, unique agentkit name for each server name (None: refused).

    A name that needed no rewriting keeps it. A rewritten name that collides with
    another gets ``_`` plus the first 6 hex digits of the SHA-256 of the server's
    name (``files.read`` next to ``files_read`` becomes ``files_read_601e4e``), so the
    result depends only on the names, never on their order. A tool whose name still
    collides after that (or a duplicate server name) is refused; the others stay.
    """
    wanted = [safe_name(name, prefix) for name in names]
    kept = {w for name, w in zip(names, wanted, strict=True) if w == prefix + name}
    counts: dict[str, int] = {}
    for w in wanted:
        counts[w] = counts.get(w, 0) + 1
    result: list[str] = []
    for name, w in zip(names, wanted, strict=True):
        if counts[w] > 1 and w != prefix + name:
            tag = "_" + hashlib.sha256(name.encode()).hexdigest()[:6]
            w = w[: 64 - len(tag)] + tag
        result.append(w)
    taken: set[str] = set()
    final: list[str | None] = []
    for name, w in zip(names, result, strict=True):
        clash = w in taken or (result.count(w) > 1 and w != prefix + name and w in kept)
        final.append(None if clash else w)
        if not clash:
            taken.add(w)
    return final


class _ArgumentCheck:
    """The server's input schema, read once, as a check that names every problem."""

    __slots__ = ("_accepted", "_closed", "_properties", "_required", "_root", "_whole")

    def __init__(self, schema: Mapping[str, Any]) -> None:
        properties = schema.get("properties")
        self._root = schema
        self._properties: Mapping[str, Any] = properties if isinstance(properties, Mapping) else {}
        required = schema.get("required")
        self._required = tuple(r for r in required if isinstance(r, str)) if isinstance(
            required, list | tuple
        ) else ()
        self._accepted = tuple(self._properties)
        # Undeclared keys are refused, as for a local tool, when the schema lists its
        # properties and does not open the object up; a bare {"type": "object"} takes any
        # keys, and combined shapes are checked whole.
        self._whole = any(k in schema for k in _COMBINATORS)
        extra = schema.get("additionalProperties")
        self._closed = not self._whole and (
            extra is False or (extra is None and isinstance(properties, Mapping))
        )

    def check(self, tool: str, args: Mapping[str, Any], call_id: str | None = None) -> None:
        missing = [name for name in self._required if name not in args]
        unexpected = [k for k in args if k not in self._properties] if self._closed else []
        invalid: list[tuple[str, str]] = []
        for key, value in args.items():
            sub = self._properties.get(key)
            if isinstance(sub, Mapping):
                problem = self._problem(key, value, sub)
                if problem is not None:
                    invalid.append((key, problem))
        if self._whole and not (missing or unexpected or invalid):
            invalid.extend(("(arguments)", line) for line in schema_errors(args, self._root))
        if missing or unexpected or invalid:
            raise ToolArgumentError(
                tool,
                missing=missing,
                unexpected=unexpected,
                invalid=invalid,
                accepted=self._accepted,
                call_id=call_id,
            )


    def _problem(self, key: str, value: Any, schema: Mapping[str, Any]) -> str | None:
        # The commonest mistakes are worded as a local tool words them, so a tool
        # behaves the same to the model whether it runs here or behind MCP.
        kind = schema.get("type")
        if isinstance(kind, list) and len(kind) == 1:
            kind = kind[0]
        if isinstance(kind, str) and kind in _ARTICLES and schema_errors_at(
            value, {"type": kind}, self._root
        ):
            return f"expected {_ARTICLES[kind]}, got {describe_value(value)}"
        options = schema.get("enum")
        if isinstance(options, list) and schema_errors_at(value, {"enum": options}, self._root):
            return f"{value!r} is not a valid option; expected one of {options}"
        errors = schema_errors_at(value, schema, self._root)
        if not errors:
            return None
        path, _, problem = errors[0].partition(": ")
        return problem if path == "$" else f"{problem} (at {key}{path[1:]})"


class MCPTool:
    """A tool served by an MCP server, callable like any local tool.

    ``run`` checks the arguments against the server's schema, sends the call (tagged
    with the run id, and cancelled when the run is), and returns what came back:
    structured content as data when the server sent it, else the text content joined,
    with images and other blocks described in words. An ``isError`` result raises
    :class:`~agentkit.integrations.mcp.MCPToolError` with the server's text.
    """

    __slots__ = (
        "_check",
        "_session",
        "annotations",
        "description",
        "name",
        "output_schema",
        "remote_name",
        "schema",
        "server",
        "traits",
    )

    name: str
    description: str
    schema: ToolSchema | None
    output_schema: Any
    traits: ToolTraits
    """What the server's hints allow agentkit to believe, read once here."""
    url_arg = None

    def __init__(
        self,
        definition: types.Tool,
        session: _Caller,
        *,
        prefix: str = "",
        trust_hints: bool = False,
        name: str | None = None,
    ) -> None:
        hints = definition.annotations
        self._session = session
        self.remote_name = definition.name
        """The name the server knows the tool by."""
        self.server = session.server_name
        self.name = name if name is not None else safe_name(definition.name, prefix)
        self.description = (
            definition.description
            or definition.title
            or f"The {definition.name!r} tool of the MCP server {self.server!r}."
        )
        parameters = thaw(definition.input_schema)
        self.schema = ToolSchema(self.name, self.description, parameters)
        self.output_schema = (
            None if definition.output_schema is None else thaw(definition.output_schema)
        )
        self.annotations = hints
        """The server's annotations, as it sent them (hints, not facts)."""
        read_only = trust_hints and hints is not None and hints.read_only_hint is True
        self.traits = ToolTraits(
            side_effecting=not read_only,
            idempotent=trust_hints and hints is not None and (
                hints.idempotent_hint is True or hints.read_only_hint is True
            ),
            requires_approval=bool((definition.meta or {}).get(REQUIRES_APPROVAL_META)),
        )
        self._check = _ArgumentCheck(parameters)

    @property
    def side_effecting(self) -> bool:
        """False only for a trusted ``readOnlyHint`` (``traits.side_effecting``)."""
        return self.traits.side_effecting

    @side_effecting.setter
    def side_effecting(self, value: bool) -> None:
        # The Protocol's flags stay assignable; the traits remain the one record.
        self.traits = replace(self.traits, side_effecting=value)

    @property
    def idempotent(self) -> bool:
        """True only for trusted hints (``traits.idempotent``)."""
        return self.traits.idempotent

    @property
    def requires_approval(self) -> bool:
        """The server marked the tool ``agentkit/requiresApproval``."""
        return self.traits.requires_approval

    @requires_approval.setter
    def requires_approval(self, value: bool) -> None:
        self.traits = replace(self.traits, requires_approval=value)

    async def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
        """Check ``args``, call the server, and return its result as a value.

        Raises :class:`~agentkit.tools.ToolArgumentError` before sending,
        :class:`MCPToolError` when the server reports a failure, and
        :class:`~agentkit.integrations.mcp.MCPConnectionError` (or its
        ``MCPTimeoutError``) when the server is gone or too slow.
        """
        if ctx is not None and not isinstance(ctx, RunContext):
            # The session reads the run's cancel token and the call in progress, which
            # only a RunContext carries.
            raise TypeError(
                f"MCP tool {self.name!r} runs with a RunContext (or None), "
                f"got {type(ctx).__name__}"
            )
        self._check.check(self.name, args)
        result = await self._session.call_tool(self.remote_name, args, ctx)
        return read_result(result, self.name, self.server)

    def __repr__(self) -> str:
        return (
            f"MCPTool(name={self.name!r}, server={self.server!r}, "
            f"side_effecting={self.side_effecting}, idempotent={self.idempotent})"
        )


def read_result(result: types.CallToolResult, tool: str, server: str) -> Any:
    """A ``CallToolResult`` as a value: structured content (frozen) when present, else
    the text blocks joined; ``isError`` raises :class:`MCPToolError`.

    Images, audio and binary resources are never turned into text. When the result has
    any, the value is a list of its content blocks in the server's order: text as
    text, media as :class:`~agentkit.core.contracts.media.Image` / ``Audio`` / ``File``
    values, which an agent run attaches to the tool-result message and describes in its
    text (``[image: image/png, 4,033 bytes]``).
    """
    if result.is_error:
        raise MCPToolError(tool, server, describe_content(result.content))
    media = [_media(block) for block in result.content]
    if not any(m is not None for m in media):
        if result.structured_content is not None:
            return freeze(result.structured_content)
        return describe_content(result.content)
    # With media, the content blocks are the value: structured content repeats them
    # for programs (server-filesystem puts the image's base64 in it), and a text block
    # that quotes a payload gets the payload's description instead.
    payloads = {
        _payload(block): m.describe()
        for block, m in zip(result.content, media, strict=True) if m is not None
    }
    return [
        m if m is not None else _scrub(_describe(block), payloads)
        for block, m in zip(result.content, media, strict=True)
    ]


def _payload(block: types.ContentBlock) -> str:
    if isinstance(block, types.EmbeddedResource) and isinstance(
        block.resource, types.BlobResourceContents
    ):
        return block.resource.blob
    return str(getattr(block, "data", ""))


def _scrub(text: str, payloads: Mapping[str, str]) -> str:
    for payload, description in payloads.items():
        if payload and payload in text:
            text = text.replace(payload, description)
    return text


def describe_content(blocks: list[types.ContentBlock]) -> str:
    """Text blocks as they are, every other block described in one line, joined."""
    return "\n".join(_describe(block) for block in blocks)


def _media(block: types.ContentBlock) -> Media | None:
    """The block as a media value, or None for text and links. Undecodable base64 is
    left to the description."""
    try:
        if isinstance(block, types.ImageContent):
            return Image(base64.b64decode(block.data, validate=True), block.mime_type)
        if isinstance(block, types.AudioContent):
            return Audio(base64.b64decode(block.data, validate=True), block.mime_type)
        if isinstance(block, types.EmbeddedResource) and isinstance(
            block.resource, types.BlobResourceContents
        ):
            resource = block.resource
            data = base64.b64decode(resource.blob, validate=True)
            mime = resource.mime_type or "application/octet-stream"
            if mime.startswith("image/"):
                return Image(data, mime)
            if mime.startswith("audio/"):
                return Audio(data, mime)
            return File(data, mime, name=str(resource.uri))
    except (binascii.Error, ValueError):
        return None
    return None


def _describe(block: types.ContentBlock) -> str:
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent | types.AudioContent):
        return f"[{block.type}: {block.mime_type}, {_decoded_size(block.data):,} bytes]"
    if isinstance(block, types.ResourceLink):
        return f"[resource link {block.name!r}: {block.uri}]"
    if isinstance(block, types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, types.TextResourceContents):
            return f"[resource {resource.uri}]\n{resource.text}"
        kind = resource.mime_type or "binary data"
        return f"[resource {resource.uri}: {kind}, {_decoded_size(resource.blob):,} bytes]"
    return f"[{getattr(block, 'type', type(block).__name__)} content]"


def _decoded_size(data: str) -> int:
    return len(data.rstrip("=")) * 3 // 4
