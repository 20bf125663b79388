"""The description the model reads: the whole docstring, down to a ``---`` line."""

from collections.abc import Callable
from typing import Any

import pytest

from agentkit.tools import FunctionTool, ToolDefinitionError, tool


def with_doc(doc: str | None) -> Callable[..., Any]:
    """A plain function called ``probe`` whose docstring is exactly ``doc``."""

    def probe(q: str) -> str:
        return q

    probe.__doc__ = doc
    return probe


def describe(doc: str | None) -> str:
    return tool(side_effecting=False)(with_doc(doc)).description


def note_message(name: str, marker: str) -> str:
    return (
        f"tool {name!r} has a developer note ({marker}) in the part of its docstring that is "
        "sent to the model, where it reads as an instruction; move it below a line containing "
        "only '---' (everything after that line is for humans) or pass an explicit description="
    )


# -- the whole docstring -------------------------------------------------------------


def test_whole_multi_paragraph_docstring_is_the_description() -> None:
    @tool(side_effecting=False, idempotent=True)
    def order_status(order_id: str) -> str:
        """Look up the current shipping status of a customer order.

        Use this whenever the user mentions an order number, even in
        passing. The status is the carrier's own wording, and it can be up
        to an hour stale.
        """
        return "in transit"

    assert order_status.description == (
        "Look up the current shipping status of a customer order.\n"
        "\n"
        "Use this whenever the user mentions an order number, even in\n"
        "passing. The status is the carrier's own wording, and it can be up\n"
        "to an hour stale."
    )
    assert order_status.schema.description == order_status.description


def test_single_paragraph_wrapped_over_two_lines_is_not_truncated() -> None:
    assert describe(
        """A tool, so the ReAct loop has something to run and a reason to
        call it at least once per test."""
    ) == (
        "A tool, so the ReAct loop has something to run and a reason to\n"
        "call it at least once per test."
    )


def test_docstring_is_dedented_like_cleandoc_keeping_relative_indentation() -> None:
    assert describe(
        """
        Search the product catalogue for a free-text query.

        Notes on behaviour:
          - results are ranked by the vendor, not by us
        """
    ) == (
        "Search the product catalogue for a free-text query.\n"
        "\n"
        "Notes on behaviour:\n"
        "  - results are ranked by the vendor, not by us"
    )


def test_a_long_description_is_not_trimmed() -> None:
    body = "\n".join(f"Guidance line number {i} for the model to read." for i in range(200))

    assert describe(body) == body


# -- the --- cut ---------------------------------------------------------------------


def test_cut_line_ends_the_model_facing_part() -> None:
    @tool(side_effecting=False, idempotent=True)
    def order_status(order_id: str) -> str:
        """Look up the current shipping status of a customer order.

        Use this whenever the user mentions an order number.

        ---

        Backed by the carrier's v2 endpoint, which lies about 404s.
        See ticket #442 before touching the retry count.
        """
        return "in transit"

    assert order_status.description == (
        "Look up the current shipping status of a customer order.\n"
        "\n"
        "Use this whenever the user mentions an order number."
    )


def test_only_the_first_cut_line_counts() -> None:
    assert (
        describe(
            "Look up the current shipping status of an order.\n---\nFirst human note.\n---\nMore."
        )
        == "Look up the current shipping status of an order."
    )


@pytest.mark.parametrize("line", ["----", "-- -", "--- see below", "*** ", "—"], ids=repr)
def test_a_line_that_is_not_exactly_three_hyphens_is_not_a_cut(line: str) -> None:
    doc = f"Look up the current shipping status of an order.\n{line}\nStill for the model."

    assert describe(doc) == doc


def test_developer_note_below_the_cut_is_left_alone() -> None:
    assert (
        describe(
            """Look up the current shipping status of a customer order.

        ---

        TODO: this is O(n^2), see ticket #442.
        FIXME: the vendor lies about 404s.
        """
        )
        == "Look up the current shipping status of a customer order."
    )


# -- developer notes above the cut ---------------------------------------------------


def test_bulleted_indented_todo_above_the_cut_is_refused_with_the_pages_message() -> None:
    with pytest.raises(ToolDefinitionError) as caught:

        @tool(side_effecting=False)
        def catalogue_search(q: str) -> str:
            """Search the product catalogue for a free-text query.

            Notes on behaviour:
              - results are ranked by the vendor, not by us
              - TODO: this is O(n^2), rewrite before the Q3 launch
            """
            return "ok"

    assert str(caught.value) == note_message("catalogue_search", "TODO")


@pytest.mark.parametrize("marker", ["TODO", "FIXME", "XXX", "HACK"])
@pytest.mark.parametrize(
    "template",
    [
        "{m}: revisit this.",
        "    {m}: revisit this.",
        "- {m}: revisit this.",
        "  * {m} revisit this.",
        "\t+ {m} revisit this.",
    ],
    ids=["column zero", "indented", "dash bullet", "indented star bullet", "tab plus bullet"],
)
def test_every_marker_at_line_start_is_refused(marker: str, template: str) -> None:
    doc = "Look up the current shipping status of an order.\n" + template.format(m=marker)

    with pytest.raises(ToolDefinitionError) as caught:
        describe(doc)

    assert str(caught.value) == note_message("probe", marker)


def test_a_note_on_the_first_line_is_refused() -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        describe("FIXME this whole tool is a stopgap until the v3 API lands.")

    assert str(caught.value) == note_message("probe", "FIXME")


