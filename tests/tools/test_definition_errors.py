"""What ``@tool`` refuses when a tool is defined, and the defaults it fills in."""

from typing import Any

import pytest

from agentkit.tools import FunctionTool, ToolDefinitionError, ToolRegistry, tool

SIDE_EFFECTING_REQUIRED = (
    "@tool requires an explicit `side_effecting=` keyword (True if the tool mutates the world "
    "/ has external effects, False if it's read-only). The framework's approval gating and "
    "idempotency depend on knowing upfront."
)

DOC = "Send an email to a single recipient and return the message id."


def send_email(to: str, body: str) -> str:
    """Send an email to a single recipient and return the message id."""
    return "ok"


# -- side_effecting= is required -----------------------------------------------------


def test_bare_decorator_is_refused_with_the_pages_message() -> None:
    with pytest.raises(ToolDefinitionError) as caught:

        @tool
        def send_email(to: str, body: str) -> str:
            """Send an email to a single recipient and return the message id."""
            return "ok"

    assert str(caught.value) == SIDE_EFFECTING_REQUIRED


def test_empty_call_is_refused_with_the_pages_message() -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        tool()(send_email)

    assert str(caught.value) == SIDE_EFFECTING_REQUIRED


def test_other_flags_do_not_stand_in_for_side_effecting() -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        tool(idempotent=True)(send_email)

    assert str(caught.value) == SIDE_EFFECTING_REQUIRED


def test_missing_side_effecting_is_also_caught_as_a_value_error() -> None:
    with pytest.raises(ValueError, match="requires an explicit `side_effecting=`"):
        tool(send_email)


@pytest.mark.parametrize("flag", [True, False])
def test_explicit_side_effecting_is_recorded(flag: bool) -> None:
    assert tool(side_effecting=flag)(send_email).side_effecting is flag


# -- defaults ------------------------------------------------------------------------


def test_idempotent_and_requires_approval_default_to_false() -> None:
    declared = tool(side_effecting=True)(send_email)

    assert declared.idempotent is False
    assert declared.requires_approval is False


def test_flags_are_independent_axes() -> None:
    declared = tool(side_effecting=True, idempotent=True, requires_approval=True)(send_email)

    assert (declared.side_effecting, declared.idempotent, declared.requires_approval) == (
        True,
        True,
        True,
    )


def test_from_callable_defaults_side_effecting_to_false() -> None:
    wrapped = FunctionTool.from_callable(send_email)

    assert (wrapped.side_effecting, wrapped.idempotent, wrapped.requires_approval) == (
        False,
        False,
        False,
    )
    assert FunctionTool.from_callable(send_email, side_effecting=True).side_effecting is True


def test_registering_a_plain_function_defaults_side_effecting_to_false() -> None:
    with pytest.warns(UserWarning, match=r"Declare what it does with @tool\(side_effecting="):
        registered = ToolRegistry().register(send_email)

    assert isinstance(registered, FunctionTool)
    assert registered.side_effecting is False
    assert registered.idempotent is False
    assert registered.requires_approval is False


# -- what a JSON object can never call -----------------------------------------------


def test_star_args_is_refused() -> None:
    with pytest.raises(ToolDefinitionError) as caught:

        @tool(side_effecting=False)
        def total(*amounts: float) -> float:
            """Add up any number of amounts and return their total sum."""
            return sum(amounts)

    assert str(caught.value) == (
        "tool 'total' declares *amounts: a tool is called with a JSON object, so every argument "
        "arrives by keyword and *args could never be filled. Use **kwargs if the tool genuinely "
        "accepts arbitrary keys."
    )


def test_star_args_is_refused_even_next_to_kwargs() -> None:
    def flexible(*args: Any, **kwargs: Any) -> str:
        """Search the catalogue with a free-form set of extra filter keys."""
        return "ok"

    with pytest.raises(ToolDefinitionError, match=r"declares \*args"):
        FunctionTool.from_callable(flexible)


def test_positional_only_parameters_are_refused() -> None:
    with pytest.raises(ToolDefinitionError) as caught:

        @tool(side_effecting=False)
        def convert(amount: float, currency: str, /, rounding: int = 2) -> str:
            """Convert an amount of money from one currency into euros."""
            return "ok"

    assert str(caught.value) == (
        "tool 'convert' has positional-only parameter(s) ['amount', 'currency']: a tool is "
        "called with a JSON object, so every argument arrives by keyword and these could never "
        "be filled. Drop the '/' from the signature."
    )


