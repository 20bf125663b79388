"""Call time: every bad argument in one ToolArgumentError, before the body runs."""

import asyncio
import enum
import threading
from typing import Any, Optional

import pytest

from agentkit.core.contracts.types import Scope, ToolRequest
from agentkit.core.runtime import RunContext
from agentkit.core.testing import FakeLLM, make_test_ctx
from agentkit.tools import ToolArgumentError, tool


class Unit(enum.Enum):
    C = "celsius"
    F = "fahrenheit"


calls: list[dict[str, Any]] = []


@tool(side_effecting=True)
def book(city: str, nights: int, unit: Unit, rate: float = 1.0) -> str:
    """Book a hotel room in a city for a number of nights at a given rate."""
    calls.append({"city": city, "nights": nights, "unit": unit, "rate": rate})
    return "booked"


@pytest.fixture(autouse=True)
def _clear_calls() -> None:
    calls.clear()


# -- one error with every problem ----------------------------------------------------


async def test_every_missing_unexpected_and_invalid_argument_is_collected(
    ctx: RunContext,
) -> None:
    with pytest.raises(ToolArgumentError) as caught:
        await book.run({"nights": "3", "unit": "kelvin", "stars": 4, "rate": True}, ctx)

    error = caught.value
    assert error.tool == "book"
    assert error.missing == ("city",)
    assert error.unexpected == ("stars",)
    assert error.invalid == (
        ("nights", "expected an integer, got string '3'"),
        ("unit", "'kelvin' is not a valid Unit; expected one of ['celsius', 'fahrenheit']"),
        ("rate", "expected a number, got boolean true"),
    )
    assert error.accepted == ("city", "nights", "unit", "rate")
    assert str(error) == (
        "tool 'book' call rejected: missing required argument(s) ['city']; unexpected "
        "argument(s) ['stars']; invalid argument(s): nights: expected an integer, got string "
        "'3'; unit: 'kelvin' is not a valid Unit; expected one of ['celsius', 'fahrenheit']; "
        "rate: expected a number, got boolean true. Accepted arguments: "
        "['city', 'nights', 'unit', 'rate']"
    )
    assert calls == []


async def test_argument_errors_come_out_of_the_invoker_too(ctx: RunContext) -> None:
    with pytest.raises(ToolArgumentError) as caught:
        await ctx.invoker.invoke_tool(
            ToolRequest(name="book", arguments={"city": "Lisbon", "nights": 2}, tool=book), ctx
        )

    assert caught.value.missing == ("unit",)
    assert (caught.value.unexpected, caught.value.invalid) == ((), ())
    assert str(caught.value) == (
        "tool 'book' call rejected: missing required argument(s) ['unit']. Accepted arguments: "
        "['city', 'nights', 'unit', 'rate']"
    )
    assert calls == []


async def test_missing_arguments_are_listed_in_declaration_order(ctx: RunContext) -> None:
    with pytest.raises(ToolArgumentError) as caught:
        await book.run({}, ctx)

    assert caught.value.missing == ("city", "nights", "unit")
    assert calls == []


async def test_unknown_key_is_rejected_not_replaced_by_the_default(ctx: RunContext) -> None:
    sent: list[str] = []

    @tool(side_effecting=True)
    def notify(msg: str = "default message") -> str:
        """Page the on-call engineer with a short incident message."""
        sent.append(msg)
        return f"sent: {msg}"

    with pytest.raises(ToolArgumentError) as caught:
        await notify.run({"message": "prod is down"}, ctx)

    assert str(caught.value) == (
        "tool 'notify' call rejected: unexpected argument(s) ['message']. "
        "Accepted arguments: ['msg']"
    )
    assert caught.value.unexpected == ("message",)
    assert caught.value.accepted == ("msg",)
    assert (caught.value.missing, caught.value.invalid) == ((), ())
    assert sent == []


async def test_a_valid_call_runs_the_body_once_with_coerced_values(ctx: RunContext) -> None:
    result = await ctx.invoker.invoke_tool(
        ToolRequest(
            name="book",
            arguments={"city": "Lisbon", "nights": 2, "unit": "celsius"},
            tool=book,
        ),
        ctx,
    )

    assert result == "booked"
    assert calls == [{"city": "Lisbon", "nights": 2, "unit": Unit.C, "rate": 1.0}]


# -- primitives are never coerced ----------------------------------------------------


