"""OpenAI's strict JSON Schemas: a tool's schema made strict when that keeps its meaning.

In strict mode OpenAI constrains the model's output to the schema exactly, but takes
only a subset of JSON Schema: every object closed (``additionalProperties: false``) with
every property required, and a short list of keywords. A schema that already fits,
once its objects are closed, is sent strict; any other (an optional argument, a keyword
outside the subset) is sent as it is, not strict, rather than changed into a different
contract. Closing an object changes nothing a tool accepts: agentkit refuses unexpected
arguments before a tool runs anyway.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentkit.tools.declarations.adapt import thaw

__all__ = ["strict_schema"]

# The keywords OpenAI's structured outputs accept (its "supported schemas" list).
_ALLOWED = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "enum", "const",
    "anyOf", "$ref", "$defs", "definitions", "description", "title", "pattern", "format",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
    "minItems", "maxItems",
})
_MAX_DEPTH = 10  # OpenAI's limit on nesting in a strict schema


def strict_schema(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """``schema`` with every object closed, when it can be strict; None when it cannot."""
    if schema.get("type") != "object":
        return None
    closed = thaw(schema)
    return closed if _close(closed, 0) else None


def _close(node: Any, depth: int) -> bool:
    if not isinstance(node, dict) or depth > _MAX_DEPTH or set(node) - _ALLOWED:
        return False
    if node.get("type") == "object" or "properties" in node:
        properties = node.get("properties", {})
        if node.get("additionalProperties", False) is not False:
            return False
        if sorted(node.get("required", [])) != sorted(properties):
            return False
        node["additionalProperties"] = False
        node.setdefault("required", list(properties))
        if not all(_close(value, depth + 1) for value in properties.values()):
            return False
    if "items" in node and not _close(node["items"], depth + 1):
        return False
    for key in ("anyOf",):
        if key in node and not all(_close(option, depth + 1) for option in node[key]):
            return False
    for key in ("$defs", "definitions"):
        if key in node and not all(_close(d, depth + 1) for d in node[key].values()):
            return False
    return True