@pytest.mark.parametrize(
    "doc",
    [
        "XXXL is a size we stock in every colour of the range.",
        "Append a TODO: item to the checklist the user is editing.",
        "Find products by size.\nSizes on offer:\n  XXXL and beyond for outerwear.",
        "Find HACKATHON entries by team name and submission date.",
        "Return the user's TODOS list, newest entry first, as plain text.",
    ],
    ids=["XXXL", "marker inside prose", "indented XXXL", "HACKATHON", "TODOS"],
)
def test_marker_inside_a_word_or_after_prose_is_not_a_note(doc: str) -> None:
    assert describe(doc) == doc


# -- CRLF docstrings -----------------------------------------------------------------


def test_crlf_docstring_is_normalised_and_dedented() -> None:
    description = describe(
        "Look up the current shipping status of an order.\r\n"
        "\r\n"
        "    Use this whenever the user mentions an order number.\r\n"
        "      - indented one level further\r\n"
        "    "
    )

    assert description == (
        "Look up the current shipping status of an order.\n"
        "\n"
        "Use this whenever the user mentions an order number.\n"
        "  - indented one level further"
    )
    assert "\r" not in description
    assert "\n    " not in description


def test_crlf_docstring_honours_the_cut_and_the_note_check() -> None:
    assert (
        describe(
            "Look up the current shipping status of an order.\r\n    ---\r\n    TODO: hidden\r\n"
        )
        == "Look up the current shipping status of an order."
    )

    with pytest.raises(ToolDefinitionError) as caught:
        describe("Look up the current shipping status of an order.\r\n    TODO: shown\r\n")
    assert str(caught.value) == note_message("probe", "TODO")


# -- the 30-character floor ----------------------------------------------------------


def floor_message(name: str, text: str, cut: bool = False) -> str:
    message = (
        f"tool {name!r} needs a docstring/description of at least 30 characters so the model "
        f"can understand it; got {len(text)} chars: {text!r}"
    )
    if cut:
        message += (
            " (everything below the '---' line in its docstring is for humans and was not counted)"
        )
    return message


def test_thin_docstring_is_refused_with_the_pages_message() -> None:
    with pytest.raises(ToolDefinitionError) as caught:

        @tool(side_effecting=False)
        def lookup(q: str) -> str:
            """Look it up."""
            return "ok"

    assert str(caught.value) == (
        "tool 'lookup' needs a docstring/description of at least 30 characters so the model "
        "can understand it; got 11 chars: 'Look it up.'"
    )


def test_floor_below_the_cut_names_the_cut_in_its_message() -> None:
    with pytest.raises(ToolDefinitionError) as caught:

        @tool(side_effecting=False)
        def order_status(order_id: str) -> str:
            """Look it up.

            ---

            Look up the current shipping status of a customer order. Use
            this whenever the user mentions an order number.
            """
            return "in transit"

    assert str(caught.value) == (
        "tool 'order_status' needs a docstring/description of at least 30 characters so the "
        "model can understand it; got 11 chars: 'Look it up.' (everything below the '---' "
        "line in its docstring is for humans and was not counted)"
    )


def test_floor_is_exactly_thirty_characters() -> None:
    assert describe("x" * 30) == "x" * 30

    with pytest.raises(ToolDefinitionError) as caught:
        describe("x" * 29)
    assert str(caught.value) == floor_message("probe", "x" * 29)


def test_floor_measures_the_whole_text_not_the_first_line() -> None:
    doc = "Look it up.\n\nBy the official city name."

    assert len(doc) == 39
    assert describe(doc) == doc


def test_missing_docstring_is_refused_as_zero_characters() -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        describe(None)

    assert str(caught.value) == floor_message("probe", "")


def test_indentation_does_not_count_towards_the_floor() -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        describe("\n            Look it up, please.\n            ")

    assert str(caught.value) == floor_message("probe", "Look it up, please.")


# -- description= --------------------------------------------------------------------


def test_explicit_description_wins_over_a_thin_docstring_with_a_note() -> None:
    @tool(
        side_effecting=False,
        description="Search the product catalogue and return matching SKUs.",
    )
    def catalogue_search(q: str) -> str:
        """Search.

        TODO: this is O(n^2), rewrite before the Q3 launch.
        """
        return "ok"

    assert catalogue_search.description == (
        "Search the product catalogue and return matching SKUs."
    )
    assert catalogue_search.schema.description == catalogue_search.description


def test_explicit_description_is_verbatim_after_strip_with_no_marker_hunt() -> None:
    text = "  \n  TODO: append this item.\n---\n    Kept, indented and all.  \n\n"

    described = tool(side_effecting=False, description=text)(with_doc(None))

    assert described.description == "TODO: append this item.\n---\n    Kept, indented and all."


def test_explicit_description_is_not_crlf_normalised() -> None:
    text = "Search the product catalogue.\r\n    Return matching SKUs."

    assert FunctionTool.from_callable(with_doc(None), description=text).description == text


def test_explicit_description_still_has_to_clear_the_floor() -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        tool(side_effecting=False, description="   Search products.   " + " " * 20)(
            with_doc("A docstring that is long enough but is replaced anyway.")
        )

    assert str(caught.value) == floor_message("probe", "Search products.")


def test_from_callable_and_register_apply_the_same_description_rules() -> None:
    from agentkit.tools import ToolRegistry

    with pytest.raises(ToolDefinitionError) as caught:
        FunctionTool.from_callable(with_doc("Look it up."))
    assert str(caught.value) == floor_message("probe", "Look it up.")

    with pytest.raises(ToolDefinitionError) as caught:
        ToolRegistry().register(with_doc("Look up an order.\n- HACK: vendor workaround"))
    assert str(caught.value) == note_message("probe", "HACK")
