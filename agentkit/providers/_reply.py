"""Reading a provider's reply as plain JSON: the body, the event stream, and each field.

The SDKs' own reply models are built without validation, so a reply of the wrong shape
surfaces far away as ``TypeError`` or ``AttributeError``. The providers read the raw
reply instead, and every field through :func:`field`, which names the field's path and
what was expected when the reply breaks the API's promise (:class:`MalformedReply`).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

from agentkit.providers._errors import MalformedReply
from agentkit.providers._json import decode, describe, excerpt

__all__ = ["event_data", "field", "json_body", "obj", "sse_events", "stream_body"]


class _Missing:
    """A field the reply does not have."""

    def __repr__(self) -> str:
        return "MISSING"


_MISSING = _Missing()

_WORDS: dict[type, str] = {str: "a string", int: "an integer", list: "a list", dict: "an object"}


def _described(value: Any) -> str:
    return "nothing" if value is _MISSING else describe(value)


def obj(value: Any, where: str) -> dict[str, Any]:
    """``value`` when it is a JSON object, else :class:`MalformedReply` naming ``where``."""
    if not isinstance(value, dict):
        raise MalformedReply(f"{where}: expected an object, got {_described(value)}")
    return value


def field(
    parent: Mapping[str, Any], key: str, where: str, kind: type, *, nullable: bool = False
) -> Any:
    """``parent[key]`` when it is of ``kind`` (or null/absent, when ``nullable``).

    ``where`` is the parent's path in the reply, for the error message.
    """
    value = parent.get(key, _MISSING)
    if nullable and (value is None or value is _MISSING):
        return None
    if isinstance(value, kind) and not (kind is int and isinstance(value, bool)):
        return value
    path = f"{where}.{key}" if where else key
    wanted = _WORDS[kind] + (" or null" if nullable else "")
    raise MalformedReply(f"{path}: expected {wanted}, got {_described(value)}")


def _media_type(headers: Mapping[str, str]) -> str:
    return headers.get("content-type", "").partition(";")[0].strip().lower()


def json_body(raw: bytes, headers: Mapping[str, str]) -> Any:
    """A whole reply body decoded as JSON."""
    text = raw.decode("utf-8", errors="replace")
    if not text.strip():
        raise MalformedReply("the body is empty", transient=True)
    media = _media_type(headers)
    if media == "text/html":
        raise MalformedReply(
            "the body is an HTML page, not the API's JSON (is base_url the API's address?): "
            + excerpt(text)
        )
    if media == "text/event-stream":  # a server that streams whatever it is asked
        raise MalformedReply(
            f"asked for one JSON body, got an event stream: {excerpt(text)}"
        )
    try:
        return decode(text)
    except json.JSONDecodeError as exc:
        raise MalformedReply(
            f"the body is not valid JSON ({exc.msg}: char {exc.pos}): {excerpt(text)}",
            transient=True,
        ) from None
    except RecursionError:
        raise MalformedReply("the body is nested too deeply to parse") from None


async def stream_body(response: Any) -> None:
    """Refuse a reply to a streaming request that is not an event stream."""
    media = _media_type(response.headers)
    if media == "text/event-stream":
        return
    # Read whole rather than stop early: an abandoned byte iterator is closed by the
    # garbage collector later, outside this task.
    body = (await response.read()).decode("utf-8", errors="replace")
    raise MalformedReply(
        f"asked for a stream, got a body of type {media or 'unknown'} instead of "
        f"text/event-stream: {excerpt(body)}"
    )


async def sse_events(lines: AsyncIterator[str]) -> AsyncIterator[tuple[str | None, str]]:
    """Server-sent events as ``(event name, data)``, from the body's lines.

    An event counts once its blank line arrives; one left unfinished when the body ends
    is dropped, as the SSE standard says, so a cut stream loses it rather than half of it.
    """
    name: str | None = None
    data: list[str] = []
    async for line in lines:
        if not line:
            if data:
                yield name, "\n".join(data)
            name, data = None, []
            continue
        if line.startswith(":"):
            continue
        key, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if key == "event":
            name = value
        elif key == "data":
            data.append(value)


def event_data(data: str) -> Any:
    """One event's data decoded as JSON."""
    try:
        return decode(data)
    except json.JSONDecodeError as exc:
        raise MalformedReply(
            f"an event is not valid JSON ({exc.msg}: char {exc.pos}): {excerpt(data)}",
            transient=True,
        ) from None
    except RecursionError:
        raise MalformedReply("an event is nested too deeply to parse") from None
