"""The JSON Schema a tool advertises comes from its signature, row by row of the table."""

import collections.abc as cabc
import dataclasses
import datetime
import enum
import json
import typing
from typing import Annotated, Any, Literal, NotRequired, Optional, Required, TypedDict, Union

import attrs
import pydantic
import pytest

from agentkit.tools import FunctionTool, ToolDefinitionError, tool
from agentkit.tools.declarations.adapt import adapt


def schema_of(annotation: Any) -> dict[str, Any]:
    """The schema fragment a single parameter annotated ``annotation`` is advertised with."""

    def probe(x):  # type: ignore[no-untyped-def]
        """A probe tool whose only parameter carries the annotation under test."""

    probe.__annotations__ = {"x": annotation}
    return dict(FunctionTool.from_callable(probe).schema.parameters["properties"]["x"])


def assert_exact(actual: Any, expected: Any) -> None:
    """Equal, key order included."""
    assert json.dumps(actual) == json.dumps(expected)


class Unit(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


class Priority(enum.Enum):
    LOW = 1
    HIGH = 2


class Mixed(enum.Enum):
    ONE = 1
    TWO = "two"


class Point(TypedDict):
    x: int
    tags: list[str]


class PartlyOptional(TypedDict):
    required_count: int
    optional_count: NotRequired[int]


class AllOptional(TypedDict, total=False):
    limit: int
    ids: Required[list[int]]


@dataclasses.dataclass
class Filter:
    field: str
    limit: int = 10


@attrs.define
class Window:
    start: int
    unit: Unit = Unit.CELSIUS


class Query(pydantic.BaseModel):
    text: str
    limit: int = 5


INTEGER = {"type": "integer"}
INT_ARRAY = {"type": "array", "items": INTEGER}

TABLE = [
    pytest.param(str, {"type": "string"}, id="str"),
    pytest.param(int, {"type": "integer"}, id="int"),
    pytest.param(float, {"type": "number"}, id="float"),
    pytest.param(bool, {"type": "boolean"}, id="bool"),
    pytest.param(list[int], INT_ARRAY, id="list[X]"),
    pytest.param(set[int], INT_ARRAY, id="set[X]"),
    pytest.param(tuple[int, ...], INT_ARRAY, id="tuple[X, ...]"),
    pytest.param(cabc.Sequence[int], INT_ARRAY, id="abc.Sequence[X]"),
    pytest.param(cabc.Iterable[int], INT_ARRAY, id="abc.Iterable[X]"),
    pytest.param(cabc.Collection[int], INT_ARRAY, id="abc.Collection[X]"),
    pytest.param(cabc.Set[int], INT_ARRAY, id="abc.Set[X]"),
    pytest.param(typing.Sequence[int], INT_ARRAY, id="typing.Sequence[X]"),
    pytest.param(typing.Iterable[int], INT_ARRAY, id="typing.Iterable[X]"),
    pytest.param(typing.Collection[int], INT_ARRAY, id="typing.Collection[X]"),
    pytest.param(typing.AbstractSet[int], INT_ARRAY, id="typing.AbstractSet[X]"),
    pytest.param(typing.Set[int], INT_ARRAY, id="typing.Set[X]"),  # noqa: UP006
    pytest.param(typing.List[int], INT_ARRAY, id="typing.List[X]"),  # noqa: UP006
    pytest.param(typing.Tuple[int, ...], INT_ARRAY, id="typing.Tuple[X, ...]"),  # noqa: UP006
    pytest.param(list, {"type": "array"}, id="bare list"),
    pytest.param(tuple, {"type": "array"}, id="bare tuple"),
    pytest.param(tuple[int, str], {"type": "array"}, id="tuple[X, Y]"),
    pytest.param(
        dict[str, int], {"type": "object", "additionalProperties": INTEGER}, id="dict[str, X]"
    ),
    pytest.param(
        cabc.Mapping[str, int],
        {"type": "object", "additionalProperties": INTEGER},
        id="abc.Mapping[str, X]",
    ),
    pytest.param(
        typing.Mapping[str, int],
        {"type": "object", "additionalProperties": INTEGER},
        id="typing.Mapping[str, X]",
    ),
    pytest.param(
        Point,
        {
            "type": "object",
            "properties": {"x": INTEGER, "tags": {"type": "array", "items": {"type": "string"}}},
            "required": ["x", "tags"],
        },
        id="TypedDict",
    ),
    pytest.param(Literal["a", "b"], {"enum": ["a", "b"], "type": "string"}, id="Literal[str, str]"),
    pytest.param(Unit, {"enum": ["celsius", "fahrenheit"], "type": "string"}, id="str Enum"),
    pytest.param(Priority, {"enum": [1, 2], "type": "integer"}, id="int Enum"),
    pytest.param(Mixed, {"enum": [1, "two"]}, id="mixed Enum is untyped"),
    pytest.param(
        Optional[int],  # noqa: UP045
        {"anyOf": [INTEGER, {"type": "null"}]},
        id="Optional[X]",
    ),
    pytest.param(int | None, {"anyOf": [INTEGER, {"type": "null"}]}, id="X | None"),
    pytest.param(None | int, {"anyOf": [INTEGER, {"type": "null"}]}, id="None | X"),
    pytest.param(int | str, {"anyOf": [INTEGER, {"type": "string"}]}, id="X | Y"),
    pytest.param(
        Union[int, str, None],  # noqa: UP007
        {"anyOf": [INTEGER, {"type": "string"}, {"type": "null"}]},
        id="Union[X, Y, None]",
    ),
    pytest.param(
        Annotated[int, "how many days ahead"],
        {"type": "integer", "description": "how many days ahead"},
        id="Annotated[X, text]",
    ),
    pytest.param(Any, {"type": "string"}, id="Any"),
    pytest.param(bytes, {"type": "string"}, id="bytes"),
    pytest.param(datetime.date, {"type": "string"}, id="a non-JSON class"),
    pytest.param(complex, {"type": "string"}, id="complex"),
    pytest.param(cabc.Callable[[int], int], {"type": "string"}, id="a generic alias"),
]


@pytest.mark.parametrize(("annotation", "expected"), TABLE)
def test_annotation_maps_to_the_documented_schema_fragment(
    annotation: Any, expected: dict[str, Any]
) -> None:
    assert_exact(schema_of(annotation), expected)


def test_unannotated_parameter_is_advertised_as_a_string() -> None:
    def probe(x):  # type: ignore[no-untyped-def]
        """A probe tool whose only parameter carries no annotation."""

    assert_exact(
        FunctionTool.from_callable(probe).schema.parameters,
        {"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]},
    )


def test_typeddict_required_and_not_required_keys_keep_their_types() -> None:
    assert_exact(
        schema_of(PartlyOptional),
        {
            "type": "object",
            "properties": {"required_count": INTEGER, "optional_count": INTEGER},
            "required": ["required_count"],
        },
    )
    assert_exact(
        schema_of(AllOptional),
        {
            "type": "object",
            "properties": {"limit": INTEGER, "ids": INT_ARRAY},
            "required": ["ids"],
        },
    )


@pytest.mark.parametrize("cls", [Filter, Window, Query, Point])
def test_structured_parameter_uses_the_same_schema_as_adapt(cls: type) -> None:
    assert_exact(schema_of(cls), adapt(cls).schema)


def test_dataclass_parameter_gets_its_real_object_schema() -> None:
    assert_exact(
        schema_of(Filter),
        {
            "type": "object",
            "properties": {"field": {"type": "string"}, "limit": INTEGER},
            "required": ["field"],
        },
    )


def test_attrs_parameter_gets_its_real_object_schema() -> None:
    assert_exact(
        schema_of(Window),
        {
            "type": "object",
            "properties": {
                "start": INTEGER,
                "unit": {"enum": ["celsius", "fahrenheit"], "type": "string"},
            },
            "required": ["start"],
        },
    )


def test_pydantic_parameter_gets_the_models_json_schema() -> None:
    assert_exact(schema_of(Query), Query.model_json_schema())


def test_annotated_description_decorates_a_rich_type() -> None:
    assert_exact(
        schema_of(Annotated[Optional[Unit], "the unit to report in"]),  # noqa: UP045
        {
            "anyOf": [{"enum": ["celsius", "fahrenheit"], "type": "string"}, {"type": "null"}],
            "description": "the unit to report in",
        },
    )


def test_forecast_example_schema_is_exact_key_order_included() -> None:
    @tool(side_effecting=False, idempotent=True)
    def forecast(
        city: str,
        unit: Unit,
        days: int = 3,
        mode: Literal["hourly", "daily"] = "daily",
    ) -> str:
        """Return a short weather forecast for a city over the next few days."""
        return f"{city}: mild for {days} days ({unit}, {mode})"

    assert json.dumps(forecast.schema.parameters) == (
        '{"type": "object", "properties": {"city": {"type": "string"}, "unit": {"enum": '
        '["celsius", "fahrenheit"], "type": "string"}, "days": {"type": "integer"}, '
        '"mode": {"enum": ["hourly", "daily"], "type": "string"}}, "required": '
        '["city", "unit"]}'
    )


def test_smallest_example_schema_and_tool_schema_fields() -> None:
    @tool(side_effecting=False, idempotent=True)
    def city_population(city: str) -> int:
        """Look up the most recent census population for a named city."""
        return 0

    schema = city_population.schema
    assert schema.name == "city_population"
    assert schema.description == "Look up the most recent census population for a named city."
    assert list(schema.parameters.items()) == [
        ("type", "object"),
        ("properties", {"city": {"type": "string"}}),
        ("required", ["city"]),
    ]


def test_required_lists_exactly_the_parameters_without_a_default_in_order() -> None:
    @tool(side_effecting=False)
    def search(query: str, limit: int = 10, *, region: str, strict: bool = False) -> str:
        """Search the catalogue for a query within one sales region."""
        return "ok"

    assert search.schema.parameters["required"] == ["query", "region"]
    assert list(search.schema.parameters["properties"]) == ["query", "limit", "region", "strict"]


def test_optional_annotation_without_default_is_still_required() -> None:
    @tool(side_effecting=False)
    def lookup(code: int | None) -> str:
        """Look up an airport by its numeric code, or list all when null."""
        return "ok"

    assert lookup.schema.parameters["required"] == ["code"]


def test_tool_without_parameters_advertises_an_empty_object() -> None:
    @tool(side_effecting=False)
    def now() -> str:
        """Return the current UTC time as an ISO-8601 timestamp string."""
        return "2024-01-01T00:00:00Z"

    assert_exact(now.schema.parameters, {"type": "object", "properties": {}, "required": []})


def test_name_override_is_the_advertised_name() -> None:
    @tool(side_effecting=False, name="lookup-city")
    def lookup(city: str) -> str:
        """Look up the most recent census population for a named city."""
        return city

    assert lookup.name == "lookup-city"
    assert lookup.schema.name == "lookup-city"


def test_each_tool_gets_its_own_copy_of_a_shared_schema_fragment() -> None:
    @tool(side_effecting=False)
    def first(unit: Unit) -> str:
        """Report the weather in the first of two units of measure."""
        return "ok"

    @tool(side_effecting=False)
    def second(unit: Unit) -> str:
        """Report the weather in the second of two units of measure."""
        return "ok"

    first.schema.parameters["properties"]["unit"]["enum"].append("kelvin")

    assert second.schema.parameters["properties"]["unit"]["enum"] == ["celsius", "fahrenheit"]
    assert adapt(Unit).schema["enum"] == ["celsius", "fahrenheit"]


class Inner(pydantic.BaseModel):
    amount: int


class Outer(pydantic.BaseModel):
    inner: Inner
    others: list[Inner] = []


def resolve(root: Any, ref: str) -> Any:
    assert ref.startswith("#/"), ref
    node = root
    for part in ref[2:].split("/"):
        assert part in node, f"{ref} does not resolve from the root of the tool schema"
        node = node[part]
    return node


def refs_in(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if "$ref" in node else []
        return found + [r for value in node.values() for r in refs_in(value)]
    if isinstance(node, list):
        return [r for value in node for r in refs_in(value)]
    return []


def test_nested_pydantic_references_resolve_from_the_tool_schema_root() -> None:
    @tool(side_effecting=False)
    def settle(first: Outer, rest: list[Outer] | None = None) -> str:
        """Settle an invoice made of nested line items against the ledger."""
        return "ok"

    parameters = json.loads(json.dumps(settle.schema.parameters))

    assert refs_in(parameters) != []
    for ref in refs_in(parameters):
        assert resolve(parameters, ref) == Inner.model_json_schema()
    assert parameters["properties"]["first"] == adapt(Outer).schema
    assert list(parameters) == ["type", "properties", "required", "$defs"]


def test_clashing_nested_definitions_are_refused() -> None:
    def models(field: str) -> type[pydantic.BaseModel]:
        line = pydantic.create_model("Line", **{field: (int, ...)})
        return pydantic.create_model(f"Invoice_{field}", line=(line, ...))

    first, second = models("amount"), models("quantity")

    def settle(a, b):  # type: ignore[no-untyped-def]
        """Settle two invoices whose line models share one name."""

    settle.__annotations__ = {"a": first, "b": second}

    with pytest.raises(ToolDefinitionError) as caught:
        tool(side_effecting=False)(settle)

    assert str(caught.value) == (
        "tool 'settle': two parameters define different JSON Schema definitions named 'Line'; "
        "rename one of the models"
    )
