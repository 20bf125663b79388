"""adapt(): one annotation in, its JSON Schema and its coercer out.

Tool parameters and ``Agent(output=...)`` both go through here, so what the model is
told a value looks like and what the code accepts as that value are derived from the
same annotation and cannot drift apart.

Coercion rebuilds containers to the annotated type, choosing the frozen form wherever
the annotation admits one (``Sequence[X]`` gives a tuple, ``dict[str, X]`` a
:class:`FrozenDict`); only ``list``, ``set`` and user classes are built mutable,
because the annotation asks for exactly that type. Primitives are never converted:
``"3"`` for an ``int`` is an error, not a 3. The one widening is JSON's: an integer is
accepted for ``float``.
"""

from __future__ import annotations

import collections.abc as cabc
import dataclasses
import enum
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agentkit.core.contracts._quote import cut, quote, quote_names
from agentkit.core.contracts.frozen import FrozenDict, freeze, thaw
from agentkit.tools.declarations.adapter import (
    JSON_TYPE_NAMES,
    Adapter,
    Invalid,
    describe_value,
    fresh_schema,
    is_attrs_class,
    is_pydantic_model,
    is_structured,
)

__all__ = [
    "Adapter",
    "Invalid",
    "adapt",
    "describe_value",
    "fresh_schema",
    "is_attrs_class",
    "is_pydantic_model",
    "is_structured",
    "thaw",
]


# -- primitives ---------------------------------------------------------------------


def _expect(kind: str) -> Callable[[Any], Invalid]:
    def fail(value: Any) -> Invalid:
        return Invalid(f"expected {kind}, got {describe_value(value)}")

    return fail


def _coerce_str(value: Any) -> Any:
    if isinstance(value, str):
        return value
    raise _expect("a string")(value)


