"""The A2A protocol as agentkit speaks it, both ways: method names, task states, error
codes, message parts, and the data part a task waiting for a person carries.

A2A 1.0's JSON-RPC binding is the ProtoJSON form of its messages: camelCase fields,
enum values by name (``TASK_STATE_INPUT_REQUIRED``), a part is one of ``{"text"}``,
``{"raw"}`` (base64), ``{"url"}`` or ``{"data"}`` with ``mediaType``/``filename`` beside
it. The 0.3 method names (``message/send``, ...) are accepted too, and the 0.3 part form
(``{"kind": "text", "text": ...}``) is read wherever parts are read; :func:`as_v03`
renders a result in the 0.3 shape for a caller that used a 0.3 name.

A task waiting for a person (``input-required``) carries, in its status message, one
data part under :data:`PENDING_KEY`: the pending calls (path id, tool, frozen arguments,
kind, the forms a decision may take) and an example reply, ``{"decisions": {"s3":
"approve"}}``. A message carrying a data part ``{"decisions": {...}}`` resumes it.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping, Sequence
from typing import Any

from agentkit.core.contracts.media import Audio, File, Image

__all__ = [
    "CARD_PATH",
    "DECISIONS_KEY",
    "INTERNAL_ERROR",
    "INVALID_PARAMS",
    "INVALID_REQUEST",
    "METHODS",
    "METHOD_NOT_FOUND",
    "PARSE_ERROR",
    "PENDING_KEY",
    "PROTOCOL_VERSION",
    "TASK_NOT_CANCELABLE",
    "TASK_NOT_FOUND",
    "UNSUPPORTED_OPERATION",
    "V03_METHODS",
    "PartError",
    "as_v03",
    "example_decision",
    "input_parts",
    "output_parts",
    "pending_of",
]

PROTOCOL_VERSION = "1.0"
CARD_PATH = "/.well-known/agent-card.json"
"""Where, under an agent's base URL, its agent card is."""

METHODS = ("SendMessage", "SendStreamingMessage", "GetTask", "CancelTask", "SubscribeToTask")
V03_METHODS: Mapping[str, str] = {
    "message/send": "SendMessage", "message/stream": "SendStreamingMessage",
    "tasks/get": "GetTask", "tasks/cancel": "CancelTask",
    "tasks/resubscribe": "SubscribeToTask",
}
"""The A2A 0.3 method names, by the 1.0 method each is."""

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND = -32700, -32600, -32601
INVALID_PARAMS, INTERNAL_ERROR = -32602, -32603
TASK_NOT_FOUND, TASK_NOT_CANCELABLE, UNSUPPORTED_OPERATION = -32001, -32002, -32004

PENDING_KEY = "agentkit_pending"
"""The key of the data part that lists a waiting task's pending calls."""
DECISIONS_KEY = "decisions"
"""The key of the data part that answers them: ``{"decisions": {call id: decision}}``."""

_EXAMPLES: Mapping[str, Any] = {
    "approval": "approve", "unknown_outcome": "approve", "gate": "approve",
    "input": {"answer": "..."}, "elicitation": {"action": "accept", "content": {}},
}


def example_decision(kind: str) -> Any:
    """A decision a call pending as ``kind`` accepts, for the example reply."""
    return _EXAMPLES.get(kind, "approve")


class PartError(ValueError):
    """A message part agentkit cannot read; the message says which and what is accepted."""


_ACCEPTED_PARTS = ('{"text": ...}, {"raw": <base64>, "mediaType": ...}, {"url": ..., '
                   '"mediaType": ...} or {"data": ...} (or the 0.3 forms with "kind")')


def _v03_part(part: Mapping[str, Any]) -> Mapping[str, Any]:
    """A 0.3 part (``{"kind": "file", "file": {...}}``) in the 1.0 form."""
    kind = part.get("kind")
    if kind == "text":
        return {"text": part.get("text")}
    if kind == "data":
        return {"data": part.get("data")}
    if kind == "file" and isinstance(part.get("file"), Mapping):
        file = part["file"]
        shaped: dict[str, Any] = {"mediaType": file.get("mimeType", ""),
                                  "filename": file.get("name", "")}
        if "bytes" in file:
            shaped["raw"] = file["bytes"]
        else:
            shaped["url"] = file.get("uri")
        return shaped
    return part


