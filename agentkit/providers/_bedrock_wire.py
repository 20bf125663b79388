"""The Converse request BedrockLLM sends: messages, tools, settings and cache points.

Parameters are built as botocore takes them (blobs as raw ``bytes``, which botocore
sends as base64). Every refusal happens here, before a request leaves:

- a media part Converse cannot take (audio, a URL, a type outside its formats, a part in
  a non-user message) or one past the limits the API reference documents (20 images of
  at most 3.75 MB, five documents of at most 4.5 MB) is :class:`UnsupportedMedia`;
- a setting Converse has no parameter for (``seed``, ``parallel_tool_calls``,
  ``tool_choice="none"``, ``reasoning`` on a model without a thinking parameter) is
  :class:`UnsupportedSetting`.

Cache points follow the Anthropic cache's placement rules (``_prompt_cache``): after the
tools, after the stable system prompt, after the message the previous request ended
with and after the newest one, each only when the prefix up to it is long enough, at
most four. Claude models take all four; Amazon Nova models cache system and messages
only; other models are sent none (Bedrock refuses a cache point a model cannot use).
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

from agentkit.core.contracts.errors import UnsupportedMedia, UnsupportedSetting
from agentkit.core.contracts.media import Media
from agentkit.core.contracts.types import ChatRequest, Message, ToolSchema
from agentkit.core.policies.prices import CacheTTL
from agentkit.providers._media import check_size, native_image, refuse
from agentkit.providers._prompt_cache import (
    estimate_tokens,
    message_anchors,
    minimum_cacheable,
    select_marks,
)
from agentkit.providers._settings import tool_choice
from agentkit.providers._turns import append_turn
from agentkit.tools.declarations.adapt import thaw

__all__ = ["PROVIDER", "base_model", "converse_params"]

PROVIDER = "bedrock"

MB = 1024 * 1024
_IMAGE_FORMATS = {"image/png": "png", "image/jpeg": "jpeg", "image/gif": "gif",
                  "image/webp": "webp"}
_DOCUMENT_FORMATS = {
    "application/pdf": "pdf", "text/csv": "csv", "application/msword": "doc",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.ms-excel": "xls",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "text/html": "html", "text/plain": "txt", "text/markdown": "md",
}
# The Converse API reference (Message.content): up to 20 images of at most 3.75 MB and
# up to five documents of at most 4.5 MB each.
_MAX_IMAGE_BYTES = int(3.75 * MB)
_MAX_DOCUMENT_BYTES = int(4.5 * MB)
_MAX_IMAGES = 20
_MAX_DOCUMENTS = 5
_ACCEPTED = (
    "images (png, jpeg, gif, webp) and documents (pdf, csv, doc, docx, xls, xlsx, html, "
    "txt, md) as bytes, in user messages"
)
# A document's name may hold letters, digits, single spaces, hyphens, parentheses and
# square brackets (DocumentBlock.name); anything else becomes a hyphen.
_NAME_CHARACTERS = re.compile(r"[^A-Za-z0-9\-()\[\] ]+")

# Converse request members that ModelSettings.extra may set; any other key of ``extra``
# is a model-specific field and goes into additionalModelRequestFields.
_TOP_LEVEL = frozenset({"guardrailConfig", "performanceConfig", "requestMetadata",
                        "promptVariables", "additionalModelResponseFieldPaths",
                        "serviceTier", "outputConfig"})

# Thinking budgets for Reasoning(effort=...) without budget_tokens, as AnthropicLLM uses.
_BUDGETS = {"low": 1024, "medium": 4096, "high": 16384}

_GEOGRAPHY = re.compile(r"^(?:us|eu|apac|jp|au|us-gov|global)\.")


def base_model(model: str) -> str:
    """The foundation model a Bedrock id names: a cross-region inference profile is the
    model's id after a geography (``us.``, ``eu.``, ``global.``), which is dropped."""
    return _GEOGRAPHY.sub("", model)


def _family(model: str) -> str:
    return base_model(model).partition(".")[0]


def converse_params(
    request: ChatRequest, model: str, *, cache: bool, ttl: CacheTTL
) -> dict[str, Any]:
    """The Converse keywords (``modelId`` included) for ``request``."""
    params: dict[str, Any] = {
        "modelId": model, "messages": _messages(request.messages, tools=bool(request.tools))}
    system = [{"text": request.system}] if request.system else []
    if request.tools:
        params["toolConfig"] = {"tools": [_tool(schema) for schema in request.tools]}
    _apply_settings(params, request, model)
    if cache and _family(model) in ("anthropic", "amazon"):
        system = _place_cache_points(params, system, request.stable_system, model, ttl)
    if system:
        params["system"] = system
    return params


