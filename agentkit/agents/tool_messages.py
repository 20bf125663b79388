"""What the model reads back from a tool call: results and failures as text."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from enum import Enum
from typing import Any

from agentkit.core.contracts.errors import AgentkitError, ToolShapeError, ToolTimeout
from agentkit.core.contracts.media import Audio, File, Image, Media
from agentkit.tools.declarations.adapt import thaw

__all__ = ["describe_failure", "render_result", "render_value"]

_MEDIA = (Image, Audio, File)


def _jsonable(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if isinstance(value, set | frozenset):
        return [_jsonable(v) for v in sorted(value, key=repr)]
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def render_value(value: Any) -> str:
    """A tool's return value as the text of a tool-result message.

    Strings pass through; None is empty; structures become JSON, so the model reads the
    same shape a schema would describe.
    """
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    try:
        return json.dumps(_jsonable(thaw(value) if isinstance(value, Mapping) else value),
                          ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def render_result(value: Any) -> tuple[str, tuple[Media, ...]]:
    """A tool's return value as a tool-result message's text and attachments.

    A media value (or a list or tuple holding some, in order with text and data parts)
    is attached, never inlined: the text carries each one's ``describe()`` line in its
    place, so a model that cannot see it still knows it is there.
    """
    if type(value) is str:
        return value, ()  # the common case, first
    if isinstance(value, _MEDIA):
        return value.describe(), (value,)
    if isinstance(value, list | tuple) and any(isinstance(v, _MEDIA) for v in value):
        attached = tuple(v for v in value if isinstance(v, _MEDIA))
        lines = [v.describe() if isinstance(v, _MEDIA) else render_value(v) for v in value]
        return "\n".join(line for line in lines if line), attached
    return render_value(value), ()


def describe_failure(tool_name: str, error: Exception) -> str:
    """A failed call as the model should read it: what was wrong and what is accepted.

    Argument and unknown-tool errors already say what is accepted; a shape error adds
    why the value missed; anything else names the exception so the model can decide
    whether to try differently.
    """
    if isinstance(error, ToolShapeError):
        return f"{error}: {error.reason}" if error.reason else str(error)
    if isinstance(error, ToolTimeout):  # only a call that changes nothing, or idempotent
        return f"{error}. It is safe to call it again, with the same or a narrower request."
    if isinstance(error, AgentkitError):
        return str(error)
    detail = str(error) or "(no message)"
    return f"tool {tool_name!r} failed: {type(error).__name__}: {detail}"