@tool(side_effecting=False)
def typed(count: int = 0, ratio: float = 0.0, name: str = "", flag: bool = False) -> Any:
    """Echo back the typed primitive values the call carried, unchanged."""
    return {"count": count, "ratio": ratio, "name": name, "flag": flag}


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        ({"count": "3"}, "expected an integer, got string '3'"),
        ({"count": True}, "expected an integer, got boolean true"),
        ({"count": 3.0}, "expected an integer, got number 3.0"),
        ({"ratio": "0.5"}, "expected a number, got string '0.5'"),
        ({"ratio": False}, "expected a number, got boolean false"),
        ({"name": 7}, "expected a string, got integer 7"),
        ({"name": None}, "expected a string, got null"),
        ({"flag": 1}, "expected a boolean, got integer 1"),
        ({"flag": "true"}, "expected a boolean, got string 'true'"),
    ],
    ids=repr,
)
async def test_primitives_are_not_coerced(
    ctx: RunContext, arguments: dict[str, Any], reason: str
) -> None:
    with pytest.raises(ToolArgumentError) as caught:
        await typed.run(arguments, ctx)

    ((name, _),) = arguments.items()
    assert caught.value.invalid == ((name, reason),)


async def test_an_integer_is_accepted_for_a_float(ctx: RunContext) -> None:
    result = await typed.run({"ratio": 3}, ctx)

    assert result["ratio"] == 3.0
    assert isinstance(result["ratio"], float)


async def test_well_typed_primitives_pass_through(ctx: RunContext) -> None:
    assert await typed.run({"count": 3, "ratio": 0.5, "name": "x", "flag": True}, ctx) == {
        "count": 3,
        "ratio": 0.5,
        "name": "x",
        "flag": True,
    }


# -- **kwargs ------------------------------------------------------------------------


async def test_kwargs_passes_extra_keys_through(ctx: RunContext) -> None:
    @tool(side_effecting=False)
    def flexible(query: str, **filters: Any) -> str:
        """Search the catalogue with a free-form set of extra filter keys."""
        return f"{query} + {sorted(filters)}"

    assert await flexible.run({"query": "boots", "colour": "red", "size": 42}, ctx) == (
        "boots + ['colour', 'size']"
    )
    assert flexible.schema.parameters == {
        "type": "object",
        "properties": {"query": {"type": "string"}},
        "required": ["query"],
    }


async def test_kwargs_does_not_excuse_a_missing_or_invalid_named_argument(
    ctx: RunContext,
) -> None:
    @tool(side_effecting=False)
    def flexible(query: str, limit: int = 5, **filters: Any) -> str:
        """Search the catalogue with a free-form set of extra filter keys."""
        return query

    with pytest.raises(ToolArgumentError) as caught:
        await flexible.run({"limit": "5", "colour": "red"}, ctx)

    assert caught.value.missing == ("query",)
    assert caught.value.unexpected == ()
    assert caught.value.invalid == (("limit", "expected an integer, got string '5'"),)
    assert caught.value.accepted == ("query", "limit")


# -- ctx / context injection ---------------------------------------------------------


async def test_ctx_is_injected_and_stripped_from_the_schema() -> None:
    @tool(side_effecting=False, idempotent=True)
    def list_projects(prefix: str, ctx) -> list[str]:  # type: ignore[no-untyped-def]
        """List the calling tenant's projects whose name starts with a prefix."""
        return [f"{ctx.scope.key()}/{prefix}-alpha", f"{ctx.scope.key()}/{prefix}-beta"]

    ctx = make_test_ctx(llm=FakeLLM(), scope=Scope(org_id=7, domain_id=1))

    assert list_projects.schema.parameters == {
        "type": "object",
        "properties": {"prefix": {"type": "string"}},
        "required": ["prefix"],
    }
    assert await list_projects.run({"prefix": "web"}, ctx) == [
        "org7:dom1/web-alpha",
        "org7:dom1/web-beta",
    ]


def _context_tools() -> list[Any]:
    def unannotated_ctx(q: str, ctx):  # type: ignore[no-untyped-def]
        """Return the run context this tool was handed by the invoker."""
        return ctx

    def typed_ctx(q: str, ctx: RunContext) -> Any:
        """Return the run context this tool was handed by the invoker."""
        return ctx

    def optional_ctx(q: str, ctx: RunContext | None = None) -> Any:
        """Return the run context this tool was handed by the invoker."""
        return ctx

    def typing_optional_ctx(q: str, ctx: Optional[RunContext] = None) -> Any:  # noqa: UP045
        """Return the run context this tool was handed by the invoker."""
        return ctx

    def unannotated_context(context, q: str):  # type: ignore[no-untyped-def]
        """Return the run context this tool was handed by the invoker."""
        return context

    def typed_context(q: str, context: RunContext) -> Any:
        """Return the run context this tool was handed by the invoker."""
        return context

    return [
        unannotated_ctx,
        typed_ctx,
        optional_ctx,
        typing_optional_ctx,
        unannotated_context,
        typed_context,
    ]