def _tool(schema: ToolSchema) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": schema.name, "inputSchema": {"json": thaw(schema.parameters)}}
    if schema.description:  # Converse refuses an empty description
        spec["description"] = schema.description
    return {"toolSpec": spec}


def _messages(messages: tuple[Message, ...], *, tools: bool) -> list[dict[str, Any]]:
    """Our transcript as Converse messages: tool results become ``toolResult`` blocks in
    a user turn, consecutive turns of one role merge (Converse alternates roles).

    Converse refuses ``toolUse`` and ``toolResult`` blocks in a request that offers no
    tools (a session an agent without tools continues, say); there, each call and each
    result is a line of text instead, naming the call id and the tool.
    """
    out: list[dict[str, Any]] = []
    media = _MediaCount()

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        # A message with nothing for Converse (only another provider's reasoning, say)
        # makes no turn.
        if blocks:
            append_turn(out, role, blocks)

    for i, message in enumerate(messages):
        where = f"messages[{i}] ({message.role})"
        if message.role == "tool" and not tools:
            failed = " (failed)" if message.is_error else ""
            add("user", [{"text": f"[result of tool call {message.tool_call_id} "
                                  f"({message.name}){failed}]: {message.content}"}])
        elif message.role == "tool":
            content: list[dict[str, Any]] = [{"text": message.content}]
            # Images a tool returned go with its result; other media stay as the
            # description lines already in the text.
            content.extend(_image(m, where, media) for m in message.attachments
                           if native_image(m))
            result: dict[str, Any] = {"toolUseId": message.tool_call_id, "content": content,
                      "status": "error" if message.is_error else "success"}
            add("user", [{"toolResult": result}])
        elif message.role == "assistant":
            blocks: list[dict[str, Any]] = [
                {"reasoningContent": _sent_back(part.state)} for part in message.reasoning
                if part.provider == PROVIDER  # opaque state goes home only
            ]
            if message.attachments:
                raise _refused(message.attachments[0], where)
            if message.content:
                blocks.append({"text": message.content})
            if tools:
                blocks.extend({"toolUse": {"toolUseId": call.id, "name": call.name,
                                           "input": thaw(call.arguments)}}
                              for call in message.tool_calls)
            else:
                blocks.extend({"text": f"[tool call {call.id}: {call.name}"
                                       f"({json.dumps(thaw(call.arguments))})]"}
                              for call in message.tool_calls)
            add("assistant", blocks)
        elif message.role == "user":
            user: list[dict[str, Any]] = [{"text": message.content}] if message.content else []
            user.extend(_part(m, where, media) for m in message.attachments)
            add("user", user)
        # system messages travel in the ``system`` parameter, never in the transcript
    return out


def _sent_back(state: Any) -> dict[str, Any]:
    """A reasoning part's state as it came, the redacted bytes back from base64."""
    block: dict[str, Any] = thaw(state)
    if isinstance(block.get("redactedContent"), str):
        block["redactedContent"] = base64.b64decode(block["redactedContent"])
    return block


class _MediaCount:
    __slots__ = ("documents", "images")

    def __init__(self) -> None:
        self.images = 0
        self.documents = 0


def _refused(media: Media, where: str, limit: str | None = None) -> UnsupportedMedia:
    return refuse(PROVIDER, media, _ACCEPTED, where, limit=limit)


def _image(media: Media, where: str, count: _MediaCount) -> dict[str, Any]:
    if media.url is not None or media.mime_type not in _IMAGE_FORMATS:
        raise _refused(media, where)
    check_size(PROVIDER, media, _MAX_IMAGE_BYTES, "Converse takes images of at most 3.75 MB",
               _ACCEPTED, where)
    count.images += 1
    if count.images > _MAX_IMAGES:
        raise _refused(media, where, limit=f"Converse takes at most {_MAX_IMAGES} images a "
                                           "request")
    return {"image": {"format": _IMAGE_FORMATS[media.mime_type],
                      "source": {"bytes": media.data}}}


def _part(media: Media, where: str, count: _MediaCount) -> dict[str, Any]:
    if media.kind == "image":
        return _image(media, where, count)
    if media.kind != "file" or media.url is not None or media.mime_type not in (
        _DOCUMENT_FORMATS
    ):
        raise _refused(media, where)
    check_size(PROVIDER, media, _MAX_DOCUMENT_BYTES,
               "Converse takes documents of at most 4.5 MB", _ACCEPTED, where)
    count.documents += 1
    if count.documents > _MAX_DOCUMENTS:
        raise _refused(media, where, limit=f"Converse takes at most {_MAX_DOCUMENTS} "
                                           "documents a request")
    name = getattr(media, "name", None) or f"document-{count.documents}"
    name = " ".join(_NAME_CHARACTERS.sub("-", name).split()) or f"document-{count.documents}"
    return {"document": {"format": _DOCUMENT_FORMATS[media.mime_type], "name": name,
                         "source": {"bytes": media.data}}}