def _coerce_int(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise _expect("an integer")(value)


def _coerce_float(value: Any) -> Any:
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:  # an integer past 1.8e308
            raise _expect("a number a float can hold (at most about 1.8e308)")(value) from None
    raise _expect("a number")(value)


def _coerce_bool(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    raise _expect("a boolean")(value)


def _coerce_none(value: Any) -> Any:
    if value is None:
        return None
    raise _expect("null")(value)


_PRIMITIVES: dict[Any, Adapter] = {
    str: Adapter({"type": "string"}, _coerce_str, "str"),
    int: Adapter({"type": "integer"}, _coerce_int, "int"),
    float: Adapter({"type": "number"}, _coerce_float, "float"),
    bool: Adapter({"type": "boolean"}, _coerce_bool, "bool"),
    type(None): Adapter({"type": "null"}, _coerce_none, "None"),
}

_ANYTHING = Adapter({"type": "string"}, freeze, "Any")


# -- containers ---------------------------------------------------------------------

# origin -> (type built by coercion, name). Abstract read-only origins get frozen forms.
_ARRAY_ORIGINS: dict[Any, type] = {
    list: list,
    set: set,
    frozenset: frozenset,
    tuple: tuple,
    cabc.Sequence: tuple,
    cabc.Iterable: tuple,
    cabc.Collection: tuple,
    cabc.MutableSequence: list,
    cabc.Set: frozenset,
    cabc.MutableSet: set,
}
_MAPPING_ORIGINS: dict[Any, type] = {
    dict: FrozenDict,
    cabc.Mapping: FrozenDict,
    cabc.MutableMapping: dict,
}


def _is_array_input(value: Any) -> bool:
    return isinstance(value, list | tuple | set | frozenset)


def _array(build: type, item: Adapter | None, name: str) -> Adapter:
    schema: dict[str, Any] = {"type": "array"}
    if item is not None:
        schema["items"] = item.schema
        item_coerce = item.coerce
    else:
        item_coerce = freeze

    def coerce(value: Any) -> Any:
        if not _is_array_input(value):
            raise _expect("an array")(value)
        out = []
        for index, element in enumerate(value):
            try:
                out.append(item_coerce(element))
            except Invalid as exc:
                raise Invalid(f"item {index}: {exc.reason}") from None
        return build(out)

    return Adapter(schema, coerce, name)


def _fixed_tuple(items: tuple[Adapter, ...], name: str) -> Adapter:
    def coerce(value: Any) -> Any:
        if not isinstance(value, list | tuple):
            raise _expect(f"an array of {len(items)} items")(value)
        if len(value) != len(items):
            raise Invalid(f"expected an array of {len(items)} items, got {len(value)}")
        out = []
        for index, (adapter, element) in enumerate(zip(items, value, strict=True)):
            try:
                out.append(adapter.coerce(element))
            except Invalid as exc:
                raise Invalid(f"item {index}: {exc.reason}") from None
        return tuple(out)

    return Adapter({"type": "array"}, coerce, name)


def _mapping(build: type, value_adapter: Adapter | None, name: str) -> Adapter:
    schema: dict[str, Any] = {"type": "object"}
    if value_adapter is not None:
        schema["additionalProperties"] = value_adapter.schema
        value_coerce = value_adapter.coerce
    else:
        value_coerce = freeze

    def coerce(value: Any) -> Any:
        if not isinstance(value, Mapping):
            raise _expect("an object")(value)
        out = {}
        for key, element in value.items():
            if not isinstance(key, str):
                raise Invalid(f"object keys must be strings, got {describe_value(key)}")
            try:
                out[key] = value_coerce(element)
            except Invalid as exc:
                raise Invalid(f"key {quote(key)}: {exc.reason}") from None
        return build(out)

    return Adapter(schema, coerce, name)


# -- choices ------------------------------------------------------------------------


def _homogeneous_type(values: list[Any]) -> str | None:
    kinds = {JSON_TYPE_NAMES.get(type(v)) for v in values}
    if len(kinds) == 1:
        (kind,) = kinds
        return kind
    return None


def _literal(values: tuple[Any, ...]) -> Adapter:
    enum_values = list(values)
    schema: dict[str, Any] = {"enum": enum_values}
    kind = _homogeneous_type(enum_values)
    if kind is not None:
        schema["type"] = kind

    def coerce(value: Any) -> Any:
        for allowed in values:
            if value == allowed and type(value) is type(allowed):
                return allowed
        raise Invalid(f"{quote(value)} is not a valid option; expected one of {enum_values}")

    return Adapter(schema, coerce, f"Literal{enum_values}")


def _enum(cls: type[enum.Enum]) -> Adapter:
    members = list(cls)
    enum_values = [m.value for m in members]
    schema: dict[str, Any] = {"enum": enum_values}
    kind = _homogeneous_type(enum_values)
    if kind is not None:
        schema["type"] = kind

    def coerce(value: Any) -> Any:
        if isinstance(value, cls):
            return value
        for member in members:
            if member.value == value and type(member.value) is type(value):
                return member
        raise Invalid(
            f"{quote(value)} is not a valid {cls.__name__}; expected one of {enum_values}"
        )

    return Adapter(schema, coerce, cls.__name__)


def _union(members: tuple[Any, ...]) -> Adapter:
    nullable = type(None) in members
    options = [adapt(m) for m in members if m is not type(None)]
    schemas = [o.schema for o in options]
    if nullable:
        schemas.append({"type": "null"})
    names = [o.name for o in options] + (["None"] if nullable else [])
    name = " | ".join(names)

    def coerce(value: Any) -> Any:
        if value is None and nullable:
            return None
        reasons = []
        for option in options:
            try:
                return option.coerce(value)
            except Invalid as exc:
                reasons.append(exc.reason)
        if len(options) == 1 and value is not None:
            raise Invalid(reasons[0])
        raise Invalid(f"expected {name}, got {describe_value(value)}")

    return Adapter({"anyOf": schemas}, coerce, name)


# -- structures ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    key: str  # the keyword the constructor takes
    adapter: Adapter
    required: bool


def _struct(
    name: str,
    fields: list[_Field],
    build: Callable[..., Any],
    accepts: Callable[[Any], bool],
) -> Adapter:
    properties = {f.name: f.adapter.schema for f in fields}
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    required = [f.name for f in fields if f.required]
    if required:
        schema["required"] = required
    by_name = {f.name: f for f in fields}

    def coerce(value: Any) -> Any:
        if accepts(value):
            return value
        if not isinstance(value, Mapping):
            raise Invalid(f"expected an object for {name}, got {describe_value(value)}")
        kwargs: dict[str, Any] = {}
        problems = []
        unknown = [k for k in value if k not in by_name]
        for key, element in value.items():
            spec = by_name.get(key)
            if spec is None:
                continue
            try:
                kwargs[spec.key] = spec.adapter.coerce(element)
            except Invalid as exc:
                problems.append(f"field {key!r}: {exc.reason}")
        missing = [f.name for f in fields if f.required and f.name not in value]
        if missing:
            problems.append(f"missing field(s) {missing}")
        if unknown:
            problems.append(
                f"unknown field(s) {quote_names(unknown)}; {name} has {list(by_name)}"
            )
        if problems:
            raise Invalid("; ".join(problems))
        try:
            return build(**kwargs)
        except Exception as exc:
            raise Invalid(f"{name} rejected the value: {cut(str(exc), 300)}") from None

    return Adapter(schema, coerce, name, structured=True)


def _hints(cls: Any) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls, include_extras=True)
    except Exception:
        return dict(getattr(cls, "__annotations__", {}))


def _dataclass(cls: type) -> Adapter:
    hints = _hints(cls)
    fields = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        has_default = (
            f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
        )
        fields.append(_Field(f.name, f.name, adapt(hints.get(f.name, Any)), not has_default))
    return _struct(cls.__name__, fields, cls, lambda v: isinstance(v, cls))


def _attrs_class(cls: type) -> Adapter:
    import attrs  # an attrs class exists, so attrs is installed

    hints = _hints(cls)
    fields = []
    for a in attrs.fields(cls):
        if not a.init:
            continue
        key = getattr(a, "alias", None) or a.name.lstrip("_")
        annotation = hints.get(a.name, a.type if a.type is not None else Any)
        fields.append(_Field(a.name, key, adapt(annotation), a.default is attrs.NOTHING))
    return _struct(cls.__name__, fields, cls, lambda v: isinstance(v, cls))


def _typed_dict(cls: Any) -> Adapter:
    hints = _hints(cls)
    required_keys = getattr(cls, "__required_keys__", frozenset(hints))
    fields = [_Field(k, k, adapt(t), k in required_keys) for k, t in hints.items()]
    return _struct(cls.__name__, fields, FrozenDict, lambda v: False)


def _pydantic_model(cls: Any) -> Adapter:
    schema = cls.model_json_schema()

    def coerce(value: Any) -> Any:
        if isinstance(value, cls):
            return value
        try:
            return cls.model_validate(thaw(value))
        except ValueError as exc:
            errors = getattr(exc, "errors", None)
            if callable(errors):
                details = _pydantic_details(errors())
                raise Invalid(f"not a valid {cls.__name__}: {details}") from None
            raise Invalid(f"not a valid {cls.__name__}: {cut(str(exc), 300)}") from None

    return Adapter(schema, coerce, cls.__name__, structured=True)


def _pydantic_details(errors: list[Any]) -> str:
    details = [
        f"{cut('.'.join(str(p) for p in e.get('loc', ())), 100) or 'value'}: "
        f"{cut(str(e.get('msg')), 200)}"
        for e in errors[:5]
    ]
    if len(errors) > 5:
        details.append(f"... {len(errors) - 5} more")
    return "; ".join(details)


# -- dispatch -----------------------------------------------------------------------

_cache: dict[Any, Adapter] = {}
_building: set[Any] = set()


def adapt(annotation: Any) -> Adapter:
    """The JSON Schema and coercer for a Python annotation.

    Follows the Tools page's table: primitives, arrays, objects, TypedDict, Literal,
    Enum, Pydantic models, dataclasses, attrs classes, Optional and unions; anything
    else (or no annotation) is advertised as a string and passed through as it came.
    A JSON Schema (a mapping) is taken as it is and checked with
    :func:`~agentkit.tools.declarations.jsonschema.schema_errors`.
    """
    try:
        cached = _cache.get(annotation)
    except TypeError:  # a JSON Schema dict, or unhashable metadata inside Annotated[...]
        return _build(annotation)
    if cached is not None:
        return cached
    if annotation in _building:
        # A self-referencing structure: advertise an object, coerce once it is built.
        return Adapter({"type": "object"}, lambda v: adapt(annotation).coerce(v), str(annotation))
    _building.add(annotation)
    try:
        adapter = _build(annotation)
    finally:
        _building.discard(annotation)
    _cache[annotation] = adapter
    return adapter


def _json_schema(schema: Mapping[str, Any]) -> Adapter:
    from agentkit.tools.declarations.jsonschema import schema_errors

    def coerce(value: Any) -> Any:
        errors = schema_errors(value, schema)
        if errors:
            raise Invalid("; ".join(errors))
        return freeze(value)

    return Adapter(schema, coerce, str(schema.get("title", "object")), structured=True)


def _build(tp: Any) -> Adapter:
    if isinstance(tp, Mapping):
        return _json_schema(tp)
    if tp is Any or tp is typing.Any or tp is object:
        return _ANYTHING
    primitive = _PRIMITIVES.get(tp)
    if primitive is not None:
        return primitive
    if tp is None:
        return _PRIMITIVES[type(None)]
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Annotated:
        inner = adapt(args[0])
        notes = [m for m in args[1:] if isinstance(m, str)]
        if not notes:
            return inner
        schema = dict(inner.schema)
        schema["description"] = " ".join(notes)
        return Adapter(schema, inner.coerce, inner.name, inner.structured)
    if origin is typing.Required or origin is typing.NotRequired:
        # A TypedDict key's markers: they say whether the key must be present (read
        # from __required_keys__), and the value's type is the one inside.
        return adapt(args[0])
    if origin is typing.Union or origin is types.UnionType:
        return _union(args)
    if origin is typing.Literal:
        return _literal(args)
    if origin in _ARRAY_ORIGINS:
        build = _ARRAY_ORIGINS[origin]
        if origin is tuple:
            if len(args) == 2 and args[1] is Ellipsis:
                return _array(tuple, adapt(args[0]), f"tuple[{adapt(args[0]).name}, ...]")
            if args:
                return _fixed_tuple(tuple(adapt(a) for a in args), str(tp))
            return _array(tuple, None, "tuple")
        item = adapt(args[0]) if args else None
        label = f"{getattr(origin, '__name__', origin)}[{item.name if item else ''}]"
        return _array(build, item, label)
    if origin in _MAPPING_ORIGINS:
        value_adapter = adapt(args[1]) if len(args) == 2 and args[0] is str else None
        return _mapping(_MAPPING_ORIGINS[origin], value_adapter, str(tp))
    if origin is not None:
        return _ANYTHING
    if tp in _ARRAY_ORIGINS:
        return _array(_ARRAY_ORIGINS[tp], None, getattr(tp, "__name__", str(tp)))
    if tp in _MAPPING_ORIGINS:
        return _mapping(_MAPPING_ORIGINS[tp], None, getattr(tp, "__name__", str(tp)))
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _enum(tp)
    if typing.is_typeddict(tp):
        return _typed_dict(tp)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _dataclass(tp)
    if is_pydantic_model(tp):
        return _pydantic_model(tp)
    if is_attrs_class(tp):
        return _attrs_class(tp)
    return _ANYTHING
