"""Rich annotations arrive as the type annotated; containers are rebuilt to match."""

import collections.abc as cabc
import dataclasses
import enum
from typing import Any, Literal, TypedDict

import attrs
import pydantic
import pytest

from agentkit.core.runtime import RunContext
from agentkit.tools import FrozenDict, FunctionTool, ToolArgumentError, tool


class Unit(enum.Enum):
    C = "celsius"
    F = "fahrenheit"


class Level(enum.Enum):
    LOW = 1
    HIGH = 2


@dataclasses.dataclass
class Filter:
    field: str
    unit: Unit
    limit: int = 10


@attrs.define
class Window:
    start: int
    unit: Unit = Unit.C


class Query(pydantic.BaseModel):
    text: str
    limit: int = 5


class Point(TypedDict):
    x: int
    unit: Unit


def echo_tool(annotation: Any) -> FunctionTool:
    """A tool that returns its single argument ``x``, annotated ``annotation``."""

    def echo(x):  # type: ignore[no-untyped-def]
        """Return the single argument exactly as the tool body received it."""
        return x

    echo.__annotations__ = {"x": annotation}
    return FunctionTool.from_callable(echo)


async def received(annotation: Any, value: Any, ctx: RunContext) -> Any:
    return await echo_tool(annotation).run({"x": value}, ctx)


async def rejected(annotation: Any, value: Any, ctx: RunContext) -> str:
    with pytest.raises(ToolArgumentError) as caught:
        await echo_tool(annotation).run({"x": value}, ctx)
    ((name, reason),) = caught.value.invalid
    assert name == "x"
    return reason


# -- Enum and Literal ----------------------------------------------------------------


async def test_enum_value_arrives_as_the_member(ctx: RunContext) -> None:
    @tool(side_effecting=False)
    async def weather(city: str, unit: Unit) -> str:
        """Report the weather for a city in the requested unit of measure."""
        return f"{type(unit).__name__}={unit!r}"

    assert await weather.run({"city": "Lisbon", "unit": "celsius"}, None) == (
        "Unit=<Unit.C: 'celsius'>"
    )


async def test_illegal_enum_value_is_invalid_with_the_pages_reason(ctx: RunContext) -> None:
    ran: list[str] = []

    @tool(side_effecting=False)
    async def weather(city: str, unit: Unit) -> str:
        """Report the weather for a city in the requested unit of measure."""
        ran.append(city)
        return "ok"

    with pytest.raises(ToolArgumentError) as caught:
        await weather.run({"city": "Lisbon", "unit": "kelvin"}, None)

    assert caught.value.invalid == (
        ("unit", "'kelvin' is not a valid Unit; expected one of ['celsius', 'fahrenheit']"),
    )
    assert ran == []


async def test_enum_value_of_the_wrong_json_type_is_invalid(ctx: RunContext) -> None:
    assert await received(Level, 2, ctx) is Level.HIGH
    assert await rejected(Level, "2", ctx) == "'2' is not a valid Level; expected one of [1, 2]"
    assert await rejected(Level, True, ctx) == "True is not a valid Level; expected one of [1, 2]"


async def test_enum_member_name_is_not_a_value(ctx: RunContext) -> None:
    assert await rejected(Unit, "C", ctx) == (
        "'C' is not a valid Unit; expected one of ['celsius', 'fahrenheit']"
    )


async def test_literal_value_is_checked(ctx: RunContext) -> None:
    mode = Literal["hourly", "daily"]

    assert await received(mode, "daily", ctx) == "daily"
    assert await rejected(mode, "weekly", ctx) == (
        "'weekly' is not a valid option; expected one of ['hourly', 'daily']"
    )


# -- structured parameters -----------------------------------------------------------


async def test_dataclass_parameter_arrives_as_an_instance(ctx: RunContext) -> None:
    value = await received(Filter, {"field": "price", "unit": "fahrenheit"}, ctx)

    assert value == Filter(field="price", unit=Unit.F, limit=10)
    assert type(value) is Filter


async def test_attrs_parameter_arrives_as_an_instance(ctx: RunContext) -> None:
    value = await received(Window, {"start": 3, "unit": "fahrenheit"}, ctx)

    assert value == Window(start=3, unit=Unit.F)
    assert type(value) is Window


async def test_pydantic_parameter_arrives_as_a_model(ctx: RunContext) -> None:
    value = await received(Query, {"text": "boots"}, ctx)

    assert value == Query(text="boots", limit=5)
    assert type(value) is Query


async def test_typeddict_parameter_arrives_as_a_dict_with_coerced_values(
    ctx: RunContext,
) -> None:
    value = await received(Point, {"x": 1, "unit": "celsius"}, ctx)

    assert value == {"x": 1, "unit": Unit.C}
    assert isinstance(value, dict)


