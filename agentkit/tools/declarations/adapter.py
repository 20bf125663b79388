"""The values of adaptation: what ``adapt()`` derives from an annotation, the error a
value that does not fit raises, how a value looks to a JSON reader in a message, and
which class kinds are structured (checked without importing Pydantic or attrs)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agentkit.core.contracts._quote import digits

__all__ = [
    "JSON_TYPE_NAMES",
    "Adapter",
    "Invalid",
    "describe_value",
    "fresh_schema",
    "is_attrs_class",
    "is_pydantic_model",
    "is_structured",
]


class Invalid(Exception):
    """A value does not fit its annotation; ``reason`` says how, for the model to read."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


@dataclass(frozen=True, slots=True)
class Adapter:
    """What ``adapt()`` derives from one annotation."""

    schema: Mapping[str, Any]
    """The JSON Schema fragment the model is shown. Shared: copy before changing it."""
    coerce: Callable[[Any], Any]
    """Turns a JSON value into the annotated type, or raises :class:`Invalid`."""
    name: str
    """A short name for the type, for messages (``"Quote"``, ``"list[int]"``)."""
    structured: bool = False
    """True for dataclasses, attrs classes, Pydantic models and TypedDicts."""


JSON_TYPE_NAMES: dict[type, str] = {
    str: "string",
    bool: "boolean",
    int: "integer",
    float: "number",
    type(None): "null",
}


def describe_value(value: Any) -> str:
    """``integer 3``, ``string '3'``, ``array``: how a value looks to a JSON reader, in
    at most about 60 characters whatever the value."""
    if isinstance(value, bool):
        return f"boolean {'true' if value else 'false'}"
    if isinstance(value, int) and value.bit_length() > 190 and digits(value) > 57:
        return f"integer of {digits(value)} digits"  # repr() fails past 4,300 digits
    for py_type, json_name in JSON_TYPE_NAMES.items():
        if isinstance(value, py_type):
            shown = repr(value[:61] if isinstance(value, str) else value)
            if len(shown) > 60 or (isinstance(value, str) and len(value) > 61):
                shown = shown[:57] + "..."
            return f"{json_name} {shown}" if value is not None else "null"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple | set | frozenset):
        return "array"
    return type(value).__name__


def _copy_schema(schema: Any) -> Any:
    if isinstance(schema, Mapping):
        return {k: _copy_schema(v) for k, v in schema.items()}
    if isinstance(schema, list):
        return [_copy_schema(v) for v in schema]
    return schema


def fresh_schema(adapter: Adapter) -> dict[str, Any]:
    """A private, mutable copy of ``adapter.schema``."""
    copied = _copy_schema(adapter.schema)
    assert isinstance(copied, dict)
    return copied


def is_pydantic_model(tp: Any) -> bool:
    """True for a Pydantic v2 model class (checked without importing Pydantic)."""
    return isinstance(tp, type) and hasattr(tp, "model_json_schema") and hasattr(
        tp, "model_validate"
    )


def is_attrs_class(tp: Any) -> bool:
    """True for a class built by attrs (checked without importing attrs)."""
    return isinstance(tp, type) and hasattr(tp, "__attrs_attrs__")


def is_structured(tp: Any) -> bool:
    """True for the class kinds whose values can be validated: dataclass, attrs, Pydantic."""
    return (
        isinstance(tp, type) and dataclasses.is_dataclass(tp)
    ) or is_attrs_class(tp) or is_pydantic_model(tp)