def _apply_settings(params: dict[str, Any], request: ChatRequest, model: str) -> None:
    settings = request.settings
    if settings.seed is not None:
        raise UnsupportedSetting(PROVIDER, "seed", "Converse has no seed parameter")
    if settings.parallel_tool_calls is not None:
        raise UnsupportedSetting(
            PROVIDER, "parallel_tool_calls",
            "Converse has no switch for parallel tool calls (a model that takes one reads "
            "it from ModelSettings(extra={...}), sent as additionalModelRequestFields)",
        )
    inference: dict[str, Any] = {}
    if request.max_tokens:
        inference["maxTokens"] = request.max_tokens
    if settings.temperature is not None:
        inference["temperature"] = settings.temperature
    if settings.top_p is not None:
        inference["topP"] = settings.top_p
    if settings.stop:
        inference["stopSequences"] = list(settings.stop)
    if inference:
        params["inferenceConfig"] = inference
    choice = tool_choice(request, PROVIDER)
    if choice == "none":
        raise UnsupportedSetting(
            PROVIDER, "tool_choice",
            "Converse has no 'none' tool choice; accepted: 'auto', 'required' or a tool "
            "name (or offer no tools)",
        )
    if choice is not None:
        wire: dict[str, Any] = {"auto": {"auto": {}}, "required": {"any": {}}}.get(
            choice, {"tool": {"name": choice}}
        )
        params["toolConfig"]["toolChoice"] = wire
    fields: dict[str, Any] = {}
    if settings.reasoning is not None:
        if _family(model) != "anthropic":
            raise UnsupportedSetting(
                PROVIDER, "reasoning",
                f"agentkit maps it for Claude models on Bedrock only, not {model!r}; send "
                "the model's own field as ModelSettings(extra={...})",
            )
        budget = settings.reasoning.budget_tokens or _BUDGETS[settings.reasoning.effort]
        fields["thinking"] = {"type": "enabled", "budget_tokens": budget}
    for key, value in thaw(settings.extra).items():
        target = params if key in _TOP_LEVEL else fields
        if key in target:
            raise UnsupportedSetting(
                PROVIDER, "extra",
                f"it sets {key!r}, which agentkit already sets from the request; use the "
                "ModelSettings field instead",
            )
        target[key] = value
    if fields:
        params["additionalModelRequestFields"] = fields


def _place_cache_points(
    params: dict[str, Any], system: list[dict[str, Any]], stable: int | None, model: str,
    ttl: CacheTTL,
) -> list[dict[str, Any]]:
    """Insert ``cachePoint`` blocks by the Anthropic cache's rules; returns the system
    blocks (the stable part split from the per-run part when a point goes between)."""
    point: dict[str, Any] = {"type": "default"}
    if ttl != "5m":
        point["ttl"] = ttl
    minimum = minimum_cacheable(base_model(model).partition(".")[2])
    running = 0
    # Each candidate: (where to insert, prefix tokens up to it), in prefix order.
    places: list[tuple[list[dict[str, Any]], int]] = []
    tools = params.get("toolConfig", {}).get("tools", [])
    if tools:
        running += estimate_tokens(tools)
        if _family(model) == "anthropic":  # Nova caches no tools
            places.append((tools, running))
    if system:
        text = system[0]["text"]
        cut = len(text) if stable is None else max(0, min(stable, len(text)))
        system = [{"text": part} for part in (text[:cut], text[cut:]) if part]
        if cut:
            running += estimate_tokens(system[0])
            places.append((system, running))
        if len(system) > 1 or not cut:
            running += estimate_tokens(system[-1])
    messages = params["messages"]
    anchors = message_anchors([message["role"] for message in messages])
    for i, message in enumerate(messages):
        running += estimate_tokens(message)
        if i in anchors:
            places.append((message["content"], running))
    chosen = select_marks([(i, tokens) for i, (_, tokens) in enumerate(places)], minimum)
    for i in chosen:
        target, mark = places[i][0], {"cachePoint": dict(point)}
        if target is system:
            system.insert(1, mark)  # right after the stable part, before the per-run one
        else:
            target.append(mark)
    return system
