"""Arguments arrive deeply frozen: what was authorised is what runs."""

from collections.abc import Callable, Mapping
from typing import Any

import pytest

from agentkit.core.contracts.types import ToolRequest, ToolSchema
from agentkit.core.runtime import RunContext
from agentkit.tools import FrozenDict, Tool, ToolRegistry, tool

READ_ONLY = (
    "FrozenDict is read-only: the arguments that were authorised are the arguments that run. "
    "Copy with dict(args) to get a mutable shallow copy."
)

NESTED = {"query": "boots", "filters": {"colour": ["red", "blue"], "size": {"eu": 42}}}


class RecordingTool:
    """A duck-typed tool: the Protocol's attributes and an async run, nothing inherited."""

    name = "recorder"
    description = "Record the arguments this duck-typed tool was handed by the invoker."
    schema = ToolSchema(name, description, {"type": "object", "properties": {}, "required": []})
    output_schema = None
    side_effecting = False
    requires_approval = False

    def __init__(self) -> None:
        self.received: list[Mapping[str, Any]] = []

    async def run(self, args: Mapping[str, Any], ctx: RunContext | None) -> str:
        self.received.append(args)
        return "recorded"


async def invoke_duck(ctx: RunContext, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
    duck = RecordingTool()
    assert isinstance(duck, Tool)
    registered = ToolRegistry.from_tools([duck]).get("recorder")
    result = await ctx.invoker.invoke_tool(
        ToolRequest(name="recorder", arguments=arguments, tool=registered), ctx
    )
    assert result == "recorded"
    (args,) = duck.received
    return args


def test_frozen_dict_is_a_dict() -> None:
    frozen = FrozenDict({"a": 1})

    assert issubclass(FrozenDict, dict)
    assert isinstance(frozen, dict)
    assert frozen == {"a": 1}
    assert frozen["a"] == 1


MUTATIONS: list[Callable[[Any], Any]] = [
    lambda d: d.__setitem__("x", 1),
    lambda d: d.__delitem__("query"),
    lambda d: d.update({"x": 1}),
    lambda d: d.pop("query"),
    lambda d: d.popitem(),
    lambda d: d.setdefault("x", 1),
    lambda d: d.clear(),
    lambda d: d.__ior__({"x": 1}),
]


@pytest.mark.parametrize(
    "mutate",
    MUTATIONS,
    ids=["setitem", "delitem", "update", "pop", "popitem", "setdefault", "clear", "ior"],
)
def test_every_mutation_of_a_frozen_dict_raises_type_error(mutate: Callable[[Any], Any]) -> None:
    frozen = FrozenDict({"query": "boots"})

    with pytest.raises(TypeError) as caught:
        mutate(frozen)

    assert str(caught.value) == READ_ONLY
    assert frozen == {"query": "boots"}


def test_item_assignment_and_augmented_update_statements_raise() -> None:
    args = FrozenDict({"query": "boots"})

    with pytest.raises(TypeError):
        args["x"] = 1
    with pytest.raises(TypeError):
        del args["query"]
    with pytest.raises(TypeError):
        args |= {"x": 1}
    assert args == {"query": "boots"}


async def test_duck_typed_tool_receives_a_frozen_dict(ctx: RunContext) -> None:
    args = await invoke_duck(ctx, NESTED)

    assert type(args) is FrozenDict
    assert args == {"query": "boots", "filters": {"colour": ("red", "blue"), "size": {"eu": 42}}}
    assert type(args["filters"]) is FrozenDict
    assert type(args["filters"]["size"]) is FrozenDict
    assert type(args["filters"]["colour"]) is tuple
    with pytest.raises(TypeError):
        args["x"] = 1  # type: ignore[index]
    with pytest.raises(TypeError):
        args["filters"]["size"]["eu"] = 43


async def test_the_callers_dict_is_not_shared_with_the_tool(ctx: RunContext) -> None:
    arguments = {"filters": {"colour": ["red"]}}

    args = await invoke_duck(ctx, arguments)
    arguments["filters"]["colour"].append("blue")

    assert args == {"filters": {"colour": ("red",)}}


async def test_dict_copy_is_mutable_and_shallow(ctx: RunContext) -> None:
    args = await invoke_duck(ctx, NESTED)

    copy = dict(args)
    copy["query"] = "shoes"
    del copy["filters"]

    assert type(copy) is dict
    assert copy == {"query": "shoes"}
    assert args["query"] == "boots"

    nested = dict(args)["filters"]
    assert nested is args["filters"]
    with pytest.raises(TypeError) as caught:
        nested["colour"] = ["green"]
    assert str(caught.value) == READ_ONLY


async def test_kwargs_extras_arrive_deeply_frozen(ctx: RunContext) -> None:
    seen: dict[str, Any] = {}

    @tool(side_effecting=False)
    def flexible(query: str, **filters: Any) -> str:
        """Search the catalogue with a free-form set of extra filter keys."""
        seen.update(filters)
        return query

    await flexible.run(NESTED, ctx)

    assert type(seen["filters"]) is FrozenDict
    assert type(seen["filters"]["size"]) is FrozenDict
    assert seen["filters"]["colour"] == ("red", "blue")


async def test_unannotated_parameter_arrives_deeply_frozen(ctx: RunContext) -> None:
    seen: list[Any] = []

    @tool(side_effecting=False)
    def search(query, filters):  # type: ignore[no-untyped-def]
        """Search the catalogue with a structured set of filter values."""
        seen.append(filters)
        return query

    await search.run(NESTED, ctx)

    (filters,) = seen
    assert type(filters) is FrozenDict
    assert filters == {"colour": ("red", "blue"), "size": {"eu": 42}}
    assert type(filters["size"]) is FrozenDict
    with pytest.raises(TypeError):
        filters["size"]["eu"] = 1


async def test_dict_annotated_parameter_arrives_deeply_frozen(ctx: RunContext) -> None:
    seen: list[Any] = []

    @tool(side_effecting=False)
    def search(query: str, filters: dict) -> str:  # type: ignore[type-arg]
        """Search the catalogue with a structured set of filter values."""
        seen.append(filters)
        return query

    await search.run({"query": "boots", "filters": {"tags": [{"k": "v"}]}}, ctx)

    (filters,) = seen
    assert isinstance(filters, FrozenDict)
    assert filters == {"tags": ({"k": "v"},)}
    assert type(filters["tags"]) is tuple
    assert type(filters["tags"][0]) is FrozenDict
    with pytest.raises(TypeError):
        filters.pop("tags")


async def test_a_rebuilt_list_does_not_change_the_authorised_arguments(ctx: RunContext) -> None:
    @tool(side_effecting=False)
    def shout(words: list[str]) -> list[str]:
        """Append a marker word to the list of words and return the edited list."""
        words.append("EXTRA")
        return words

    request = ToolRequest(name="shout", arguments={"words": ["a", "b"]}, tool=shout)

    assert await ctx.invoker.invoke_tool(request, ctx) == ["a", "b", "EXTRA"]
    assert request.arguments == {"words": ("a", "b")}
