"""Tool parameter schemas as Gemini's ``parametersJsonSchema``: kept, rewritten, or refused.

Gemini takes function parameters as JSON Schema (``parameters_json_schema``) and
documents the subset it honours: ``type``, ``properties``, ``required``,
``additionalProperties``, ``items``, ``enum`` (strings and numbers), ``anyOf``, ``$defs``
and ``$ref``, the numeric, length and count bounds, ``format``, ``pattern``, and the
annotations. (The older ``parameters`` field takes an OpenAPI subset without
``additionalProperties`` or references, which every closed agentkit schema uses, so it
is not used.) A keyword of that subset is sent as it is; one with another spelling of
the same meaning is rewritten (a ``const`` is a one-value ``enum``, an integer
``exclusiveMinimum: n`` is ``minimum: n + 1``, a lone ``allOf`` member is merged in,
``definitions`` is ``$defs``). Every other construct (``oneOf``, which Gemini would read
as ``anyOf``; ``not``; ``uniqueItems``; ``patternProperties``; ``multipleOf``; keywords
this module does not know) raises
:class:`~agentkit.core.contracts.errors.UnsupportedSchema` naming the tool, the keyword
and where it is: a tool is never declared with a looser schema than it has.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentkit.core.contracts.errors import UnsupportedSchema
from agentkit.tools.declarations.adapt import thaw

__all__ = ["gemini_parameters"]

_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object", "null"})

# Keywords Gemini honours with JSON Schema's meaning, sent unchanged.
_SAME = frozenset({
    "description", "title", "format", "pattern", "default", "minimum", "maximum",
    "minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties",
    "required", "propertyOrdering",
})

# Annotations: they describe, they do not constrain, so leaving them out loosens nothing.
_ANNOTATIONS = frozenset({
    "$schema", "$id", "$comment", "examples", "readOnly", "writeOnly", "deprecated",
})

_REF_PREFIXES = ("#/$defs/", "#/definitions/")


def gemini_parameters(tool: str, schema: Mapping[str, Any], provider: str) -> dict[str, Any]:
    """``schema`` (a tool's JSON Schema for its arguments) as the JSON Schema Gemini
    honours, for ``parameters_json_schema``."""
    return _Translation(tool, provider).root(thaw(schema))


class _Translation:
    __slots__ = ("provider", "tool")

    def __init__(self, tool: str, provider: str) -> None:
        self.tool = tool
        self.provider = provider

    def refuse(self, where: str, construct: str, reason: str) -> UnsupportedSchema:
        return UnsupportedSchema(self.provider, self.tool, f"{construct} at {where}", reason)

    def root(self, schema: Any) -> dict[str, Any]:
        return self.node(schema, "$")

    def node(self, schema: Any, where: str) -> dict[str, Any]:
        if not isinstance(schema, dict):
            raise self.refuse(where, repr(schema), "a schema must be a JSON object")
        schema = self.merged_all_of(schema, where)
        out: dict[str, Any] = {}
        for key, value in schema.items():
            at = f"{where}.{key}"
            if key in _ANNOTATIONS:
                continue
            if key in ("minimum", "maximum") and key in out:  # set from an exclusive bound
                tighter = max if key == "minimum" else min
                out[key] = tighter(out[key], value)
            elif key in _SAME:
                out[key] = value
            elif key == "type":
                out["type"] = self.type_(value, at)
            elif key == "enum":
                out["enum"] = self.enum(value, at)
            elif key == "const":
                out["enum"] = self.enum([value], at)
            elif key in ("exclusiveMinimum", "exclusiveMaximum"):
                out.update(self.exclusive(key, value, schema, at))
            elif key == "properties":
                out["properties"] = {
                    name: self.node(sub, f"{at}.{name}") for name, sub in value.items()
                }
            elif key == "items":
                out["items"] = self.node(value, at)
            elif key == "additionalProperties":
                out[key] = value if isinstance(value, bool) else self.node(value, at)
            elif key == "anyOf":
                out[key] = [self.node(sub, f"{at}[{i}]") for i, sub in enumerate(value)]
            elif key in ("$defs", "definitions"):
                if where != "$":
                    raise self.refuse(at, key, "Gemini takes definitions only at the root")
                out["$defs"] = {name: self.node(sub, f"{at}.{name}")
                                for name, sub in value.items()}
            elif key == "$ref":
                out[key] = self.ref(value, at)
            else:
                raise self.refuse(where, key, _WHY.get(key, "Gemini's JSON Schema subset has "
                                                       "no such keyword and no equivalent"))
        return out

    def merged_all_of(self, schema: dict[str, Any], where: str) -> dict[str, Any]:
        parts = schema.get("allOf")
        if parts is None:
            return schema
        rest = {k: v for k, v in schema.items() if k != "allOf"}
        if isinstance(parts, list) and len(parts) == 1 and isinstance(parts[0], dict) and not (
            set(parts[0]) & set(rest)
        ):
            return {**rest, **parts[0]}
        raise self.refuse(where, "allOf", "Gemini has no intersection of schemas; only a "
                          "single allOf member that shares no keyword with its parent is "
                          "merged in")

    def type_(self, value: Any, where: str) -> Any:
        names = value if isinstance(value, list) else [value]
        if not names or not all(isinstance(n, str) and n in _TYPES for n in names):
            raise self.refuse(where, f"type {value!r}", f"accepted types: {sorted(_TYPES)}")
        return value

    def enum(self, values: Any, where: str) -> list[Any]:
        if not isinstance(values, list) or not values or not all(
            isinstance(v, str | int | float) and not isinstance(v, bool) for v in values
        ):
            raise self.refuse(where, f"enum {values!r}",
                              "Gemini's enum takes strings and numbers only")
        return values

    def exclusive(self, key: str, value: Any, schema: dict[str, Any], where: str) -> (
        dict[str, Any]
    ):
        # Between integers, "more than n" is "at least n + 1": the same set of values.
        integer = schema.get("type") == "integer"
        if not integer or isinstance(value, bool) or not isinstance(value, int):
            raise self.refuse(where, key, "Gemini has inclusive bounds only; an exclusive "
                              "bound has an inclusive form for integers alone")
        if key == "exclusiveMinimum":
            return {"minimum": max(value + 1, schema.get("minimum", value + 1))}
        return {"maximum": min(value - 1, schema.get("maximum", value - 1))}

    def ref(self, value: Any, where: str) -> str:
        for prefix in _REF_PREFIXES:
            if isinstance(value, str) and value.startswith(prefix):
                return "#/$defs/" + value[len(prefix):]
        raise self.refuse(where, f"$ref {value!r}", "Gemini resolves references only into "
                          "the root's $defs")


_WHY = {
    "oneOf": "Gemini has anyOf but no exactly-one-of; declaring it as anyOf would accept "
             "values that match several alternatives",
    "not": "Gemini has no negated schema",
    "uniqueItems": "Gemini cannot require distinct array items",
    "multipleOf": "Gemini has no multipleOf",
    "patternProperties": "Gemini cannot constrain properties by name pattern",
    "propertyNames": "Gemini cannot constrain property names",
    "prefixItems": "Gemini has no tuple arrays",
    "if": "Gemini has no conditional schemas",
    "dependentRequired": "Gemini has no dependent requirements",
    "dependentSchemas": "Gemini has no dependent schemas",
    "contains": "Gemini has no contains",
}
