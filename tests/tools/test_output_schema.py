"""output_schema=: what a tool returns is checked against its declared structure."""

import dataclasses
from collections.abc import Mapping
from typing import Any

import attrs
import pydantic
import pytest

from agentkit.core.runtime import RunContext, open_span
from agentkit.core.testing import RecordingTracer
from agentkit.tools import ToolShapeError, tool


@dataclasses.dataclass
class Quote:
    symbol: str
    price: float


@attrs.define
class AttrsQuote:
    symbol: str
    price: float


class ModelQuote(pydantic.BaseModel):
    symbol: str
    price: float


@tool(side_effecting=False, idempotent=True)
def get_quote(symbol: str) -> Quote:
    """Return the latest traded price for a stock ticker symbol."""
    return "not a Quote at all"  # type: ignore[return-value]


# -- inference -----------------------------------------------------------------------


@pytest.mark.parametrize("cls", [Quote, AttrsQuote, ModelQuote])
def test_output_schema_is_inferred_from_a_structured_return_annotation(cls: type) -> None:
    def quote(symbol: str):  # type: ignore[no-untyped-def]
        """Return the latest traded price for a stock ticker symbol."""

    quote.__annotations__ = {"return": cls}

    assert tool(side_effecting=False)(quote).output_schema is cls


@pytest.mark.parametrize(
    "annotation",
    [str, Any, int, list[Quote], Quote | None, Quote | str, dict[str, Quote], None],
    ids=["str", "Any", "int", "list[Quote]", "Quote | None", "Quote | str", "dict", "None"],
)
def test_output_schema_is_none_for_primitives_any_generics_and_unions(annotation: Any) -> None:
    def quote(symbol: str):  # type: ignore[no-untyped-def]
        """Return the latest traded price for a stock ticker symbol."""

    quote.__annotations__ = {"return": annotation}

    assert tool(side_effecting=False)(quote).output_schema is None


def test_output_schema_is_none_without_a_return_annotation() -> None:
    @tool(side_effecting=False)
    def quote(symbol: str):  # type: ignore[no-untyped-def]
        """Return the latest traded price for a stock ticker symbol."""

    assert quote.output_schema is None


async def test_unvalidated_tool_returns_whatever_the_body_returned(ctx: RunContext) -> None:
    @tool(side_effecting=False)
    def quote(symbol: str) -> str:
        """Return the latest traded price for a stock ticker symbol."""
        return 42  # type: ignore[return-value]

    assert await quote.run({"symbol": "ACME"}, ctx) == 42


# -- mismatch ------------------------------------------------------------------------


async def test_mismatch_raises_tool_shape_error_with_raw_and_expected(ctx: RunContext) -> None:
    assert get_quote.output_schema is Quote

    with pytest.raises(ToolShapeError) as caught:
        await get_quote.run({"symbol": "ACME"}, ctx)

    assert str(caught.value) == "tool 'get_quote' returned value not matching schema 'Quote'"
    assert caught.value.raw == "not a Quote at all"
    assert caught.value.expected == "Quote"


@pytest.mark.parametrize("cls", [AttrsQuote, ModelQuote])
async def test_mismatch_is_caught_for_attrs_and_pydantic_returns(
    cls: type, ctx: RunContext
) -> None:
    def quote(symbol: str):  # type: ignore[no-untyped-def]
        """Return the latest traded price for a stock ticker symbol."""
        return ["not", "a", "quote"]

    quote.__annotations__ = {"return": cls}

    with pytest.raises(ToolShapeError) as caught:
        await tool(side_effecting=False)(quote).run({"symbol": "ACME"}, ctx)

    assert str(caught.value) == (
        f"tool 'quote' returned value not matching schema '{cls.__name__}'"
    )
    assert caught.value.raw == ["not", "a", "quote"]
    assert caught.value.expected == cls.__name__


async def test_a_matching_value_is_returned(ctx: RunContext) -> None:
    @tool(side_effecting=False)
    async def quote(symbol: str) -> Quote:
        """Return the latest traded price for a stock ticker symbol."""
        return Quote(symbol, 1.5)

    assert await quote.run({"symbol": "ACME"}, ctx) == Quote("ACME", 1.5)


async def test_shape_is_checked_after_the_body_ran(ctx: RunContext) -> None:
    ran: list[str] = []

    @tool(side_effecting=True)
    def place_order(symbol: str) -> Quote:
        """Place a market order for a ticker symbol and return the fill price."""
        ran.append(symbol)
        return {"symbol": symbol}  # type: ignore[return-value]

    with pytest.raises(ToolShapeError) as caught:
        await place_order.run({"symbol": "ACME"}, ctx)

    assert ran == ["ACME"]
    assert caught.value.raw == {"symbol": "ACME"}