async def test_struct_field_problems_are_all_reported(ctx: RunContext) -> None:
    assert await rejected(Filter, {"field": 3, "colour": "red"}, ctx) == (
        "field 'field': expected a string, got integer 3; missing field(s) ['unit']; "
        "unknown field(s) ['colour']; Filter has ['field', 'unit', 'limit']"
    )
    assert await rejected(Point, {"x": "1", "unit": "kelvin"}, ctx) == (
        "field 'x': expected an integer, got string '1'; field 'unit': 'kelvin' is not a "
        "valid Unit; expected one of ['celsius', 'fahrenheit']"
    )


async def test_struct_given_a_non_object_is_invalid(ctx: RunContext) -> None:
    assert await rejected(Filter, "price", ctx) == (
        "expected an object for Filter, got string 'price'"
    )


async def test_pydantic_validation_failure_is_invalid(ctx: RunContext) -> None:
    assert await rejected(Query, {"limit": 5}, ctx) == ("not a valid Query: text: Field required")


# -- containers ----------------------------------------------------------------------


async def test_list_of_enum_arrives_as_a_list_of_members(ctx: RunContext) -> None:
    value = await received(list[Unit], ["celsius", "fahrenheit"], ctx)

    assert value == [Unit.C, Unit.F]
    assert type(value) is list


async def test_set_parameter_receives_a_set(ctx: RunContext) -> None:
    value = await received(set[Unit], ["celsius", "celsius"], ctx)

    assert value == {Unit.C}
    assert type(value) is set


async def test_variadic_tuple_parameter_receives_a_tuple(ctx: RunContext) -> None:
    value = await received(tuple[int, ...], [1, 2, 3], ctx)

    assert value == (1, 2, 3)
    assert type(value) is tuple


async def test_fixed_tuple_parameter_checks_each_position(ctx: RunContext) -> None:
    assert await received(tuple[int, Unit], [1, "celsius"], ctx) == (1, Unit.C)
    assert await rejected(tuple[int, Unit], [1], ctx) == "expected an array of 2 items, got 1"
    assert await rejected(tuple[int, Unit], ["1", "celsius"], ctx) == (
        "item 0: expected an integer, got string '1'"
    )


async def test_dict_of_str_parameter_receives_a_dict_of_coerced_values(
    ctx: RunContext,
) -> None:
    value = await received(dict[str, Unit], {"home": "celsius", "away": "fahrenheit"}, ctx)

    assert value == {"home": Unit.C, "away": Unit.F}
    assert isinstance(value, dict)


@pytest.mark.parametrize(
    "annotation",
    [cabc.Sequence[int], cabc.Iterable[int], cabc.Collection[int], cabc.Set[int]],
    ids=["Sequence", "Iterable", "Collection", "Set"],
)
async def test_abstract_collections_receive_an_instance_of_that_abc(
    annotation: Any, ctx: RunContext
) -> None:
    value = await received(annotation, [3, 1, 2], ctx)

    assert isinstance(value, annotation.__origin__)
    assert sorted(value) == [1, 2, 3]


async def test_list_of_dataclasses_is_rebuilt_element_by_element(ctx: RunContext) -> None:
    value = await received(list[Filter], [{"field": "a", "unit": "celsius", "limit": 1}], ctx)

    assert value == [Filter(field="a", unit=Unit.C, limit=1)]


async def test_bad_element_names_its_index(ctx: RunContext) -> None:
    assert await rejected(list[Unit], ["celsius", "kelvin"], ctx) == (
        "item 1: 'kelvin' is not a valid Unit; expected one of ['celsius', 'fahrenheit']"
    )


async def test_bad_mapping_value_names_its_key(ctx: RunContext) -> None:
    assert await rejected(dict[str, int], {"a": 1, "b": "2"}, ctx) == (
        "key 'b': expected an integer, got string '2'"
    )


async def test_a_string_is_not_an_array(ctx: RunContext) -> None:
    assert await rejected(list[str], "abc", ctx) == "expected an array, got string 'abc'"
    assert await rejected(dict[str, int], ["a"], ctx) == "expected an object, got array"


# -- unions --------------------------------------------------------------------------


async def test_optional_accepts_null_and_the_type(ctx: RunContext) -> None:
    assert await received(Unit | None, None, ctx) is None
    assert await received(Unit | None, "celsius", ctx) is Unit.C
    assert await rejected(int | None, "3", ctx) == "expected an integer, got string '3'"


async def test_union_takes_the_first_member_that_fits(ctx: RunContext) -> None:
    assert await received(int | Unit, 4, ctx) == 4
    assert await received(int | Unit, "celsius", ctx) is Unit.C
    assert await rejected(int | Unit, True, ctx) == "expected int | Unit, got boolean true"


async def test_unannotated_and_any_parameters_pass_any_json_value(ctx: RunContext) -> None:
    assert await received(Any, 3, ctx) == 3

    def raw(x):  # type: ignore[no-untyped-def]
        """Return the single argument exactly as the tool body received it."""
        return x

    assert await FunctionTool.from_callable(raw).run({"x": [1, "a"]}, ctx) == (1, "a")
    assert isinstance(await received(dict, {"a": 1}, ctx), FrozenDict)
