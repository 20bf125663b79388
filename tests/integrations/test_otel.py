"""The OpenTelemetry adapter, with the real SDK and an in-memory exporter."""

from __future__ import annotations

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ToolCall, Usage
from agentkit.core.policies import tracing
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.integrations.otel import OTelTracer
from agentkit.tools import tool


@tool(side_effecting=False, idempotent=True)
def city_population(city: str) -> int:
    """Look up the most recent census population for a named city."""
    return {"lisbon": 545_000, "porto": 231_000}.get(city.lower(), 0)


async def test_span_tree_of_an_agent_run_with_two_tool_calls() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "city_population", {"city": "Lisbon"}),
                         ToolCall("c2", "city_population", {"city": "Porto"})),
             usage=Usage(input_tokens=12, output_tokens=7)),
        Turn(content="Lisbon is bigger.", usage=Usage(input_tokens=30, output_tokens=4)),
    ])
    agent = Agent(name="atlas", model="fake", prompt="p",
                  cognition=ReActCognition(tools=[city_population]))
    ctx = make_test_ctx(llm=llm, tracer=OTelTracer(provider), tool_middleware=[tracing()],
                        chat_middleware=[tracing()])
    await agent.run("Which is bigger?", ctx)

    spans = sorted(exporter.get_finished_spans(), key=lambda s: s.start_time or 0)
    by_id = {s.context.span_id: s for s in spans}
    tree = [
        (s.name, by_id[s.parent.span_id].name if s.parent is not None else None) for s in spans
    ]
    assert tree == [
        ("invoke_agent atlas", None),
        ("chat fake", "invoke_agent atlas"),
        ("execute_tool city_population", "invoke_agent atlas"),
        ("execute_tool city_population", "invoke_agent atlas"),
        ("chat fake", "invoke_agent atlas"),
    ]
    assert len({s.context.trace_id for s in spans}) == 1
    root, first_chat, tool_a, tool_b, _ = spans
    assert root.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert root.attributes["gen_ai.agent.name"] == "atlas"
    assert root.attributes["gen_ai.usage.input_tokens"] == 42
    assert first_chat.attributes["gen_ai.usage.output_tokens"] == 7
    assert tuple(first_chat.attributes["gen_ai.response.finish_reasons"]) == ("tool_calls",)
    assert {tool_a.attributes["gen_ai.tool.call.id"], tool_b.attributes["gen_ai.tool.call.id"]} \
        == {"c1", "c2"}
    assert tool_a.attributes["gen_ai.tool.name"] == "city_population"
    (event,) = tool_a.events
    assert event.name == "gen_ai.tool.result"
    assert event.attributes["content"] in ("545000", "231000")
