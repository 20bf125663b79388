"""Our transcript as Messages API content blocks, and the reasoning blocks read back.

- a user message's media go before its text (Anthropic's advice for images): ``image``
  blocks (base64 or URL), ``document`` blocks for PDFs (base64 or URL) and plain text;
  anything else, or a part over a documented limit, is :class:`UnsupportedMedia`
  before any request is sent;
- an assistant message's reasoning parts from Anthropic go first, as the thinking and
  redacted_thinking blocks they came as (the signature unchanged); parts from another
  provider are dropped, as the API would refuse them;
- tool results: ``tool_result`` blocks in the next user turn, with an attached image
  inside as an ``image`` block.
"""

from __future__ import annotations

from typing import Any

from agentkit.core.contracts.media import Media
from agentkit.core.contracts.reasoning import ReasoningPart
from agentkit.core.contracts.types import Message, ToolSchema
from agentkit.providers._media import (
    MB,
    NATIVE_IMAGE_TYPES,
    PDF,
    PLAIN_TEXT,
    base64_data,
    check_size,
    native_image,
    refuse,
)
from agentkit.providers._reply import field
from agentkit.providers._turns import append_turn
from agentkit.tools.declarations.adapt import thaw

__all__ = ["anthropic_messages", "anthropic_tools", "reasoning_part"]

PROVIDER = "anthropic"

ACCEPTED = (
    "images (image/png, image/jpeg, image/gif, image/webp; bytes or URL), PDF documents "
    "(application/pdf; bytes or URL) and plain-text documents (text/plain bytes in UTF-8)"
)
# The Messages API's documented limits (docs.anthropic.com, vision and PDF support).
MAX_IMAGE_BYTES = 5 * MB
MAX_PDF_BYTES = 32 * MB
MAX_IMAGES = 100


def anthropic_tools(tools: tuple[ToolSchema, ...]) -> list[dict[str, Any]]:
    """Our tool schemas as the Messages API's ``tools``."""
    declared = []
    for schema in tools:
        native = schema.native.get("anthropic")
        if native is not None:
            declared.append(dict(native))
        else:
            declared.append({
                "name": schema.name,
                "description": schema.description,
                "input_schema": thaw(schema.parameters),
            })
    return declared


def anthropic_messages(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    """Our transcript as the Messages API's ``messages``: tool results become
    ``tool_result`` blocks in a user turn, and consecutive turns of one role merge."""
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        append_turn(out, role, blocks)

    images = 0
    for index, message in enumerate(messages):
        if message.role == "tool":
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id,
                "content": _tool_result_content(message),
            }
            if message.is_error:
                result["is_error"] = True
            add("user", [result])
        elif message.role == "assistant":
            blocks = [_reasoning_block(part) for part in message.reasoning
                      if part.provider == PROVIDER]
            if message.content:
                blocks.append({"type": "text", "text": message.content})
            for call in message.tool_calls:
                blocks.append({
                    "type": "tool_use", "id": call.id, "name": call.name,
                    "input": thaw(call.arguments),
                })
            add("assistant", blocks or [{"type": "text", "text": ""}])
        elif message.role == "user":
            where = f"messages[{index}] (user)"
            blocks = [_media_block(media, where) for media in message.attachments]
            images += sum(1 for media in message.attachments if media.kind == "image")
            if images > MAX_IMAGES:
                raise refuse(PROVIDER, message.attachments[-1], ACCEPTED, where, limit=(
                    f"the Messages API takes at most {MAX_IMAGES} images per request"
                ))
            if message.content or not blocks:
                blocks.append({"type": "text", "text": message.content})
            add("user", blocks)
        # system messages travel in the ``system`` parameter, never in the transcript
    return out


def _media_block(media: Media, where: str) -> dict[str, Any]:
    """One media part of a user message as an image or document block."""
    if media.kind == "image" and media.mime_type in NATIVE_IMAGE_TYPES:
        if media.url is not None:
            return {"type": "image", "source": {"type": "url", "url": media.url}}
        check_size(PROVIDER, media, MAX_IMAGE_BYTES,
                   "the Messages API takes images of at most 5 MB", ACCEPTED, where)
        return {"type": "image", "source": {
            "type": "base64", "media_type": media.mime_type, "data": base64_data(media),
        }}
    if media.kind == "file" and media.mime_type == PDF:
        if media.url is not None:
            block: dict[str, Any] = {"type": "document", "source": {"type": "url",
                                                                     "url": media.url}}
        else:
            check_size(PROVIDER, media, MAX_PDF_BYTES,
                       "the Messages API takes PDFs of at most 32 MB", ACCEPTED, where)
            block = {"type": "document", "source": {
                "type": "base64", "media_type": PDF, "data": base64_data(media),
            }}
        return _titled(block, media)
    if media.kind == "file" and media.mime_type == PLAIN_TEXT and media.url is None:
        try:
            text = media.data.decode("utf-8")
        except UnicodeDecodeError:
            raise refuse(PROVIDER, media, ACCEPTED, where,
                         limit="a plain-text document must be UTF-8") from None
        return _titled({"type": "document", "source": {
            "type": "text", "media_type": PLAIN_TEXT, "data": text,
        }}, media)
    raise refuse(PROVIDER, media, ACCEPTED, where)


def _titled(block: dict[str, Any], media: Media) -> dict[str, Any]:
    name = getattr(media, "name", None)
    if name:
        block["title"] = name
    return block


def _tool_result_content(message: Message) -> str | list[dict[str, Any]]:
    """The text, plus an image block per attached image the API accepts (other media
    stay as the description lines already in the text)."""
    images = [m for m in message.attachments if native_image(m)]
    if not images:
        return message.content
    blocks: list[dict[str, Any]] = [{"type": "text", "text": message.content}]
    for image in images:
        source = ({"type": "url", "url": image.url} if image.url is not None else {
            "type": "base64", "media_type": image.mime_type, "data": base64_data(image),
        })
        blocks.append({"type": "image", "source": source})
    return blocks


def _reasoning_block(part: ReasoningPart) -> dict[str, Any]:
    """The thinking or redacted_thinking block a part was read from, as it came."""
    block: dict[str, Any] = thaw(part.state)
    if block.get("type") == "thinking":
        block["thinking"] = part.text
    return block


def reasoning_part(block: dict[str, Any], where: str) -> ReasoningPart:
    """A complete thinking or redacted_thinking block as a reasoning part: the text
    readable, the rest kept as the opaque state to send back."""
    if block["type"] == "redacted_thinking":
        return ReasoningPart(PROVIDER, "", {"type": "redacted_thinking",
                                            "data": field(block, "data", where, str)})
    return ReasoningPart(PROVIDER, field(block, "thinking", where, str), {
        "type": "thinking", "signature": field(block, "signature", where, str),
    })
