"""tracing(): one span per call, GenAI attribute names, and a tracer can never break a call."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ToolCall, ToolRequest, Usage
from agentkit.core.policies import tracing
from agentkit.core.testing import FakeLLM, RecordingTracer, Turn, make_test_ctx
from agentkit.tools import ToolShapeError, tool


@tool(side_effecting=False, idempotent=True)
def city_population(city: str) -> int:
    """Look up the most recent census population for a named city."""
    return {"lisbon": 545_000, "porto": 231_000}.get(city.lower(), 0)


@tool(side_effecting=False)
def long_text(n: int) -> str:
    """Return a long run of the letter x, for testing result size caps."""
    return "x" * n


def agent() -> Agent:
    return Agent(name="atlas", model="fake", prompt="p",
                 cognition=ReActCognition(tools=[city_population]))


async def test_an_agent_run_produces_a_nested_span_tree() -> None:
    tracer = RecordingTracer()
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "city_population", {"city": "Lisbon"}),
                         ToolCall("c2", "city_population", {"city": "Porto"})),
             usage=Usage(input_tokens=10, output_tokens=5)),
        Turn(content="Both.", usage=Usage(input_tokens=20, output_tokens=2)),
    ])
    ctx = make_test_ctx(llm=llm, tracer=tracer, tool_middleware=[tracing()],
                        chat_middleware=[tracing()])
    await agent().run("sizes?", ctx)
    names = [(s.name, s.parent_id) for s in tracer.spans]
    root = tracer.spans[0]
    assert root.name == "invoke_agent atlas" and root.parent_id is None
    assert names == [
        ("invoke_agent atlas", None),
        ("chat fake", root.span_id),
        ("execute_tool city_population", root.span_id),
        ("execute_tool city_population", root.span_id),
        ("chat fake", root.span_id),
    ]
    chat = tracer.spans[1]
    assert chat.attributes["gen_ai.operation.name"] == "chat"
    assert chat.attributes["gen_ai.request.model"] == "fake"
    assert chat.attributes["gen_ai.usage.input_tokens"] == 10
    assert chat.attributes["gen_ai.usage.output_tokens"] == 5
    assert chat.attributes["gen_ai.response.finish_reasons"] == ["tool_calls"]
    tool_span = tracer.spans[2]
    assert tool_span.attributes["gen_ai.operation.name"] == "execute_tool"
    assert tool_span.attributes["gen_ai.tool.name"] == "city_population"
    assert tool_span.attributes["gen_ai.tool.call.id"] == "c1"
    assert tool_span.attributes["agentkit.duration_ms"] >= 0
    assert tool_span.events == [
        ("gen_ai.tool.result", {"content": "545000", "truncated": False, "length": 6})
    ]
    assert root.attributes["gen_ai.usage.input_tokens"] == 30
    assert root.attributes["agentkit.stop_reason"] == "complete"
    assert all(s.end_time is not None for s in tracer.spans)


async def test_result_events_are_capped() -> None:
    tracer = RecordingTracer()
    ctx = make_test_ctx(tracer=tracer, tool_middleware=[tracing(result_cap=10)])
    await ctx.invoker.invoke_tool(ToolRequest("long_text", {"n": 50}, long_text), ctx)
    (span,) = tracer.spans
    assert span.events == [
        ("gen_ai.tool.result", {"content": "x" * 10, "truncated": True, "length": 50})
    ]


async def test_errors_are_counted_and_recorded() -> None:
    tracer = RecordingTracer()
    ctx = make_test_ctx(tracer=tracer, tool_middleware=[tracing()])
    with pytest.raises(Exception, match="missing required"):
        await ctx.invoker.invoke_tool(ToolRequest("long_text", {}, long_text), ctx)
    (span,) = tracer.spans
    assert span.attributes["error.type"] == "ToolArgumentError"
    assert span.attributes["agentkit.error_count"] == 1
    assert len(span.errors) == 1


@dataclass
class Quote:
    symbol: str
    price: float


@tool(side_effecting=False)
def get_quote(symbol: str) -> Quote:
    """Return the latest traded price for a stock ticker symbol."""
    return "nope"  # type: ignore[return-value]


async def test_shape_mismatch_event_lands_on_the_open_tool_span() -> None:
    tracer = RecordingTracer()
    ctx = make_test_ctx(tracer=tracer, tool_middleware=[tracing()])
    with pytest.raises(ToolShapeError):
        await ctx.invoker.invoke_tool(ToolRequest("get_quote", {"symbol": "A"}, get_quote), ctx)
    (span,) = tracer.spans
    assert [name for name, _ in span.events] == ["tool.shape_mismatch"]


class ExplodingTracer:
    def start_span(self, name: str, attributes: Mapping[str, Any] | None = None,
                   parent: Any = None) -> Any:
        raise RuntimeError("collector unreachable")


class ExplodingSpan:
    def set_attribute(self, key: str, value: Any) -> None:
        raise RuntimeError("boom")

    def add_event(self, name: str, attributes: Any = None) -> None:
        raise RuntimeError("boom")

    def record_error(self, error: BaseException) -> None:
        raise RuntimeError("boom")

    def end(self) -> None:
        raise RuntimeError("boom")


class HalfBrokenTracer:
    def start_span(self, name: str, attributes: Mapping[str, Any] | None = None,
                   parent: Any = None) -> Any:
        return ExplodingSpan()


@pytest.mark.parametrize("broken", [ExplodingTracer(), HalfBrokenTracer()])
async def test_a_broken_tracer_never_breaks_a_run(broken: Any) -> None:
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "city_population", {"city": "Lisbon"}),)),
        Turn(content="545,000."),
    ])
    ctx = make_test_ctx(llm=llm, tracer=broken, tool_middleware=[tracing()],
                        chat_middleware=[tracing()])
    result = await agent().run("How big is Lisbon?", ctx)
    assert result.output == "545,000."


async def test_without_a_tracer_calls_pass_through() -> None:
    ctx = make_test_ctx(tool_middleware=[tracing()])
    request = ToolRequest("city_population", {"city": "porto"}, city_population)
    assert await ctx.invoker.invoke_tool(request, ctx) == 231_000
