"""ToolRegistry is lookup; Tool is the Protocol everything registered satisfies."""

from collections.abc import Mapping
from typing import Any

import pytest

from agentkit.core.contracts.types import ToolRequest, ToolSchema
from agentkit.core.runtime import RunContext
from agentkit.tools import (
    FunctionTool,
    Tool,
    ToolDefinitionError,
    ToolNotFoundError,
    ToolRegistry,
    tool,
)


@tool(side_effecting=False)
def forecast(city: str) -> str:
    """Return a short weather forecast for a city over the next few days."""
    return "mild"


@tool(side_effecting=True, requires_approval=True)
def refund(order_id: str, amount_usd: float) -> str:
    """Issue a refund against a customer order and return the confirmation id."""
    return f"refunded {amount_usd} on {order_id}"


def city_population(city: str) -> int:
    """Look up the most recent census population for a named city."""
    return 545_000


class DuckTool:
    """Satisfies the Tool Protocol without inheriting anything."""

    name = "duck"
    description = "A duck-typed tool that answers with a fixed quack string."
    schema = ToolSchema(name, description, {"type": "object", "properties": {}, "required": []})
    output_schema = None
    side_effecting = False
    requires_approval = False

    async def run(self, args: Mapping[str, Any], ctx: RunContext | None) -> str:
        return "quack"


class HalfShaped:
    """Has a name and a run, but no schema and none of the flags."""

    name = "half"

    async def run(self, args: Mapping[str, Any], ctx: RunContext | None) -> str:
        return "never"


# -- the Protocol --------------------------------------------------------------------


def test_tool_protocol_annotations_are_the_documented_attributes() -> None:
    assert sorted(Tool.__annotations__) == [
        "description",
        "name",
        "output_schema",
        "requires_approval",
        "schema",
        "side_effecting",
    ]


def test_tool_is_a_runtime_checkable_protocol() -> None:
    assert isinstance(forecast, Tool)
    assert isinstance(DuckTool(), Tool)
    assert not isinstance(HalfShaped(), Tool)
    assert not isinstance(city_population, Tool)


def test_function_tools_are_tools() -> None:
    wrapped = FunctionTool.from_callable(city_population)

    assert isinstance(wrapped, FunctionTool)
    assert isinstance(wrapped, Tool)


# -- register ------------------------------------------------------------------------


def test_register_returns_the_tool_it_registered() -> None:
    registry = ToolRegistry()
    duck = DuckTool()

    assert registry.register(forecast) is forecast
    assert registry.register(duck) is duck
    assert registry.get("duck") is duck


def test_register_wraps_a_plain_function_with_from_callable() -> None:
    with pytest.warns(UserWarning, match="tool 'city_population' is the plain function"):
        registered = ToolRegistry().register(city_population)

    assert isinstance(registered, FunctionTool)
    assert registered.name == "city_population"
    assert registered.description == "Look up the most recent census population for a named city."
    assert registered.side_effecting is False


def test_register_refuses_a_thin_plain_function() -> None:
    def lookup(q: str) -> str:
        """Look it up."""
        return q

    with pytest.raises(ToolDefinitionError) as caught:
        ToolRegistry().register(lookup)

    assert str(caught.value) == (
        "tool 'lookup' needs a docstring/description of at least 30 characters so the model "
        "can understand it; got 11 chars: 'Look it up.'"
    )


def test_half_shaped_object_is_refused_at_register() -> None:
    registry = ToolRegistry()
    half = HalfShaped()

    with pytest.raises(ToolDefinitionError) as caught:
        registry.register(half)

    assert str(caught.value) == (
        f"{half!r} is not a Tool: missing ['description', 'schema', 'output_schema', "
        "'side_effecting', 'requires_approval']. A tool has name, description, schema, "
        "output_schema, side_effecting, requires_approval and `async def run(args, ctx)`; a "
        "plain function is wrapped with FunctionTool.from_callable"
    )
    assert registry.schemas() == ()
    with pytest.raises(ToolNotFoundError):
        registry.get("half")


def test_from_tools_builds_a_registry_from_a_mixed_list() -> None:
    duck = DuckTool()
    registry = ToolRegistry.from_tools([forecast, city_population, duck])

    assert registry.get("forecast") is forecast
    assert registry.get("duck") is duck
    assert isinstance(registry.get("city_population"), FunctionTool)
    assert [s.name for s in registry.schemas()] == ["city_population", "duck", "forecast"]


# -- collisions ----------------------------------------------------------------------


def test_name_collision_is_refused_with_the_pages_message() -> None:
    registry = ToolRegistry.from_tools([forecast])

    with pytest.raises(ValueError) as caught:
        registry.register(forecast)

    assert str(caught.value) == (
        "ToolRegistry: tool 'forecast' already registered. Pass replace=True to swap deliberately."
    )
    assert registry.get("forecast") is forecast