# -- override and opt-out ------------------------------------------------------------


async def test_explicit_class_overrides_the_return_annotation(ctx: RunContext) -> None:
    @tool(side_effecting=False, output_schema=Quote)
    def quote(symbol: str) -> Any:
        """Return the latest traded price for a stock ticker symbol."""
        return 12.5

    assert quote.output_schema is Quote
    with pytest.raises(ToolShapeError) as caught:
        await quote.run({"symbol": "ACME"}, ctx)
    assert caught.value.raw == 12.5
    assert caught.value.expected == "Quote"


async def test_explicit_class_replaces_an_inferred_one(ctx: RunContext) -> None:
    @tool(side_effecting=False, output_schema=ModelQuote)
    def quote(symbol: str) -> Quote:
        """Return the latest traded price for a stock ticker symbol."""
        return Quote(symbol, 1.0)

    assert quote.output_schema is ModelQuote
    with pytest.raises(ToolShapeError) as caught:
        await quote.run({"symbol": "ACME"}, ctx)
    assert str(caught.value) == "tool 'quote' returned value not matching schema 'ModelQuote'"


async def test_output_schema_none_opts_out_even_for_a_dataclass_return(ctx: RunContext) -> None:
    @tool(side_effecting=False, output_schema=None)
    def quote(symbol: str) -> Quote:
        """Return the latest traded price for a stock ticker symbol."""
        return "not a Quote at all"  # type: ignore[return-value]

    assert quote.output_schema is None
    assert await quote.run({"symbol": "ACME"}, ctx) == "not a Quote at all"


# -- the span event ------------------------------------------------------------------


async def test_mismatch_adds_a_shape_mismatch_event_to_the_open_span(ctx: RunContext) -> None:
    tracer = RecordingTracer()

    with pytest.raises(ToolShapeError), open_span(tracer, "execute_tool"):
        await get_quote.run({"symbol": "ACME"}, ctx)

    (span,) = tracer.named("execute_tool")
    assert span.events == [
        (
            "tool.shape_mismatch",
            {
                "gen_ai.tool.name": "get_quote",
                "expected": "Quote",
                "got": "string 'not a Quote at all'",
                "reason": "expected an object for Quote, got string 'not a Quote at all'",
            },
        )
    ]


async def test_a_valid_result_adds_no_event(ctx: RunContext) -> None:
    tracer = RecordingTracer()

    @tool(side_effecting=False)
    def quote(symbol: str) -> Quote:
        """Return the latest traded price for a stock ticker symbol."""
        return Quote(symbol, 2.0)

    with open_span(tracer, "execute_tool"):
        await quote.run({"symbol": "ACME"}, ctx)

    assert tracer.named("execute_tool")[0].events == []


async def test_mismatch_without_an_open_span_still_raises(ctx: RunContext) -> None:
    with pytest.raises(ToolShapeError) as caught:
        await get_quote.run({"symbol": "ACME"}, ctx)

    assert caught.value.expected == "Quote"


class ExplodingSpan:
    """A span whose add_event fails, as a broken exporter would."""

    def __init__(self) -> None:
        self.errors: list[BaseException] = []

    def set_attribute(self, key: str, value: Any) -> None:
        pass

    def add_event(self, name: str, attributes: Mapping[str, Any] | None = None) -> None:
        raise RuntimeError("tracer exporter is down")

    def record_error(self, error: BaseException) -> None:
        self.errors.append(error)

    def end(self) -> None:
        pass


class ExplodingTracer:
    def __init__(self) -> None:
        self.spans: list[ExplodingSpan] = []

    def start_span(
        self, name: str, attributes: Mapping[str, Any] | None = None, parent: Any = None
    ) -> ExplodingSpan:
        span = ExplodingSpan()
        self.spans.append(span)
        return span


async def test_a_failing_tracer_does_not_break_the_tool_path(ctx: RunContext) -> None:
    tracer = ExplodingTracer()
    escaped: list[BaseException] = []

    try:
        with open_span(tracer, "execute_tool"):
            await get_quote.run({"symbol": "ACME"}, ctx)
    except BaseException as error:
        escaped.append(error)

    (error,) = escaped
    assert type(error) is ToolShapeError
    assert str(error) == "tool 'get_quote' returned value not matching schema 'Quote'"
    chained = []
    link: BaseException | None = error
    while link is not None:
        chained.append(link)
        link = link.__cause__ or link.__context__
    assert not any(isinstance(link, RuntimeError) for link in chained)
    (span,) = tracer.spans
    assert span.errors == [error]
