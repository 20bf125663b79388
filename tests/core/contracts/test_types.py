"""The value types that cross the seams: stable keys, frozen values, deeply frozen arguments."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from agentkit.core.contracts.types import (
    ChatRequest,
    LLMResult,
    Message,
    Scope,
    ToolCall,
    ToolRequest,
    Usage,
)
from agentkit.tools import FrozenDict, tool

READ_ONLY = (
    "FrozenDict is read-only: the arguments that were authorised are the arguments that "
    "run. Copy with dict(args) to get a mutable shallow copy."
)


@tool(side_effecting=True)
def send_email(to: str, body: str) -> str:
    """Send one email to a single recipient and return the provider message id."""
    return f"queued for {to}"


@tool(side_effecting=False)
def city_population(city: str) -> int:
    """Look up the most recent census population for a named city."""
    return 0


def test_usage_sums_keep_every_unpriced_model_once() -> None:
    first = Usage(input_tokens=1, unpriced_models=("gpt-5-pro",))
    priced = Usage(input_tokens=2, cost_usd=0.5)
    other = Usage(output_tokens=3, unpriced_models=("o3-deep-research", "gpt-5-pro"))
    assert first + priced + other == Usage(
        input_tokens=3, output_tokens=3, cost_usd=0.5,
        unpriced_models=("gpt-5-pro", "o3-deep-research"),
    )
    assert (priced + first).unpriced_models == ("gpt-5-pro",)
    assert (priced + priced).unpriced_models == ()


def test_scope_key_is_org_and_domain() -> None:
    assert Scope(org_id=7, domain_id=1).key() == "org7:dom1"


@pytest.mark.parametrize(
    ("value", "field"),
    [
        (Scope(org_id=7, domain_id=1), "org_id"),
        (Usage(input_tokens=1), "input_tokens"),
        (ToolCall("c1", "f", {}), "name"),
        (ToolRequest(name="f"), "name"),
        (Message(role="user", content="hi"), "content"),
        (ChatRequest(model="fake", messages=()), "model"),
        (LLMResult(content="hi"), "content"),
    ],
)
def test_values_refuse_assignment(value: Any, field: str) -> None:
    with pytest.raises(dataclasses.FrozenInstanceError) as info:
        setattr(value, field, "changed")
    assert str(info.value) == f"cannot assign to field {field!r}"


@pytest.mark.parametrize("build", [ToolCall, ToolRequest], ids=["ToolCall", "ToolRequest"])
def test_arguments_are_frozen_all_the_way_down(build: Any) -> None:
    original: dict[str, Any] = {"to": "ops@example.com", "filters": {"tags": ["a", {"b": 1}]}}
    if build is ToolCall:
        value = ToolCall("c1", "send_email", original)
    else:
        value = ToolRequest(name="send_email", arguments=original)
    args = value.arguments

    assert type(args) is FrozenDict
    assert type(args["filters"]) is FrozenDict
    assert args["filters"]["tags"] == ("a", FrozenDict({"b": 1}))
    assert type(args["filters"]["tags"][1]) is FrozenDict
    for mutate in (
        lambda: args.__setitem__("to", "x"),
        lambda: args["filters"].__setitem__("tags", ()),
        lambda: args["filters"]["tags"][1].update(b=2),
        lambda: args.pop("to"),
    ):
        with pytest.raises(TypeError) as info:
            mutate()
        assert str(info.value) == READ_ONLY


def test_arguments_are_copied_so_the_callers_dict_cannot_change_them() -> None:
    original: dict[str, Any] = {"to": "ops@example.com", "cc": ["a@example.com"]}
    call = ToolCall("c1", "send_email", original)
    original["to"] = "attacker@example.com"
    original["cc"].append("b@example.com")
    assert call.arguments == {"to": "ops@example.com", "cc": ("a@example.com",)}


def test_a_shallow_copy_is_mutable_but_nested_values_stay_frozen() -> None:
    request = ToolRequest(name="f", arguments={"a": {"b": 1}})
    copy = dict(request.arguments)
    copy["c"] = 2
    assert copy == {"a": {"b": 1}, "c": 2}
    with pytest.raises(TypeError):
        copy["a"]["b"] = 2


@pytest.mark.parametrize(
    ("request_flag", "the_tool", "expected"),
    [
        (False, city_population, False),
        (True, city_population, True),
        (False, send_email, True),
        (True, send_email, True),
        (False, None, False),
        (True, None, True),
    ],
)
def test_is_side_effecting_is_the_request_flag_or_the_tool_flag(
    request_flag: bool, the_tool: Any, expected: bool
) -> None:
    request = ToolRequest(name="t", arguments={}, tool=the_tool, side_effecting=request_flag)
    assert request.is_side_effecting is expected


def test_request_meta_is_per_call_and_not_part_of_equality() -> None:
    first = ToolRequest(name="t", arguments={"a": 1})
    second = ToolRequest(name="t", arguments={"a": 1})
    first.meta["idempotency"] = "executed"
    assert second.meta == {}
    assert first == second


def test_usage_adds_field_by_field() -> None:
    a = Usage(
        input_tokens=1,
        output_tokens=2,
        cache_read_tokens=3,
        cache_write_tokens=4,
        cost_usd=0.25,
        requests=1,
    )
    b = Usage(
        input_tokens=10,
        output_tokens=20,
        cache_read_tokens=30,
        cache_write_tokens=40,
        cost_usd=0.5,
        requests=2,
    )
    assert a + b == Usage(
        input_tokens=11,
        output_tokens=22,
        cache_read_tokens=33,
        cache_write_tokens=44,
        cost_usd=0.75,
        requests=3,
    )
    assert (a + b).total_tokens == 110
    assert a + Usage() == a


@pytest.mark.parametrize(
    ("org", "domain", "error"),
    [
        ("1:dom2", 3, ValueError),
        (1, "", ValueError),
        (True, 1, TypeError),
        (1.5, 1, TypeError),
    ],
)
def test_scope_ids_that_could_collide_in_keys_are_refused(
    org: object, domain: object, error: type[Exception]
) -> None:
    with pytest.raises(error):
        Scope(org_id=org, domain_id=domain)  # type: ignore[arg-type]


def test_tool_call_arguments_must_be_a_mapping() -> None:
    with pytest.raises(TypeError) as info:
        ToolCall("c1", "t", None)  # type: ignore[arg-type]
    assert str(info.value) == (
        "ToolCall.arguments must be a mapping of argument names to values (a JSON object), "
        "got NoneType"
    )