def input_parts(parts: Any) -> list[Any]:
    """A message's parts as the parts of an agentkit task: text as ``str``, a file as an
    ``Image``, ``Audio`` or ``File`` by its media type, data as its JSON text (the model
    reads text). :class:`PartError` for a part of no known form."""
    if not isinstance(parts, Sequence) or isinstance(parts, str | bytes) or not parts:
        raise PartError("a message needs a non-empty list of parts: " + _ACCEPTED_PARTS)
    task: list[Any] = []
    for index, raw in enumerate(parts):
        part = _v03_part(raw) if isinstance(raw, Mapping) else raw
        if not isinstance(part, Mapping):
            raise PartError(f"part {index} is not an object; parts are {_ACCEPTED_PARTS}")
        media = str(part.get("mediaType") or "application/octet-stream")
        if isinstance(part.get("text"), str):
            task.append(part["text"])
        elif "data" in part:
            task.append(json.dumps(part["data"], ensure_ascii=False, sort_keys=True))
        elif isinstance(part.get("raw"), str):
            try:
                data = base64.b64decode(part["raw"], validate=True)
            except (binascii.Error, ValueError):
                raise PartError(f"part {index}: \"raw\" is not base64") from None
            if media.startswith("image/"):
                task.append(Image(data, media))
            elif media.startswith("audio/"):
                task.append(Audio(data, media))
            else:
                task.append(File(data, media, part.get("filename") or None))
        elif isinstance(part.get("url"), str):
            url = part["url"]
            if media.startswith("image/"):
                task.append(Image.from_url(url, media))
            elif media.startswith("audio/"):
                task.append(Audio.from_url(url, media))
            else:
                task.append(File.from_url(url, media))
        else:
            raise PartError(f"part {index} has none of text, raw, url or data; parts are "
                            + _ACCEPTED_PARTS)
    return task


def output_parts(output: Any) -> list[dict[str, Any]]:
    """A run's output as artifact parts: text as a text part, structured output as a
    data part."""
    if isinstance(output, str):
        return [{"text": output}]
    return [{"data": output}]


def pending_of(parts: Any) -> Mapping[str, Any] | None:
    """The pending-calls data part among ``parts`` (a status message's), or None."""
    for part in parts if isinstance(parts, list) else ():
        data = part.get("data") if isinstance(part, Mapping) else None
        if isinstance(data, Mapping) and isinstance(data.get(PENDING_KEY), list):
            return data
    return None


_V03_STATE = {
    "TASK_STATE_SUBMITTED": "submitted", "TASK_STATE_WORKING": "working",
    "TASK_STATE_COMPLETED": "completed", "TASK_STATE_FAILED": "failed",
    "TASK_STATE_CANCELED": "canceled", "TASK_STATE_INPUT_REQUIRED": "input-required",
    "TASK_STATE_REJECTED": "rejected", "TASK_STATE_AUTH_REQUIRED": "auth-required",
}
_V03_KIND = {"task": "task", "message": "message", "statusUpdate": "status-update",
             "artifactUpdate": "artifact-update"}
_FINAL = frozenset({"completed", "failed", "canceled", "input-required", "rejected"})


def _part_v03(part: Mapping[str, Any]) -> dict[str, Any]:
    if "text" in part:
        return {"kind": "text", "text": part["text"]}
    if "data" in part:
        return {"kind": "data", "data": part["data"]}
    file = {"mimeType": part.get("mediaType", ""), "name": part.get("filename", "")}
    file.update({"bytes": part["raw"]} if "raw" in part else {"uri": part.get("url")})
    return {"kind": "file", "file": file}


def _shape_v03(value: Any, kind: str | None = None) -> Any:
    if isinstance(value, list):
        return [_shape_v03(v) for v in value]
    if not isinstance(value, Mapping):
        return value
    shaped: dict[str, Any] = {}
    for key, item in value.items():
        if key == "parts" and isinstance(item, list):
            shaped[key] = [_part_v03(p) for p in item]
        elif key == "history" and isinstance(item, list):
            shaped[key] = [_shape_v03(m, "message") for m in item]
        elif key == "state":
            shaped[key] = _V03_STATE.get(item, item)
        elif key == "role":
            shaped[key] = {"ROLE_USER": "user", "ROLE_AGENT": "agent"}.get(item, item)
        elif key in ("status", "message", "artifact"):
            shaped[key] = _shape_v03(item, "message" if key == "message" else None)
        else:
            shaped[key] = _shape_v03(item)
    if kind is not None:
        shaped["kind"] = kind
    return shaped


def as_v03(result: Mapping[str, Any]) -> dict[str, Any]:
    """A 1.0 result (a Task, or a ``{"task"|"message"|"statusUpdate"|"artifactUpdate":
    ...}`` wrapper) in the 0.3 shape: the object itself with its ``kind``, lower-case
    states and roles, ``kind``-tagged parts, and ``final`` on a status update."""
    for key, kind in _V03_KIND.items():
        if key in result and len(result) == 1:
            shaped: dict[str, Any] = _shape_v03(result[key], kind)
            if kind == "status-update":
                shaped["final"] = shaped.get("status", {}).get("state") in _FINAL
            return shaped
    shaped = _shape_v03(result, "task" if "status" in result else None)
    return shaped
