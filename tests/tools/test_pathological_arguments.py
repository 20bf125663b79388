"""Pathological arguments (deep nesting, huge numbers, huge strings, thousands of keys)
end as a ToolArgumentError with a bounded message, or as a successful call."""

from __future__ import annotations

import dataclasses
import enum
import json
import sys
from collections.abc import Iterator
from typing import Any, Literal

import pydantic
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ToolCall, ToolRequest
from agentkit.core.policies import default_tool_chain
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.tools import FunctionTool, ToolArgumentError, tool

MAX_MESSAGE = 2_000  # no argument error message is longer, whatever the input


def nested_array(depth: int) -> Any:
    """A JSON array nested ``depth`` deep, as json.loads builds it."""
    return json.loads("[" * depth + "]" * depth)


def nested_object(depth: int) -> Any:
    return json.loads('{"a":' * depth + "1" + "}" * depth)


@pytest.fixture
def no_digit_limit() -> Iterator[None]:
    """Integers past the 4,300-digit str() limit can still arrive (not via json.loads)."""
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        yield
    finally:
        sys.set_int_max_str_digits(old)


def huge_int(digits: int) -> int:
    return 10 ** (digits - 1) + 7


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Box(pydantic.BaseModel):
    label: str
    data: Any = None


class Tree(pydantic.BaseModel):
    kids: list[Tree] = []


@dataclasses.dataclass
class Node:
    children: list[Node]


received: list[Any] = []


@tool(side_effecting=False)
def paint(color: Color) -> str:
    """Paint the wall in one of the supported colours and say which one."""
    return color.value


@tool(side_effecting=False)
def schedule(every: Literal["hourly", "daily"]) -> str:
    """Schedule the report at one of the supported intervals and say which."""
    return every


@tool(side_effecting=False)
def store_box(box: Box) -> str:
    """Store one labelled box of data and return the label it was stored under."""
    return box.label


@tool(side_effecting=False)
def plant(tree: Tree) -> int:
    """Plant a tree of nested children and return how many direct children it has."""
    return len(tree.kids)


@tool(side_effecting=False)
def graph(node: Node) -> int:
    """Store a graph of nodes and return how many children the root node has."""
    return len(node.children)


@tool(side_effecting=False)
def keep(value: Any) -> int:
    """Keep any JSON value and return how deeply its arrays are nested."""
    return depth_of(value)


@tool(side_effecting=False)
def options(**kwargs: Any) -> int:
    """Accept any options and return how deeply the first one's arrays are nested."""
    return depth_of(next(iter(kwargs.values())))


@tool(side_effecting=False)
def scale(ratio: float, name: str = "") -> float:
    """Scale the drawing by the given ratio and return the ratio that was used."""
    return ratio


def depth_of(value: Any) -> int:
    depth = 0
    while isinstance(value, tuple) and value:
        value, depth = value[0], depth + 1
    return depth + (1 if value == () else 0)


async def rejected(t: FunctionTool, arguments: dict[str, Any]) -> str:
    with pytest.raises(ToolArgumentError) as info:
        await t.run(arguments, None)
    message = str(info.value)
    assert len(message) <= MAX_MESSAGE
    return message


async def test_deep_json_for_an_enum_or_literal_is_an_argument_error() -> None:
    assert await rejected(paint, {"color": nested_array(500)}) == (
        "tool 'paint' call rejected: invalid argument(s): color: [[[[...]]]] is not a valid "
        "Color; expected one of ['red', 'green']. Accepted arguments: ['color']"
    )
    assert await rejected(schedule, {"every": nested_object(500)}) == (
        "tool 'schedule' call rejected: invalid argument(s): every: {'a': {'a': {'a': {...}}}} "
        "is not a valid option; expected one of ['hourly', 'daily']. Accepted arguments: "
        "['every']"
    )


async def test_deep_json_for_any_and_kwargs_is_accepted_whole() -> None:
    assert await keep.run({"value": nested_array(900)}, None) == 900
    assert await options.run({"deep": nested_array(900)}, None) == 900


async def test_deep_json_inside_a_pydantic_model_is_accepted_or_rejected_cleanly() -> None:
    assert await store_box.run({"box": {"label": "a", "data": nested_array(900)}}, None) == "a"
    tree: Any = {"kids": []}
    for _ in range(500):
        tree = {"kids": [tree]}
    assert await rejected(plant, {"tree": tree}) == (
        "tool 'plant' call rejected: invalid argument(s): tree: not a valid Tree: "
        f"{'kids.0.' * 13}kids.0...: Recursion error - maximum validation depth exceeded. "
        "Accepted arguments: ['tree']"
    )


async def test_deep_json_for_a_self_referencing_dataclass_is_an_argument_error() -> None:
    node: Any = {"children": []}
    for _ in range(900):
        node = {"children": [node]}
    assert await rejected(graph, {"node": node}) == (
        "tool 'graph' call rejected: invalid argument(s): node: nested too deeply to check; "
        "send a value nested less deeply. Accepted arguments: ['node']"
    )


