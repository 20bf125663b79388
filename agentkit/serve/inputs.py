"""A run's ``"input"`` as the JSON API takes it: text, or a list of parts, text and
media, made into the task ``Agent.run`` takes (:mod:`agentkit.agents.task`).

Text parts are joined by newlines into the task's text; an ``image``, ``audio`` or
``file`` part becomes an :class:`~agentkit.core.contracts.media.Image`, ``Audio`` or
``File`` from its base64 ``data`` or its ``url``, with its ``media_type`` (and a file's
``name``). Anything else is refused with a 400 naming the part and the accepted forms.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from agentkit.agents.task import Task
from agentkit.core.contracts.media import Audio, File, Image, Media
from agentkit.serve.engine import ServeError

__all__ = ["task_of"]

_FORMS = ('"input" must be text, or a list of parts: {"type": "text", "text": ...}, or '
          '{"type": "image" | "audio" | "file", "data": <base64> or "url": ..., '
          '"media_type": ...} (a file may have a "name")')
_FIELDS = {"type", "data", "url", "media_type", "name"}


def task_of(value: Any) -> Task:
    """The task ``"input"`` asks for; :class:`ServeError` 400 for anything else."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise _bad(_FORMS)
    texts: list[str] = []
    media: list[Media] = []
    for index, part in enumerate(value):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind in ("image", "audio", "file"):
            media.append(_media(index, kind, part))
        else:
            raise _bad(f"part {index} is none of these: {_FORMS}")
    text = "\n".join(texts)
    return [text, *media] if media else text


def _media(index: int, kind: str, part: dict[str, Any]) -> Media:
    where = f"part {index} ({kind})"
    accepted = _FIELDS if kind == "file" else _FIELDS - {"name"}
    unknown = sorted(set(part) - accepted)
    if unknown:
        raise _bad(f"{where} has unknown field(s) {unknown}; accepted: {sorted(accepted)}")
    data, url, media_type = part.get("data"), part.get("url"), part.get("media_type")
    if (data is None) == (url is None):
        raise _bad(f'{where} needs "data" (its bytes, in base64) or "url", one of them')
    if not isinstance(media_type, str):
        raise _bad(f'{where} needs "media_type", such as "image/png" or "application/pdf"')
    name = part.get("name")
    if not isinstance(name, str | None) or not isinstance(data, str | None):
        raise _bad(f'{where}: "name" and "data" are strings')
    try:
        raw = b"" if data is None else base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise _bad(f'{where}: "data" is not base64') from None
    try:
        if kind == "file":
            return File(raw, media_type, name, url=url)
        return (Image if kind == "image" else Audio)(raw, media_type, url=url)
    except (TypeError, ValueError) as error:  # the media type or the URL
        raise _bad(f"{where}: {error}") from None


def _bad(message: str) -> ServeError:
    return ServeError(400, "bad_request", message)
