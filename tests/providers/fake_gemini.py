"""Gemini's wire format for the local test server: replies as Gemini sends them, and a
check of every recorded request against google-genai's own types, so the fake cannot
drift from the API the SDK speaks.

The ``gemini`` fixture (in ``conftest``) gives the scripted server and a ``GeminiLLM``
pointed at it: the pair a provider contract suite takes for this provider.
"""

from __future__ import annotations

import json
from typing import Any

from google.genai import types

from agentkit.providers import GeminiLLM

from .conftest import Recorded, Reply, WireServer

MODEL = "gemini-2.5-flash"

# The top-level fields of a generateContent body, each with the SDK type that parses it.
_FIELDS: dict[str, Any] = {
    "contents": types.Content,
    "systemInstruction": types.Content,
    "tools": types.Tool,
    "toolConfig": types.ToolConfig,
    "generationConfig": types.GenerationConfig,
    "safetySettings": types.SafetySetting,
    "cachedContent": str,
}


def usage(prompt: int = 10, output: int = 5, **more: int) -> dict[str, int]:
    return {"promptTokenCount": prompt, "candidatesTokenCount": output,
            "totalTokenCount": prompt + output + sum(more.values()), **more}


def answer(parts: list[dict[str, Any]], finish: str | None = "STOP",
           meta: dict[str, int] | None = None, response_id: str = "resp1") -> dict[str, Any]:
    """One ``GenerateContentResponse`` as JSON (a whole reply, or one stream event)."""
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    body: dict[str, Any] = {"candidates": [candidate], "modelVersion": MODEL,
                            "responseId": response_id}
    if meta is not None:
        body["usageMetadata"] = meta
    return body


def reply(parts: list[dict[str, Any]], finish: str = "STOP",
          meta: dict[str, int] | None = None) -> Reply:
    return Reply(body=answer(parts, finish, meta or usage()))


def events(*bodies: dict[str, Any]) -> Reply:
    return Reply(events=[(None, body) for body in bodies])


def error(status: int, code: str, message: str, *details: dict[str, Any]) -> Reply:
    return Reply(status, {"error": {"code": status, "message": message, "status": code,
                                    "details": list(details)}})


def check_request(request: Recorded) -> dict[str, Any]:
    """The request's body, after checking that google-genai's types parse each field
    (the SDK's models forbid unknown fields and decode base64 bytes in JSON mode)."""
    body = request.body
    assert isinstance(body, dict)
    unknown = set(body) - set(_FIELDS)
    assert unknown == set(), f"fields Gemini does not define: {unknown}"
    for name, value in body.items():
        kind = _FIELDS[name]
        for item in value if isinstance(value, list) else [value]:
            if kind is str:
                assert isinstance(item, str)
            else:
                kind.model_validate_json(json.dumps(item))
    return body


def bodies(wire: WireServer) -> list[dict[str, Any]]:
    """Every recorded request body, each checked against the SDK's types."""
    return [check_request(r) for r in wire.requests]


def google_llm(wire: WireServer, **options: Any) -> GeminiLLM:
    return GeminiLLM(api_key="test-key", base_url=wire.url, **options)
