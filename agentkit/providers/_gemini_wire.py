"""Our transcript, tools and settings as a Gemini ``generateContent`` request.

Everything is built as plain dicts keyed by the SDK's field names, then validated into
the SDK's own types (``Content``, ``GenerateContentConfig``) before anything is sent, so a
request Gemini would refuse for its shape is refused here. Opaque state (thought
signatures) is kept base64-encoded, as JSON carries it, and decoded to bytes only here.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from typing import Any

from agentkit.core.contracts.errors import UnsupportedSchema, UnsupportedSetting
from agentkit.core.contracts.media import Media
from agentkit.core.contracts.types import ChatRequest, Message, ToolCall, ToolSchema
from agentkit.providers._gemini_schema import gemini_parameters
from agentkit.providers._media import check_size, refuse
from agentkit.providers._settings import extra_fields, tool_choice
from agentkit.providers._turns import append_turn
from agentkit.tools.declarations.adapt import thaw

__all__ = [
    "INLINE_LIMIT", "MEDIA_TYPES", "gemini_config", "gemini_contents", "gemini_tools",
    "signature",
]

MEDIA_TYPES = frozenset({
    "image/png", "image/jpeg", "image/webp", "image/heic", "image/heif",
    "application/pdf", "text/plain",
    "audio/wav", "audio/mp3", "audio/mpeg", "audio/aiff", "audio/aac", "audio/ogg",
    "audio/flac",
})
"""The media types Gemini documents for inline data and file URIs (images, PDF, plain
text, audio)."""

INLINE_LIMIT = 20 * 1024 * 1024
"""Gemini's documented limit on a request with inline data: 20 MB (larger files go
through the Files API and a file URI)."""

# Thinking budgets for Reasoning(effort=...) on models that take a budget (Gemini 2.5).
_BUDGETS = {"low": 1024, "medium": 8192, "high": 24576}

_NO_JSON_SCHEMA = ("gemini-1", "gemini-2.0")
"""Gemini models that take a response schema only in the older OpenAPI form
(``response_schema``), not as JSON Schema (``response_json_schema``, from Gemini 2.5)."""
# Models without a thinking setting at all.
_NO_THINKING = ("gemini-2.0", "gemini-1.5", "gemini-1.0")


def signature(state: Mapping[str, Any], key: str = "thought_signature") -> bytes | None:
    """The signature ``state`` holds, as the bytes the SDK sends."""
    value = state.get(key)
    return base64.b64decode(value) if isinstance(value, str) else None


def _media_part(media: Media, provider: str, where: str) -> dict[str, Any]:
    accepted = f"{', '.join(sorted(MEDIA_TYPES))} (inline or by URL)"
    if media.mime_type not in MEDIA_TYPES:
        raise refuse(provider, media, accepted, where)
    if media.url is not None:
        return {"file_data": {"file_uri": media.url, "mime_type": media.mime_type}}
    check_size(provider, media, INLINE_LIMIT, "Gemini takes inline data of at most 20 MB a "
               "request", accepted, where)
    return {"inline_data": {"data": media.data, "mime_type": media.mime_type}}


def _model_parts(message: Message, provider: str) -> list[dict[str, Any]]:
    """An assistant message as Gemini ``model`` parts, with this provider's thought
    signatures back where they came from (other providers' state is left out)."""
    parts: list[dict[str, Any]] = []
    text_signature: bytes | None = None
    for part in message.reasoning:
        if part.provider != provider:
            continue
        if "text_signature" in part.state:
            text_signature = signature(part.state, "text_signature")
            continue
        thought: dict[str, Any] = {"text": part.text, "thought": True}
        sig = signature(part.state)
        if sig is not None:
            thought["thought_signature"] = sig
        parts.append(thought)
    if message.content or text_signature is not None:
        text: dict[str, Any] = {"text": message.content}
        if text_signature is not None:
            text["thought_signature"] = text_signature
        parts.append(text)
    for call in message.tool_calls:
        state = call.provider_state.get(provider, {})
        function_call: dict[str, Any] = {"name": call.name, "args": thaw(call.arguments)}
        if isinstance(state.get("id"), str):
            function_call["id"] = state["id"]
        out: dict[str, Any] = {"function_call": function_call}
        sig = signature(state)
        if sig is not None:
            out["thought_signature"] = sig
        parts.append(out)
    return parts or [{"text": ""}]


def gemini_contents(
    messages: tuple[Message, ...], provider: str = "google"
) -> list[dict[str, Any]]:
    """Our transcript as Gemini ``contents``: ``user`` and ``model`` turns, tool results as
    ``function_response`` parts of a user turn, consecutive turns of one role merged (so
    the answers to parallel calls travel together, as Gemini requires)."""
    calls: dict[str, ToolCall] = {}
    out: list[dict[str, Any]] = []

    def add(role: str, parts: list[dict[str, Any]]) -> None:
        append_turn(out, role, parts, "parts")

    for i, message in enumerate(messages):
        where = f"messages[{i}] ({message.role})"
        if message.role == "assistant":
            calls.update((call.id, call) for call in message.tool_calls)
            add("model", _model_parts(message, provider))
        elif message.role == "tool":
            call = calls.get(message.tool_call_id or "")
            response: dict[str, Any] = {
                "name": message.name or (call.name if call else ""),
                "response": {"error" if message.is_error else "output": message.content},
            }
            state = call.provider_state.get(provider, {}) if call else {}
            if isinstance(state.get("id"), str):
                response["id"] = state["id"]
            parts: list[dict[str, Any]] = [{"function_response": response}]
            parts += [_media_part(m, provider, where) for m in message.attachments
                      if m.mime_type in MEDIA_TYPES]
            add("user", parts)
        elif message.role == "user":
            parts = [{"text": message.content}] if message.content else []
            parts += [_media_part(m, provider, where) for m in message.attachments]
            add("user", parts or [{"text": ""}])
        # system messages travel in system_instruction, never in the transcript
    return out


def _thinking(request: ChatRequest, model: str, provider: str) -> dict[str, Any] | None:
    reasoning = request.settings.reasoning
    if reasoning is None:
        return None
    if model.startswith(_NO_THINKING):
        raise UnsupportedSetting(
            provider, "reasoning", f"{model} has no thinking; Gemini 2.5 and later think"
        )
    config: dict[str, Any] = {"include_thoughts": reasoning.summary}
    if reasoning.budget_tokens is not None:
        config["thinking_budget"] = reasoning.budget_tokens
    elif model.startswith("gemini-2.5"):
        config["thinking_budget"] = _BUDGETS[reasoning.effort]
    else:  # Gemini 3 and later take a level rather than a budget
        config["thinking_level"] = reasoning.effort.upper()
    return config


def _tool_config(request: ChatRequest, provider: str) -> dict[str, Any] | None:
    if request.settings.parallel_tool_calls is False:
        raise UnsupportedSetting(
            provider, "parallel_tool_calls",
            "Gemini has no setting that limits a turn to one function call; leave it unset "
            "(or True)",
        )
    choice = tool_choice(request, provider)
    if choice is None:
        return None
    modes = {"auto": "AUTO", "none": "NONE", "required": "ANY"}
    calling: dict[str, Any] = {"mode": modes.get(choice, "ANY")}
    if choice not in modes:
        calling["allowed_function_names"] = [choice]
    return {"function_calling_config": calling}


def gemini_config(
    request: ChatRequest, model: str, provider: str, config_fields: frozenset[str]
) -> dict[str, Any]:
    """The ``GenerateContentConfig`` fields for ``request``; ``config_fields`` are the
    names the SDK's config accepts, which ``ModelSettings.extra`` may set."""
    settings = request.settings
    # The SDK would otherwise try to run Python callables itself; here it only sends.
    config: dict[str, Any] = {"automatic_function_calling": {"disable": True}}
    if request.system:
        config["system_instruction"] = request.system
    if request.tools:
        config["tools"] = gemini_tools(request.tools, provider)
    wanted = {
        "temperature": settings.temperature, "top_p": settings.top_p,
        "max_output_tokens": settings.max_tokens, "seed": settings.seed,
        "stop_sequences": list(settings.stop) if settings.stop else None,
        "thinking_config": _thinking(request, model, provider),
        "tool_config": _tool_config(request, provider),
    }
    config.update((name, value) for name, value in wanted.items() if value is not None)
    config.update(_output_format(request, model, provider))
    if settings.extra:
        unknown = sorted(set(settings.extra) - config_fields)
        if unknown:
            raise UnsupportedSetting(
                provider, "extra", f"{unknown} are not GenerateContentConfig fields; "
                "accepted: the SDK's GenerateContentConfig field names, e.g. 'top_k'",
            )
        config.update(extra_fields(settings.extra, config, provider))
    return config


def _output_format(request: ChatRequest, model: str, provider: str) -> dict[str, Any]:
    """``Agent(output=...)``'s schema as Gemini's JSON mode, where Gemini honours it as
    written; otherwise nothing, and agentkit's validation and repair turn alone hold the
    answer to the schema (as they do behind the JSON mode too).

    Not sent beside tools (Gemini 2.5 does not combine a response schema with function
    calling), to models before Gemini 2.5, or for a schema outside the subset Gemini
    honours, which would be read as a looser one.
    """
    schema = request.output_schema
    if schema is None or request.tools or model.startswith(_NO_JSON_SCHEMA):
        return {}
    try:
        honoured = gemini_parameters("output", schema, provider)
    except UnsupportedSchema:
        return {}
    return {"response_mime_type": "application/json", "response_json_schema": honoured}


def gemini_tools(tools: tuple[ToolSchema, ...], provider: str = "google") -> list[dict[str, Any]]:
    """Our tool schemas as Gemini ``tools``: one tool holding every function declaration.

    Raises :class:`~agentkit.core.contracts.errors.UnsupportedSchema` for a parameter
    schema Gemini cannot express."""
    return [{"function_declarations": [_declaration(t, provider) for t in tools]}]


def _declaration(schema: ToolSchema, provider: str) -> dict[str, Any]:
    native = schema.native.get(provider)
    if native is not None:
        return dict(thaw(native))
    declared: dict[str, Any] = {"name": schema.name, "description": schema.description}
    parameters = schema.parameters
    # An object without properties is a tool without arguments, which Gemini takes as a
    # declaration without parameters.
    if parameters.get("properties") or set(parameters) - {"type", "properties", "required",
                                                           "additionalProperties"}:
        declared["parameters_json_schema"] = gemini_parameters(schema.name, parameters,
                                                               provider)
    return declared