async def test_an_integer_beyond_the_float_range_is_an_argument_error() -> None:
    assert await rejected(scale, {"ratio": huge_int(400)}) == (
        "tool 'scale' call rejected: invalid argument(s): ratio: expected a number a float "
        "can hold (at most about 1.8e308), got integer of 400 digits. Accepted arguments: "
        "['ratio', 'name']"
    )
    assert await scale.run({"ratio": huge_int(300)}, None) == float(huge_int(300))


async def test_integers_past_the_str_digit_limit_are_described_not_printed(
    no_digit_limit: None,
) -> None:
    sys.set_int_max_str_digits(4300)  # the default, which repr() enforces
    big = huge_int(5000)
    assert await rejected(scale, {"ratio": 1.0, "name": big}) == (
        "tool 'scale' call rejected: invalid argument(s): name: expected a string, got "
        "integer of 5000 digits. Accepted arguments: ['ratio', 'name']"
    )
    assert await rejected(paint, {"color": big}) == (
        "tool 'paint' call rejected: invalid argument(s): color: <integer of 5000 digits> is "
        "not a valid Color; expected one of ['red', 'green']. Accepted arguments: ['color']"
    )
    assert await rejected(schedule, {"every": [big, {"k": -big}]}) == (
        "tool 'schedule' call rejected: invalid argument(s): every: [<integer of 5000 "
        "digits>, {'k': <integer of 5000 digits>}] is not a valid option; expected one of "
        "['hourly', 'daily']. Accepted arguments: ['every']"
    )


async def test_huge_strings_and_many_keys_are_quoted_in_bounded_form() -> None:
    long = "x" * 1_000_000
    assert await rejected(paint, {"color": long}) == (
        "tool 'paint' call rejected: invalid argument(s): color: "
        "'xxxxxxxxxxxxxxxxxxxxxxxxxxx...xxxxxxxxxxxxxxxxxxxxxxxxxxxx' is not a valid Color; "
        "expected one of ['red', 'green']. Accepted arguments: ['color']"
    )
    many = {f"k{i}": i for i in range(10_000)}
    assert await rejected(paint, {"color": "red", **many}) == (
        "tool 'paint' call rejected: unexpected argument(s) ['k0', 'k1', 'k2', 'k3', 'k4', "
        "'k5', 'k6', 'k7', 'k8', 'k9', ... 9990 more]. Accepted arguments: ['color']"
    )
    assert await rejected(paint, {"color": "red", long: 1}) == (
        "tool 'paint' call rejected: unexpected argument(s) "
        "['xxxxxxxxxxxxxxxxxxxxxxxxxxx...xxxxxxxxxxxxxxxxxxxxxxxxxxxx']. "
        "Accepted arguments: ['color']"
    )


async def test_a_deep_tool_call_through_the_agent_loop_becomes_a_repair_turn() -> None:
    """Inside a real run, with the default middleware chain, under the loop's own stack."""
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "paint", {"color": nested_array(500)}),)),
        Turn(tool_calls=(ToolCall("c2", "keep", {"value": nested_array(500)}),)),
        Turn(content="done"),
    ])
    agent = Agent(
        name="painter",
        model="fake",
        prompt="Paint walls.",
        cognition=ReActCognition(tools=[paint, keep], max_iterations=5),
    )
    ctx = make_test_ctx(llm=llm, tool_middleware=default_tool_chain())
    result = await agent.run("Paint it.", ctx)
    assert result.stop_reason == "complete"
    tool_results = [m.content for m in result.messages if m.role == "tool"]
    assert tool_results[0].startswith(
        "tool 'paint' call rejected: invalid argument(s): color: ((((...),),),) is not a "
        "valid Color"
    )
    assert tool_results[1] == "500"


json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**500), max_value=10**500)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=300)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=20), inner, max_size=4)
    ),
    max_leaves=20,
)


@pytest.mark.parametrize("target", [paint, schedule, store_box, plant, graph, scale, keep])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=json_values, depth=st.sampled_from([0, 1, 300, 900]))
async def test_fuzzed_values_end_as_success_or_a_bounded_argument_error(
    target: FunctionTool, value: Any, depth: int
) -> None:
    for _ in range(depth):
        value = [value]
    name = target.accepted_arguments[0]
    try:
        await target.run(dict(ToolRequest(target.name, {name: value}).arguments), None)
    except ToolArgumentError as exc:
        assert len(str(exc)) <= MAX_MESSAGE


def test_an_unknown_tool_name_is_quoted_in_bounded_form() -> None:
    from agentkit.tools import ToolNotFoundError, ToolRegistry

    registry = ToolRegistry.from_tools([paint])
    with pytest.raises(ToolNotFoundError) as caught:
        registry.get("p" * 100_000)
    assert caught.value.name == "p" * 100_000
    assert str(caught.value) == (
        f"no tool named '{'p' * 97}...'. Available tools: ['paint']"
    )
