"""A small JSON Schema checker for the keywords tool and output schemas use.

Covers ``type`` (one or a list), ``enum``, ``const``, ``properties``, ``required``,
``additionalProperties``, ``items``, ``prefixItems``, ``anyOf`` / ``oneOf`` / ``allOf``,
``minLength`` / ``maxLength``, ``minimum`` / ``maximum`` / ``exclusiveMinimum`` /
``exclusiveMaximum``, ``minItems`` / ``maxItems`` and local ``$ref`` into ``$defs`` /
``definitions``. Unknown keywords are ignored, as JSON Schema itself does, and so is a
keyword whose value this checker cannot read (a remote ``$ref``, a ``minimum`` that is
not a number): the value it governs passes unchecked rather than being refused.
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


_MAX_REFS = 32
"""``$ref`` hops followed for one value before it is passed unchecked (a cycle)."""


def schema_errors(value: Any, schema: Mapping[str, Any], *, limit: int = 10) -> list[str]:
    """Every way ``value`` fails ``schema`` (up to ``limit``), as ``path: problem`` lines."""
    return schema_errors_at(value, schema, schema, limit=limit)


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """``schema`` with local ``$ref`` chains followed; None when a reference cannot be
    followed (remote, dangling or cyclic), which leaves the value unchecked."""
    for _ in range(_MAX_REFS):
        ref = schema.get("$ref")
        if ref is None:
            return schema
        if not isinstance(ref, str) or not ref.startswith("#"):
            return None
        target: Any = root
        for part in ref[1:].split("/")[1:]:
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(target, Mapping) or part not in target:
                return None
            target = target[part]
        if not isinstance(target, Mapping):
            return None
        schema = target
    return None


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
    resolved = _resolve(schema, root)
    if resolved is None:
        return
    schema = resolved
    expected = schema.get("type")
    kinds = [expected] if isinstance(expected, str) else expected
    known = isinstance(kinds, list | tuple) and kinds and all(k in _TYPE_CHECKS for k in kinds)
    if known and not any(_TYPE_CHECKS[k](value) for k in kinds):
        errors.append(f"{path}: expected {' or '.join(kinds)}, got {_kind(value)}")
        return
    options = schema.get("enum")
    if isinstance(options, list | tuple) and not any(_same(value, o) for o in options):
        errors.append(f"{path}: {quote(value)} is not one of {list(options)}")
    if "const" in schema and not _same(value, schema["const"]):
        errors.append(f"{path}: expected {schema['const']!r}, got {quote(value)}")
    for keyword in ("anyOf", "oneOf"):
        shapes = schema.get(keyword)
        if isinstance(shapes, list | tuple) and shapes and not any(
            not schema_errors_at(value, shape, root) for shape in shapes
        ):
            errors.append(f"{path}: matches none of the allowed shapes")
    every = schema.get("allOf")
    for option in every if isinstance(every, list | tuple) else ():
        _check(value, option, path, root, errors, limit)
    if isinstance(value, str):
        _bounds(len(value), schema, "minLength", "maxLength", path, "characters", errors)
    if isinstance(value, int | float) and not isinstance(value, bool):
        _numeric(value, schema, path, errors)
    if isinstance(value, Mapping):
        _object(value, schema, path, root, errors, limit)
    if isinstance(value, list | tuple):
        _bounds(len(value), schema, "minItems", "maxItems", path, "items", errors)
        prefix = schema.get("prefixItems")
        prefix = prefix if isinstance(prefix, list | tuple) else ()
        for index, item in enumerate(value):
            item_schema = prefix[index] if index < len(prefix) else schema.get("items")
            if isinstance(item_schema, Mapping):
                _check(item, item_schema, f"{path}[{index}]", root, errors, limit)


def schema_errors_at(
    value: Any, schema: Any, root: Mapping[str, Any], *, limit: int = 1
) -> list[str]:
    """Errors of ``value`` against a sub-schema of ``root`` (``$ref`` resolves in root).

    A schema the checker cannot read where it matters (a keyword of the wrong type, a
    cycle too deep) yields no errors: the value is passed, never refused or crashed on.
    """
    errors: list[str] = []
    try:
        _check(value, schema, "$", root, errors, limit)
    except (TypeError, ValueError, AttributeError, RecursionError):
        return []
    return errors


def _object(
    value: Mapping[str, Any],
    schema: Mapping[str, Any],
    path: str,
    root: Mapping[str, Any],
    errors: list[str],
    limit: int,
) -> None:
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    required = schema.get("required")
    required = required if isinstance(required, list | tuple) else ()
    missing = [k for k in required if isinstance(k, str) and k not in value]
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
    if _is_number(schema.get(low)) and size < schema[low]:
        errors.append(f"{path}: needs at least {schema[low]} {unit}, got {size}")
    if _is_number(schema.get(high)) and size > schema[high]:
        errors.append(f"{path}: allows at most {schema[high]} {unit}, got {size}")


def _numeric(value: float, schema: Mapping[str, Any], path: str, errors: list[str]) -> None:
    if _is_number(schema.get("minimum")) and value < schema["minimum"]:
        errors.append(f"{path}: {quote(value)} is below the minimum {schema['minimum']}")
    if _is_number(schema.get("maximum")) and value > schema["maximum"]:
        errors.append(f"{path}: {quote(value)} is above the maximum {schema['maximum']}")
    if _is_number(schema.get("exclusiveMinimum")) and value <= schema["exclusiveMinimum"]:
        errors.append(f"{path}: {quote(value)} must be above {schema['exclusiveMinimum']}")
    if _is_number(schema.get("exclusiveMaximum")) and value >= schema["exclusiveMaximum"]:
        errors.append(f"{path}: {quote(value)} must be below {schema['exclusiveMaximum']}")


def _step(key: str) -> str:
    """A key as one step of an error's path, cut so deep paths stay bounded."""
    return cut(key, 40)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


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
