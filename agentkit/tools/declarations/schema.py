"""What the model is shown of a tool: its description rules and its parameter schema.

The description is the whole docstring, verbatim, down to a line holding only
``---``; everything below that line is for people editing the source. Nothing here
trims or caps a long description: what the author wrote above the cut is what ships.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping
from typing import Any

from agentkit.core.contracts.errors import ToolDefinitionError

__all__ = [
    "CUT_LINE",
    "DEVELOPER_NOTE_MARKERS",
    "_MIN_DESCRIPTION_LEN",
    "clean_docstring",
    "describe_tool",
    "find_developer_note",
    "object_schema",
    "split_at_cut",
]

_MIN_DESCRIPTION_LEN = 30
"""The shortest description a tool may have: what the model reads to tell tools apart."""

CUT_LINE = "---"
"""A docstring line holding only this ends the model-facing part."""

DEVELOPER_NOTE_MARKERS = ("TODO", "FIXME", "XXX", "HACK")
"""Markers refused above the cut, where they would read as instructions to the model."""

# At the start of a line, after indentation and an optional list bullet; whole words
# only, so "XXXL is a size" and "Append a TODO: item" (prose before it) are not notes.
_NOTE = re.compile(
    r"^[ \t]*(?:(?:[-*+•]|\d+[.)])[ \t]+)?(" + "|".join(DEVELOPER_NOTE_MARKERS) + r")\b",
    re.MULTILINE,
)


def clean_docstring(doc: str) -> str:
    """Normalise line endings to ``\\n``, then dedent and strip as ``inspect`` does.

    A CRLF docstring defeats ``inspect.getdoc``'s dedent (the ``\\r`` makes every line
    look different), so the endings are fixed first and the dedent re-run on the result.
    """
    return inspect.cleandoc(doc.replace("\r\n", "\n").replace("\r", "\n"))


def split_at_cut(text: str) -> tuple[str, bool]:
    """``(model_facing_part, had_cut)``: the text above the first ``---`` line."""
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if line.strip() == CUT_LINE:
            return "\n".join(lines[:index]).rstrip(), True
    return text, False


def find_developer_note(text: str) -> str | None:
    """The first developer-note marker that starts a line of ``text``, if any."""
    match = _NOTE.search(text)
    return match.group(1) if match else None


def describe_tool(name: str, docstring: str | None, description: str | None = None) -> str:
    """The description the model is shown for tool ``name``.

    An explicit ``description`` is taken verbatim after ``strip()``. Otherwise the
    docstring is cleaned, cut at its ``---`` line and refused if a developer note sits
    above the cut. Either way the result must be at least ``_MIN_DESCRIPTION_LEN``
    characters long, or :class:`ToolDefinitionError` says what was counted.
    """
    had_cut = False
    if description is not None:
        if not isinstance(description, str):
            raise ToolDefinitionError(
                f"tool {name!r}: description= must be a string, got {type(description).__name__}"
            )
        text = description.strip()
    else:
        text, had_cut = split_at_cut(clean_docstring(docstring or ""))
        note = find_developer_note(text)
        if note is not None:
            raise ToolDefinitionError(
                f"tool {name!r} has a developer note ({note}) in the part of its docstring "
                "that is sent to the model, where it reads as an instruction; move it below "
                "a line containing only '---' (everything after that line is for humans) or "
                "pass an explicit description="
            )
    if len(text) < _MIN_DESCRIPTION_LEN:
        message = (
            f"tool {name!r} needs a docstring/description of at least {_MIN_DESCRIPTION_LEN} "
            f"characters so the model can understand it; got {len(text)} chars: {text!r}"
        )
        if had_cut:
            message += (
                " (everything below the '---' line in its docstring is for humans and was "
                "not counted)"
            )
        raise ToolDefinitionError(message)
    return text


def object_schema(properties: Mapping[str, Any], required: list[str]) -> dict[str, Any]:
    """A JSON Schema object with ``properties`` in declaration order and ``required``."""
    return {"type": "object", "properties": dict(properties), "required": required}
