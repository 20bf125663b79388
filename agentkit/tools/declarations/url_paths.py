"""url_arg=: which of a tool's arguments hold URLs, resolved once when the tool is defined.

A path is an argument name, or a dotted path into a structured argument
(``"request.url"``) through dataclass, attrs, TypedDict and Pydantic fields, optional
or not, and through arrays of them (``"requests.url"`` names the URL of every item).
Each path becomes the tuple of JSON keys under which the model sends that value; a
Pydantic field that can be filled under its alias and its name gives one path per key,
so ``egress()`` checks whichever the model used.
"""

from __future__ import annotations

import collections.abc as cabc
import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any

from agentkit.core.contracts.errors import ToolDefinitionError
from agentkit.tools.declarations.adapt import is_attrs_class, is_pydantic_model

__all__ = ["resolve_url_paths"]

_WANTS = (
    "url_arg= takes an argument name, a dotted path such as 'request.url', or a tuple of them"
)
_NOT_A_STRUCTURE = "not a dataclass, TypedDict, attrs class or Pydantic model with fields"


def resolve_url_paths(
    tool_name: str, url_arg: Any, annotations: Mapping[str, Any]
) -> tuple[tuple[str, ...], ...]:
    """The JSON key paths ``url_arg`` names, checked against the parameters'
    annotations; raises :class:`ToolDefinitionError` for a path that leads nowhere."""
    if url_arg is None:
        return ()
    specs = (url_arg,) if isinstance(url_arg, str) else url_arg
    if not isinstance(specs, list | tuple) or not specs or not all(
        isinstance(s, str) and s and all(s.split(".")) for s in specs
    ):
        raise ToolDefinitionError(f"tool {tool_name!r}: {_WANTS}; got {url_arg!r}")
    paths: list[tuple[str, ...]] = []
    for spec in specs:
        for path in _resolve(tool_name, spec, annotations):
            if path not in paths:
                paths.append(path)
    return tuple(paths)


def _resolve(
    tool_name: str, spec: str, annotations: Mapping[str, Any]
) -> list[tuple[str, ...]]:
    first, *rest = spec.split(".")
    if first not in annotations:
        raise ToolDefinitionError(
            f"tool {tool_name!r}: url_arg={spec!r} names no parameter; "
            f"parameters: {list(annotations)}"
        )
    paths: list[tuple[str, ...]] = [(first,)]
    annotation = annotations[first]
    where = first
    for segment in rest:
        fields = _fields(annotation)
        if fields is None:
            raise ToolDefinitionError(
                f"tool {tool_name!r}: url_arg={spec!r} goes into {where!r}, which is "
                f"{_type_name(annotation)}, {_NOT_A_STRUCTURE}"
            )
        found = next((f for f in fields if segment == f[0] or segment in f[1]), None)
        if found is None:
            raise ToolDefinitionError(
                f"tool {tool_name!r}: url_arg={spec!r} names no field {segment!r} of "
                f"{_type_name(annotation)}; its fields: {[f[0] for f in fields]}"
            )
        name, keys, field_annotation = found
        if not keys:
            raise ToolDefinitionError(
                f"tool {tool_name!r}: url_arg={spec!r}: field {name!r} of "
                f"{_type_name(annotation)} is filled through an AliasPath or AliasChoices, "
                "which egress() cannot follow; give it a plain alias"
            )
        annotation = field_annotation
        paths = [(*path, key) for path in paths for key in keys]
        where = f"{where}.{segment}"
    return paths


_ARRAYS = (
    list,
    tuple,
    set,
    frozenset,
    cabc.Sequence,
    cabc.MutableSequence,
    cabc.Iterable,
    cabc.Collection,
    cabc.Set,
    cabc.MutableSet,
)
_Field = tuple[str, tuple[str, ...], Any]  # name, the JSON keys that fill it, annotation


def _fields(annotation: Any) -> list[_Field] | None:
    """The fields of a structured annotation (of each structure in a union), or None."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _fields(typing.get_args(annotation)[0])
    if origin in _ARRAYS and len(typing.get_args(annotation)) >= 1:
        args = typing.get_args(annotation)
        if origin is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            return _fields(typing.Union[args])  # noqa: UP007 - a runtime union of the items
        return _fields(args[0])  # a path through an array reaches into each item
    if origin is typing.Union or origin is types.UnionType:
        found: list[_Field] = []
        for member in typing.get_args(annotation):
            for field in _fields(member) or ():
                if field[0] not in [f[0] for f in found]:
                    found.append(field)
        return found or None
    if not isinstance(annotation, type):
        return None
    hints = _hints(annotation)
    if dataclasses.is_dataclass(annotation):
        return [
            (f.name, (f.name,), hints.get(f.name, Any))
            for f in dataclasses.fields(annotation)
            if f.init
        ]
    if typing.is_typeddict(annotation):
        return [(name, (name,), hint) for name, hint in hints.items()]
    if is_pydantic_model(annotation):
        return _pydantic_fields(annotation)
    if is_attrs_class(annotation):
        return [
            (a.name, (a.name,), hints.get(a.name, a.type if a.type is not None else Any))
            for a in annotation.__attrs_attrs__  # type: ignore[attr-defined]
            if a.init
        ]
    return None


def _pydantic_fields(model: Any) -> list[_Field]:
    config = getattr(model, "model_config", {})
    by_name = bool(config.get("populate_by_name") or config.get("validate_by_name"))
    fields: list[_Field] = []
    for name, info in model.model_fields.items():
        alias = info.validation_alias if info.validation_alias is not None else info.alias
        if alias is None:
            keys: tuple[str, ...] = (name,)
        elif isinstance(alias, str):
            keys = (alias, name) if by_name and alias != name else (alias,)
        else:  # AliasPath / AliasChoices: keys egress() could not all follow
            keys = ()
        fields.append((name, keys, info.annotation))
    return fields


def _hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls, include_extras=True)
    except Exception:
        return dict(getattr(cls, "__annotations__", {}))


def _type_name(annotation: Any) -> str:
    return getattr(annotation, "__name__", None) or str(annotation)