def test_keyword_only_parameters_are_fine() -> None:
    @tool(side_effecting=False)
    def convert(*, amount: float, currency: str = "EUR") -> str:
        """Convert an amount of money from one currency into euros."""
        return "ok"

    assert convert.schema.parameters["required"] == ["amount"]


def test_kwargs_is_accepted_and_not_advertised() -> None:
    @tool(side_effecting=False)
    def flexible(query: str, **filters: Any) -> str:
        """Search the catalogue with a free-form set of extra filter keys."""
        return query

    assert dict(flexible.schema.parameters) == {
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
    }


# -- flags must be booleans ----------------------------------------------------------


@pytest.mark.parametrize("keyword", ["side_effecting", "idempotent", "requires_approval"])
@pytest.mark.parametrize("value", [1, 0, "yes", None], ids=repr)
def test_non_bool_flags_are_refused(keyword: str, value: Any) -> None:
    flags: dict[str, Any] = {"side_effecting": False, keyword: value}

    with pytest.raises(ToolDefinitionError) as caught:
        tool(**flags)(send_email)

    assert str(caught.value) == (
        f"tool 'send_email': {keyword}= must be True or False, got {value!r}"
    )


@pytest.mark.parametrize("keyword", ["side_effecting", "idempotent", "requires_approval"])
def test_non_bool_flags_are_refused_by_from_callable_too(keyword: str) -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        FunctionTool.from_callable(send_email, **{keyword: "true"})

    assert str(caught.value) == f"tool 'send_email': {keyword}= must be True or False, got 'true'"


@pytest.mark.parametrize("value", [0, "no", None], ids=repr)
def test_non_bool_advertise_is_refused(value: Any) -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        tool(side_effecting=False, advertise=value)(send_email)

    assert str(caught.value) == (
        f"tool 'send_email': advertise= must be True or False, got {value!r}"
    )


# -- names ---------------------------------------------------------------------------


def name_message(name: object) -> str:
    return (
        f"tool name {name!r} is not usable: providers accept 1-64 characters of letters, "
        "digits, '_' and '-'. Pass name= to choose one."
    )


@pytest.mark.parametrize(
    "name", ["", "has space", "dotted.name", "x" * 65, "emoji✓", "slash/name"], ids=repr
)
def test_bad_names_are_refused(name: str) -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        tool(side_effecting=False, name=name)(send_email)

    assert str(caught.value) == name_message(name)


@pytest.mark.parametrize("name", ["a", "x" * 64, "lookup-city_2", "A_B-c"], ids=repr)
def test_good_names_are_accepted(name: str) -> None:
    assert tool(side_effecting=False, name=name)(send_email).name == name


def test_a_lambda_needs_an_explicit_name() -> None:
    fn = lambda q: q  # noqa: E731
    fn.__doc__ = "Echo the query straight back to the model, unchanged."

    with pytest.raises(ToolDefinitionError) as caught:
        FunctionTool.from_callable(fn)
    assert str(caught.value) == name_message("<lambda>")

    assert FunctionTool.from_callable(fn, name="echo").name == "echo"


def test_non_string_name_is_refused() -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        tool(side_effecting=False, name=42)(send_email)  # type: ignore[arg-type]

    assert str(caught.value) == name_message(42)


def test_an_annotation_that_does_not_resolve_is_refused() -> None:
    namespace: dict[str, object] = {}
    exec(
        "from __future__ import annotations\n"
        "from agentkit.tools import tool\n"
        "def make():\n"
        "    class Filter:\n"
        "        pass\n"
        "    @tool(side_effecting=False)\n"
        "    def search(f: Filter) -> str:\n"
        '        """Search the catalogue with a structured filter object."""\n'
        "        return 'ok'\n"
        "    return search\n",
        namespace,
    )
    with pytest.raises(ToolDefinitionError) as info:
        namespace["make"]()  # type: ignore[operator]
    assert str(info.value) == (
        "tool 'search': the annotation 'Filter' of parameter 'f' does not resolve to a type "
        "(is it defined inside a function, or imported only under TYPE_CHECKING?); define or "
        "import it at module level"
    )
