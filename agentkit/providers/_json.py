"""Tool-call arguments from a model's JSON text, without letting bad JSON crash a run."""

from __future__ import annotations

import json
from typing import Any

__all__ = ["parse_arguments"]


def parse_arguments(text: str) -> tuple[dict[str, Any], str | None]:
    """``(arguments, None)`` for a JSON object, else ``({}, reason)``: the agent loop
    turns the reason into a ``ToolArgumentError`` the model reads and repairs."""
    try:
        value = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        shown = text if len(text) <= 200 else text[:197] + "..."
        return {}, f"not valid JSON ({exc.msg} at position {exc.pos}): {shown!r}"
    if not isinstance(value, dict):
        return {}, f"expected a JSON object, got {type(value).__name__}: {text[:200]!r}"
    return value, None