@pytest.mark.parametrize("fn", _context_tools(), ids=lambda fn: fn.__name__)
async def test_context_parameter_receives_the_live_context(fn: Any, ctx: RunContext) -> None:
    declared = tool(side_effecting=False)(fn)

    assert declared.schema.parameters == {
        "type": "object",
        "properties": {"q": {"type": "string"}},
        "required": ["q"],
    }
    assert await declared.run({"q": "x"}, ctx) is ctx
    assert (
        await ctx.invoker.invoke_tool(
            ToolRequest(name=declared.name, arguments={"q": "x"}, tool=declared), ctx
        )
        is ctx
    )


@pytest.mark.parametrize("fn", _context_tools(), ids=lambda fn: fn.__name__)
async def test_a_context_key_sent_by_the_model_is_dropped(fn: Any, ctx: RunContext) -> None:
    declared = tool(side_effecting=False)(fn)
    name = "ctx" if "ctx" in fn.__name__ else "context"

    assert await declared.run({"q": "x", name: "spoofed"}, ctx) is ctx


async def test_a_ctx_key_is_rejected_when_the_tool_declares_no_ctx(ctx: RunContext) -> None:
    @tool(side_effecting=False)
    def lookup(q: str) -> str:
        """Look up the most recent census population for a named city."""
        return q

    with pytest.raises(ToolArgumentError) as caught:
        await lookup.run({"q": "x", "ctx": {"scope": "org1"}}, ctx)

    assert caught.value.unexpected == ("ctx",)
    assert str(caught.value) == (
        "tool 'lookup' call rejected: unexpected argument(s) ['ctx']. Accepted arguments: ['q']"
    )


async def test_a_data_parameter_called_context_stays_advertised(ctx: RunContext) -> None:
    @tool(side_effecting=False)
    def summarise(context: str, length: int = 3) -> str:
        """Summarise a passage of context text into a few short sentences."""
        return f"{length}:{context}"

    assert summarise.schema.parameters == {
        "type": "object",
        "properties": {"context": {"type": "string"}, "length": {"type": "integer"}},
        "required": ["context"],
    }
    assert await summarise.run({"context": "some passage"}, ctx) == "3:some passage"

    with pytest.raises(ToolArgumentError) as caught:
        await summarise.run({}, ctx)
    assert caught.value.missing == ("context",)


async def test_a_run_without_a_context_injects_none() -> None:
    @tool(side_effecting=False)
    async def weather(city: str, unit: Unit, ctx) -> str:  # type: ignore[no-untyped-def]
        """Report the weather for a city in the requested unit of measure."""
        return f"{type(unit).__name__}={unit!r} ctx={ctx!r}"

    assert await weather.run({"city": "Lisbon", "unit": "celsius"}, None) == (
        "Unit=<Unit.C: 'celsius'> ctx=None"
    )


# -- where the body runs -------------------------------------------------------------


async def test_sync_tool_body_runs_in_a_worker_thread(ctx: RunContext) -> None:
    seen: list[threading.Thread] = []

    @tool(side_effecting=False)
    def where(q: str) -> str:
        """Report which thread the body of this synchronous tool ran in."""
        seen.append(threading.current_thread())
        return q

    assert await where.run({"q": "x"}, ctx) == "x"
    assert seen[0] is not threading.main_thread()


async def test_sync_tool_does_not_block_the_event_loop(ctx: RunContext) -> None:
    started, release = threading.Event(), threading.Event()

    @tool(side_effecting=False)
    def blocking(q: str) -> str:
        """Block until the event loop says so, then return the query."""
        started.set()
        assert release.wait(timeout=10)
        return q

    task = asyncio.create_task(blocking.run({"q": "done"}, ctx))
    assert await asyncio.to_thread(started.wait, 10)
    release.set()  # only reachable if the loop kept running while the body blocked
    assert await task == "done"


async def test_async_tool_body_runs_on_the_event_loop(ctx: RunContext) -> None:
    seen: list[Any] = []
    loop = asyncio.get_running_loop()

    @tool(side_effecting=False)
    async def where(q: str) -> str:
        """Report which thread the body of this asynchronous tool ran in."""
        seen.append((threading.current_thread(), asyncio.get_running_loop()))
        return q

    assert await where.run({"q": "x"}, ctx) == "x"
    assert seen == [(threading.main_thread(), loop)]