def test_collision_between_different_implementations_keeps_the_first() -> None:
    @tool(side_effecting=True, name="forecast")
    def other(city: str) -> str:
        """A different implementation advertised under the same tool name."""
        return "stormy"

    registry = ToolRegistry.from_tools([forecast])

    with pytest.raises(ValueError, match="already registered"):
        registry.register(other)
    with pytest.raises(ValueError, match="already registered"):
        ToolRegistry.from_tools([forecast, other])
    assert registry.get("forecast") is forecast


async def test_replace_true_swaps_deliberately(ctx: RunContext) -> None:
    @tool(side_effecting=False, name="forecast")
    def stormy(city: str) -> str:
        """Return a short weather forecast that is always stormy, for tests."""
        return "stormy"

    registry = ToolRegistry.from_tools([forecast])

    assert registry.register(stormy, replace=True) is stormy
    assert registry.get("forecast") is stormy
    assert await registry.get("forecast").run({"city": "Porto"}, ctx) == "stormy"
    assert [s.name for s in registry.schemas()] == ["forecast"]


def test_schemas_asked_before_a_registration_include_it_after() -> None:
    @tool(side_effecting=False, name="forecast")
    def stormy(city: str) -> str:
        """Return a short weather forecast that is always stormy, for tests."""
        return "stormy"

    registry = ToolRegistry.from_tools([forecast])
    assert registry.schemas() == (forecast.schema,)

    registry.register(DuckTool())
    assert [s.name for s in registry.schemas()] == ["duck", "forecast"]
    registry.register(stormy, replace=True)
    assert registry.schemas() == (DuckTool.schema, stormy.schema)


# -- lookup --------------------------------------------------------------------------


def test_unknown_tool_lists_available_tools() -> None:
    registry = ToolRegistry.from_tools([refund, forecast])

    with pytest.raises(ToolNotFoundError) as caught:
        registry.get("weather")

    assert caught.value.name == "weather"
    assert caught.value.available == ("forecast", "refund")
    assert str(caught.value) == "no tool named 'weather'. Available tools: ['forecast', 'refund']"


def test_unknown_tool_in_an_empty_registry() -> None:
    with pytest.raises(ToolNotFoundError) as caught:
        ToolRegistry().get("anything")

    assert str(caught.value) == "no tool named 'anything'. Available tools: []"


def test_requires_approval_answers_per_name() -> None:
    registry = ToolRegistry.from_tools([refund, forecast, DuckTool()])

    assert registry.requires_approval("refund") is True
    assert registry.requires_approval("forecast") is False
    assert registry.requires_approval("duck") is False
    with pytest.raises(ToolNotFoundError):
        registry.requires_approval("weather")


# -- schemas() -----------------------------------------------------------------------


def test_schemas_are_in_sorted_name_order_whatever_the_registration_order() -> None:
    @tool(side_effecting=False)
    def alpha(q: str) -> str:
        """The first tool in alphabetical order, registered last of all."""
        return q

    registry = ToolRegistry.from_tools([refund, forecast, DuckTool(), alpha])

    schemas = registry.schemas()
    assert [s.name for s in schemas] == ["alpha", "duck", "forecast", "refund"]
    assert schemas[2] is forecast.schema
    assert schemas == ToolRegistry.from_tools([alpha, DuckTool(), forecast, refund]).schemas()


async def test_unadvertised_tool_is_hidden_but_gettable_and_runnable(ctx: RunContext) -> None:
    ran: list[str] = []

    @tool(side_effecting=False, advertise=False)
    def compact(window: int) -> str:
        """Compact the conversation window, driven by the cognition itself."""
        ran.append("compact")
        return f"compacted {window}"

    registry = ToolRegistry.from_tools([forecast, compact])

    assert compact.schema is None
    assert isinstance(compact, Tool)
    assert [s.name for s in registry.schemas()] == ["forecast"]
    assert registry.get("compact") is compact
    assert registry.requires_approval("compact") is False
    assert (
        await ctx.invoker.invoke_tool(
            ToolRequest(name="compact", arguments={"window": 8}, tool=registry.get("compact")), ctx
        )
        == "compacted 8"
    )
    assert ran == ["compact"]


async def test_smallest_example_runs_through_the_invoker(ctx: RunContext) -> None:
    @tool(side_effecting=False, idempotent=True)
    def city_population(city: str) -> int:
        """Look up the most recent census population for a named city."""
        return {"lisbon": 545_000, "porto": 231_000}.get(city.lower(), 0)

    registry = ToolRegistry.from_tools([city_population])
    the_tool = registry.get("city_population")

    result = await ctx.invoker.invoke_tool(
        ToolRequest(name="city_population", arguments={"city": "Lisbon"}, tool=the_tool), ctx
    )

    assert result == 545_000
    assert the_tool.schema.parameters == {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    }
