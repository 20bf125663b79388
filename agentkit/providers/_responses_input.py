"""Our transcript as Responses API input items, and our tools as its function tools.

- a user message: text, or ``input_text`` then ``input_image`` (a data URL or the image's
  URL) and ``input_file`` parts (a PDF as a data URL or by URL); a plain-text document
  is its text in an ``input_text`` part headed by its name; anything else, or a part
  over a documented limit, is :class:`UnsupportedMedia` before any request is sent;
- an assistant message: its OpenAI reasoning items first, as they came (id, summary,
  ``encrypted_content``; never a plaintext ``content``, which input items may not
  carry), then its text, then a ``function_call`` item per call; reasoning from another
  provider is dropped. Stateless (``store=False``), an item id means something only
  when the item carries its own content: a reasoning item without
  ``encrypted_content`` is dropped and a call is sent without its ``fc_`` id, since the
  API refuses ids of items it did not store. With ``store=True`` both go back as they
  came;
- a tool result: a ``function_call_output`` item, its images as ``input_image`` parts of
  the output.
"""

from __future__ import annotations

import json
from typing import Any

from agentkit.core.contracts.media import Media
from agentkit.core.contracts.types import Message, ToolSchema
from agentkit.providers._media import (
    MB,
    NATIVE_IMAGE_TYPES,
    PDF,
    PLAIN_TEXT,
    check_size,
    data_url,
    native_image,
    refuse,
)
from agentkit.providers._strict import strict_schema
from agentkit.tools.declarations.adapt import thaw

__all__ = ["responses_input", "responses_tools"]

PROVIDER = "openai"

ACCEPTED = (
    "images (image/png, image/jpeg, image/gif, image/webp; bytes or URL), PDF documents "
    "(application/pdf; bytes or URL) and plain-text documents (text/plain bytes in UTF-8)"
)
# OpenAI's documented limits: 50 MB of images, and of files, per request.
MAX_PART_BYTES = 50 * MB


def responses_tools(tools: tuple[ToolSchema, ...]) -> list[dict[str, Any]]:
    """Our tool schemas as Responses function tools, strict where the schema allows."""
    declared = []
    for schema in tools:
        strict = strict_schema(schema.parameters)
        declared.append({
            "type": "function",
            "name": schema.name,
            "description": schema.description,
            "parameters": strict if strict is not None else thaw(schema.parameters),
            "strict": strict is not None,
        })
    return declared


def responses_input(
    messages: tuple[Message, ...], *, store: bool = False
) -> list[dict[str, Any]]:
    """Our transcript as the Responses API's ``input`` items (``store``: whether the
    request lets OpenAI keep its items, see above)."""
    items: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        if message.role == "assistant":
            for part in message.reasoning:
                if part.provider != PROVIDER or not (store or part.state.get("encrypted_content")):
                    continue
                items.append({k: v for k, v in thaw(part.state).items() if k != "content"})
            if message.content:
                items.append({"role": "assistant", "content": message.content})
            for call in message.tool_calls:
                item: dict[str, Any] = {
                    "type": "function_call", "call_id": call.id, "name": call.name,
                    "arguments": json.dumps(thaw(call.arguments), ensure_ascii=False),
                }
                item_id = call.provider_state.get(PROVIDER, {}).get("id")
                if store and isinstance(item_id, str):
                    item["id"] = item_id
                items.append(item)
        elif message.role == "tool":
            items.append({
                "type": "function_call_output", "call_id": message.tool_call_id,
                "output": _tool_output(message),
            })
        elif message.role == "user" and message.attachments:
            where = f"messages[{index}] (user)"
            parts: list[dict[str, Any]] = []
            if message.content:
                parts.append({"type": "input_text", "text": message.content})
            parts.extend(_media_part(media, where) for media in message.attachments)
            items.append({"role": "user", "content": parts})
        else:
            items.append({"role": message.role, "content": message.content})
    return items


def _media_part(media: Media, where: str) -> dict[str, Any]:
    if media.kind == "image" and media.mime_type in NATIVE_IMAGE_TYPES:
        check_size(PROVIDER, media, MAX_PART_BYTES,
                   "the Responses API takes at most 50 MB of images per request", ACCEPTED,
                   where)
        return {"type": "input_image", "image_url": data_url(media), "detail": "auto"}
    if media.kind == "file" and media.mime_type == PDF:
        if media.url is not None:
            return {"type": "input_file", "file_url": media.url}
        check_size(PROVIDER, media, MAX_PART_BYTES,
                   "the Responses API takes files of at most 50 MB", ACCEPTED, where)
        return {"type": "input_file", "filename": media.name or "document.pdf",
                "file_data": data_url(media)}
    if media.kind == "file" and media.mime_type == PLAIN_TEXT and media.url is None:
        try:
            text = media.data.decode("utf-8")
        except UnicodeDecodeError:
            raise refuse(PROVIDER, media, ACCEPTED, where,
                         limit="a plain-text document must be UTF-8") from None
        return {"type": "input_text", "text": f"[file {media.name or 'document.txt'}]\n{text}"}
    raise refuse(PROVIDER, media, ACCEPTED, where)


def _tool_output(message: Message) -> str | list[dict[str, Any]]:
    """The text, plus an ``input_image`` part per attached image the API shows (other
    media stay as the description lines already in the text)."""
    images = [m for m in message.attachments if native_image(m)]
    if not images:
        return message.content
    return [{"type": "input_text", "text": message.content}, *(
        {"type": "input_image", "image_url": data_url(image), "detail": "auto"}
        for image in images
    )]
