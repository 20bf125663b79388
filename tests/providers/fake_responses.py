"""The OpenAI Responses API's wire, for the local test server: replies and stream events
built here and checked against the ``openai`` SDK's own types, and recorded requests
checked against its request types, so this fake cannot drift from the real API."""

from __future__ import annotations

import itertools
import json
from typing import Any, get_type_hints

from openai.types.responses import Response, ResponseStreamEvent
from openai.types.responses.response_create_params import (
    ResponseCreateParamsNonStreaming,
    ResponseCreateParamsStreaming,
)
from pydantic import TypeAdapter

from .conftest import Reply

_EVENT = TypeAdapter(ResponseStreamEvent)
_PARAMS = {False: TypeAdapter(ResponseCreateParamsNonStreaming),
           True: TypeAdapter(ResponseCreateParamsStreaming)}
_KNOWN = {stream: set(get_type_hints(params)) for stream, params in (
    (False, ResponseCreateParamsNonStreaming), (True, ResponseCreateParamsStreaming))}

USAGE = {"input_tokens": 100,
         "input_tokens_details": {"cached_tokens": 60, "cache_write_tokens": 0},
         "output_tokens": 50, "output_tokens_details": {"reasoning_tokens": 30},
         "total_tokens": 150}


def check_request(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` when the SDK's request types accept it; every field must be one they know."""
    stream = bool(body.get("stream"))
    unknown = set(body) - _KNOWN[stream]
    assert not unknown, f"fields the Responses API does not have: {sorted(unknown)}"
    _PARAMS[stream].validate_python(body)
    return body


def reasoning(item_id: str, summary: str, encrypted: str) -> dict[str, Any]:
    return {"type": "reasoning", "id": item_id, "encrypted_content": encrypted,
            "summary": [{"type": "summary_text", "text": summary}] if summary else []}


def text(words: str, item_id: str = "msg_1") -> dict[str, Any]:
    return {"type": "message", "id": item_id, "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": words, "annotations": []}]}


def call(call_id: str, name: str, arguments: dict[str, Any], item_id: str) -> dict[str, Any]:
    return {"type": "function_call", "id": item_id, "call_id": call_id, "name": name,
            "arguments": json.dumps(arguments), "status": "completed"}


def response(output: list[dict[str, Any]], *, status: str = "completed",
             usage: dict[str, Any] | None = None, model: str = "gpt-5",
             **fields: Any) -> dict[str, Any]:
    """A response object, validated as the SDK's ``Response``."""
    body = {"id": "resp_1", "object": "response", "created_at": 1764600000, "model": model,
            "status": status, "output": output, "parallel_tool_calls": True,
            "tool_choice": "auto", "tools": [], "usage": usage or USAGE, "error": None,
            "incomplete_details": None, **fields}
    Response.model_validate(body)
    return body


def reply(output: list[dict[str, Any]], **fields: Any) -> Reply:
    return Reply(body=response(output, **fields), headers={"x-request-id": "req_r1"})


def stream(*events: dict[str, Any]) -> Reply:
    """An event stream; each event gets its sequence number and is validated."""
    numbered = []
    for n, event in zip(itertools.count(), events, strict=False):
        event = {**event, "sequence_number": n}
        _EVENT.validate_python(event)
        numbered.append((event["type"], event))
    return Reply(events=numbered, headers={"x-request-id": "req_s1"})


def streamed(output: list[dict[str, Any]], deltas: list[dict[str, Any]],
             **fields: Any) -> list[dict[str, Any]]:
    """The events of a whole streamed response: created, each item added, ``deltas``,
    each item done, completed."""
    created = response([], status="in_progress", **fields)
    events: list[dict[str, Any]] = [{"type": "response.created", "response": created}]
    for index, item in enumerate(output):
        added = {**item, "arguments": ""} if item["type"] == "function_call" else item
        if item["type"] == "message":
            added = {**item, "content": [], "status": "in_progress"}
        events.append({"type": "response.output_item.added", "output_index": index,
                       "item": added})
    events += deltas
    events += [{"type": "response.output_item.done", "output_index": i, "item": item}
               for i, item in enumerate(output)]
    events.append({"type": "response.completed", "response": response(output, **fields)})
    return events
