"""A small JSON Schema checker for the keywords tool and output schemas use.

Covers ``type`` (one or a list), ``enum``, ``const``, ``properties``, ``required``,
``additionalProperties``, ``items``, ``prefixItems``, ``anyOf`` / ``oneOf`` / ``allOf``,
``minLength`` / ``maxLength``, ``minimum`` / ``maximum`` / ``exclusiveMinimum`` /
``exclusiveMaximum``, ``minItems`` / ``maxItems`` and local ``$ref`` into ``$defs`` /
``definitions``. Unknown keywords are ignored, as JSON Schema itself does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentkit.core.contracts._quote import cut, quote

__all__ = ["schema_errors"]

_TYPE_CHECKS = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool))
    or (isinstance(v, float) and v.is_integer()),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "object": lambda v: isinstance(v, Mapping),
    "array": lambda v: isinstance(v, list | tuple),
}


def schema_errors(value: Any, schema: Mapping[str, Any], *, limit: int = 10) -> list[str]:
    """Every way ``value`` fails ``schema`` (up to ``limit``), as ``path: problem`` lines."""
    errors: list[str] = []
    _check(value, schema, "$", schema, errors, limit)
    return errors


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return schema
    target: Any = root
    for part in ref[2:].split("/"):
        if not isinstance(target, Mapping) or part not in target:
            return schema
        target = target[part]
    return target if isinstance(target, Mapping) else schema


def _check(
    value: Any,
    schema: Any,
    path: str,
    root: Mapping[str, Any],
    errors: list[str],
    limit: int,
) -> None:
    if len(errors) >= limit or not isinstance(schema, Mapping):
        return
    schema = _resolve(schema, root)
    expected = schema.get("type")
    if expected is not None:
        kinds = [expected] if isinstance(expected, str) else list(expected)
        if not any(_TYPE_CHECKS.get(k, lambda v: True)(value) for k in kinds):
            errors.append(f"{path}: expected {' or '.join(kinds)}, got {_kind(value)}")
            return
    if "enum" in schema and not any(_same(value, option) for option in schema["enum"]):
        errors.append(f"{path}: {quote(value)} is not one of {list(schema['enum'])}")
    if "const" in schema and not _same(value, schema["const"]):
        errors.append(f"{path}: expected {schema['const']!r}, got {quote(value)}")
    for keyword in ("anyOf", "oneOf"):
        options = schema.get(keyword)
        if options and not any(not schema_errors_at(value, o, root) for o in options):
            errors.append(f"{path}: matches none of the allowed shapes")
    for option in schema.get("allOf", ()):
        _check(value, option, path, root, errors, limit)
    if isinstance(value, str):
        _bounds(len(value), schema, "minLength", "maxLength", path, "characters", errors)
    if isinstance(value, int | float) and not isinstance(value, bool):
        _numeric(value, schema, path, errors)
    if isinstance(value, Mapping):
        _object(value, schema, path, root, errors, limit)
    if isinstance(value, list | tuple):
        _bounds(len(value), schema, "minItems", "maxItems", path, "items", errors)
        prefix = schema.get("prefixItems") or ()
        for index, item in enumerate(value):
            item_schema = prefix[index] if index < len(prefix) else schema.get("items")
            if isinstance(item_schema, Mapping):
                _check(item, item_schema, f"{path}[{index}]", root, errors, limit)


def schema_errors_at(value: Any, schema: Any, root: Mapping[str, Any]) -> list[str]:
    """Errors of ``value`` against a sub-schema of ``root``."""
    errors: list[str] = []
    _check(value, schema, "$", root, errors, 1)
    return errors


def _object(
    value: Mapping[str, Any],
    schema: Mapping[str, Any],
    path: str,
    root: Mapping[str, Any],
    errors: list[str],
    limit: int,
) -> None:
    properties = schema.get("properties") or {}
    missing = [k for k in schema.get("required", ()) if k not in value]
    if missing:
        errors.append(f"{path}: missing required propert{'y' if len(missing) == 1 else 'ies'} "
                      f"{missing}")
    additional = schema.get("additionalProperties", True)
    for key, item in value.items():
        if key in properties:
            _check(item, properties[key], f"{path}.{_step(key)}", root, errors, limit)
        elif additional is False:
            errors.append(
                f"{path}: unexpected property {quote(key)}; allowed: {list(properties)}"
            )
        elif isinstance(additional, Mapping):
            _check(item, additional, f"{path}.{_step(key)}", root, errors, limit)


def _bounds(
    size: int,
    schema: Mapping[str, Any],
    low: str,
    high: str,
    path: str,
    unit: str,
    errors: list[str],
) -> None:
    if low in schema and size < schema[low]:
        errors.append(f"{path}: needs at least {schema[low]} {unit}, got {size}")
    if high in schema and size > schema[high]:
        errors.append(f"{path}: allows at most {schema[high]} {unit}, got {size}")


def _numeric(value: float, schema: Mapping[str, Any], path: str, errors: list[str]) -> None:
    if "minimum" in schema and value < schema["minimum"]:
        errors.append(f"{path}: {quote(value)} is below the minimum {schema['minimum']}")
    if "maximum" in schema and value > schema["maximum"]:
        errors.append(f"{path}: {quote(value)} is above the maximum {schema['maximum']}")
    if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        errors.append(f"{path}: {quote(value)} must be above {schema['exclusiveMinimum']}")
    if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
        errors.append(f"{path}: {quote(value)} must be below {schema['exclusiveMaximum']}")


def _step(key: str) -> str:
    """A key as one step of an error's path, cut so deep paths stay bounded."""
    return cut(key, 40)


def _same(a: Any, b: Any) -> bool:
    return bool(a == b) and isinstance(a, bool) == isinstance(b, bool)


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return type(value).__name__
