"""OpenAILLM against a real HTTP server speaking the Chat Completions wire format."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentkit.agents import Agent, FinalEvent, TextDeltaEvent, ToolCallEvent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.errors import ProviderError, UnsupportedSetting
from agentkit.core.contracts.types import ChatRequest, Message, ModelSettings, Reasoning
from agentkit.core.policies import tracing
from agentkit.core.testing import RecordingTracer, make_test_ctx
from agentkit.providers import OpenAILLM

from .cities import broken_lookup, city_population
from .conftest import Reply, WireServer

MODEL = "gpt-4o-mini"



def completion(content: str | None, calls: list[tuple[str, str, str]] = (),  # type: ignore[assignment]
               finish: str = "stop", usage: dict[str, Any] | None = None) -> Reply:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
            for i, n, a in calls
        ]
    return Reply(body={
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": MODEL,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    })


def llm(wire: WireServer) -> OpenAILLM:
    return OpenAILLM(api_key="sk-test", base_url=f"{wire.url}/v1", max_retries=0)


def agent() -> Agent:
    return Agent(name="atlas", model=MODEL, prompt="You answer questions about cities.",
                 cognition=ReActCognition(tools=[city_population, broken_lookup]))


async def test_a_react_run_maps_tools_calls_and_results_exactly(wire: WireServer) -> None:
    wire.reply(
        completion(None, [("call_a", "city_population", '{"city": "Lisbon"}'),
                          ("call_b", "broken_lookup", '{"code": "LIS"}')], "tool_calls",
                   {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120,
                    "prompt_tokens_details": {"cached_tokens": 40}}),
        completion("Lisbon has about 545,000 residents."),
    )
    result = await agent().run("How big is Lisbon?", make_test_ctx(llm=llm(wire)))
    assert result.output == "Lisbon has about 545,000 residents."
    assert [r.path for r in wire.requests] == ["/v1/chat/completions"] * 2
    assert wire.requests[0].headers["authorization"] == "Bearer sk-test"
    first, second = wire.bodies()
    assert first == {
        "model": MODEL,
        "messages": [
            {"role": "system", "content": "You answer questions about cities."},
            {"role": "user", "content": "How big is Lisbon?"},
        ],
        "tools": [
            {"type": "function", "function": {
                "name": "broken_lookup",
                "description": "Look up an airport by its code; this one always fails, for tests.",
                "parameters": {"type": "object", "properties": {"code": {"type": "string"}},
                               "required": ["code"]}}},
            {"type": "function", "function": {
                "name": "city_population",
                "description": "Look up the most recent census population for a named city.",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                               "required": ["city"]}}},
        ],
    }
    assert second["messages"][2:] == [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_a", "type": "function",
             "function": {"name": "city_population", "arguments": '{"city": "Lisbon"}'}},
            {"id": "call_b", "type": "function",
             "function": {"name": "broken_lookup", "arguments": '{"code": "LIS"}'}},
        ]},
        {"role": "tool", "tool_call_id": "call_a", "content": "545000"},
        {"role": "tool", "tool_call_id": "call_b",
         "content": "tool 'broken_lookup' failed: RuntimeError: airport database offline"},
    ]
    usage = result.usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.output_tokens) == (70, 40, 25)
    assert usage.cost_usd == pytest.approx((70 * 0.15 + 40 * 0.075 + 25 * 0.6) / 1e6)


async def test_malformed_json_arguments_become_a_repair_turn(wire: WireServer) -> None:
    wire.reply(
        completion(None, [("call_1", "city_population", '{"city": "Lisb')], "tool_calls"),
        completion(None, [("call_2", "city_population", '{"city": "Lisbon"}')], "tool_calls"),
        completion("545,000."),
    )
    result = await agent().run("How big is Lisbon?", make_test_ctx(llm=llm(wire)))
    assert result.output == "545,000."
    repair = wire.bodies()[1]["messages"][-1]
    assert repair["role"] == "tool" and repair["tool_call_id"] == "call_1"
    assert repair["content"].startswith(
        "tool 'city_population' call rejected: invalid argument(s): arguments: not valid JSON "
        "(Unterminated string starting at"
    )
    assert repair["content"].endswith("Accepted arguments: ['city']")
    assert wire.bodies()[2]["messages"][-1]["content"] == "545000"


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": MODEL,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def usage_chunk(prompt: int, completion_tokens: int) -> dict[str, Any]:
    return {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": MODEL,
            "choices": [], "usage": {"prompt_tokens": prompt,
                                     "completion_tokens": completion_tokens,
                                     "total_tokens": prompt + completion_tokens}}


def stream(*chunks: dict[str, Any]) -> Reply:
    return Reply(events=[(None, c) for c in chunks] + [(None, "[DONE]")])


async def test_streaming_assembles_parallel_tool_call_fragments(wire: WireServer) -> None:
    def piece(index: int, **fields: Any) -> dict[str, Any]:
        return {"tool_calls": [{"index": index, **fields}]}

    wire.reply(
        stream(
            chunk({"role": "assistant", "content": None}),
            chunk(piece(0, id="call_1", type="function",
                        function={"name": "city_population", "arguments": ""})),
            chunk(piece(0, function={"arguments": '{"ci'})),
            chunk(piece(1, id="call_2", type="function",
                        function={"name": "city_population", "arguments": '{"city"'})),
            chunk(piece(0, function={"arguments": 'ty": "Lisbon"}'})),
            chunk(piece(1, function={"arguments": ': "Porto"}'})),
            chunk({}, "tool_calls"),
            usage_chunk(30, 12),
        ),
        stream(
            chunk({"role": "assistant", "content": ""}),
            chunk({"content": "Lisbon is "}),
            chunk({"content": "bigger."}),
            chunk({}, "stop"),
            usage_chunk(50, 4),
        ),
    )
    events = [e async for e in agent().stream("Which is bigger?", make_test_ctx(llm=llm(wire)))]
    calls = [e.call for e in events if isinstance(e, ToolCallEvent)]
    assert [(c.id, c.name, dict(c.arguments)) for c in calls] == [
        ("call_1", "city_population", {"city": "Lisbon"}),
        ("call_2", "city_population", {"city": "Porto"}),
    ]
    assert [e.text for e in events if isinstance(e, TextDeltaEvent)] == ["Lisbon is ", "bigger."]
    final = events[-1]
    assert isinstance(final, FinalEvent)
    assert final.result.output == "Lisbon is bigger."
    assert (final.result.usage.input_tokens, final.result.usage.output_tokens) == (80, 16)
    first = wire.bodies()[0]
    assert first["stream"] is True
    assert first["stream_options"] == {"include_usage": True}
    replayed = wire.bodies()[1]["messages"][2]["tool_calls"]
    assert [json.loads(c["function"]["arguments"]) for c in replayed] == [
        {"city": "Lisbon"}, {"city": "Porto"},
    ]


@pytest.mark.parametrize(
    ("status", "body", "kind", "transient"),
    [
        (429, {"error": {"message": "slow down", "type": "rate_limit"}}, "rate_limit", True),
        (503, {"error": {"message": "unavailable"}}, "server_error", True),
        (401, {"error": {"message": "bad key", "code": "invalid_api_key"}}, "authentication",
         False),
        (400, {"error": {"message": "too long", "code": "context_length_exceeded"}},
         "context_length", False),
        (400, {"error": {"message": "This model's maximum context length is 8192 tokens. "
                         "However, you requested 9001 tokens.", "type": "BadRequestError"}},
         "context_length", False),
        (429, {"error": {"message": "You exceeded your current quota", "type":
                         "insufficient_quota", "code": "insufficient_quota"}}, "billing", False),
    ],
)
async def test_errors_keep_the_providers_message_and_say_whether_to_retry(
    wire: WireServer, status: int, body: dict[str, Any], kind: str, transient: bool
) -> None:
    wire.reply(Reply(status, body))
    with pytest.raises(ProviderError) as info:
        await llm(wire).chat(ChatRequest(model=MODEL, messages=(Message("user", "hi"),)),
                             make_test_ctx())
    assert (info.value.status, info.value.kind, info.value.transient) == (status, kind, transient)
    assert body["error"]["message"] in str(info.value)


async def test_an_openai_compatible_server_by_spec(wire: WireServer) -> None:
    from agentkit.providers import llm_for, parse_model_spec

    spec = f"openai:llama3.1@{wire.url}/v1"
    wire.reply(completion("hi from llama"))
    provider = llm_for(spec, api_key="unused")
    agent_ = Agent(name="local", model=parse_model_spec(spec).model, prompt="p")
    result = await agent_.run("hello", make_test_ctx(llm=provider))
    assert result.output == "hi from llama"
    assert wire.bodies()[0]["model"] == "llama3.1"


async def test_a_model_without_a_price_is_named_in_usage_and_on_the_spans(
    wire: WireServer,
) -> None:
    """Without a money ceiling an unpriced model runs, and its 0 cost says it is unknown."""
    wire.reply(
        completion(None, [("call_a", "city_population", '{"city": "Porto"}')], "tool_calls"),
        completion("Porto has about 231,000 residents."),
    )
    tracer = RecordingTracer()
    unpriced = Agent(name="atlas", model="gpt-5-pro", prompt="You answer questions.",
                     cognition=ReActCognition(tools=[city_population]))
    ctx = make_test_ctx(llm=llm(wire), tracer=tracer, chat_middleware=[tracing()])
    result = await unpriced.run("How big is Porto?", ctx)

    assert (result.usage.requests, result.usage.input_tokens) == (2, 20)
    assert (result.usage.cost_usd, result.usage.unpriced_models) == (0.0, ("gpt-5-pro",))
    spans = [*tracer.named("invoke_agent atlas"), *tracer.named("chat gpt-5-pro")]
    assert [(s.attributes["agentkit.cost_usd"], s.attributes["agentkit.unpriced_models"])
            for s in spans] == [(0.0, ["gpt-5-pro"])] * 3


async def test_a_priced_model_has_its_cost_on_the_spans_and_no_unpriced_models(
    wire: WireServer,
) -> None:
    wire.reply(completion("Lisbon."))
    tracer = RecordingTracer()
    ctx = make_test_ctx(llm=llm(wire), tracer=tracer, chat_middleware=[tracing()])
    result = await agent().run("Which city?", ctx)
    cost = (10 * 0.15 + 5 * 0.6) / 1e6
    assert (result.usage.cost_usd, result.usage.unpriced_models) == (pytest.approx(cost), ())
    span = tracer.named("invoke_agent atlas")[0]
    assert span.attributes["agentkit.cost_usd"] == pytest.approx(cost)
    assert "agentkit.unpriced_models" not in span.attributes


async def test_reasoning_is_an_effort_and_its_tokens_are_counted_apart(wire: WireServer) -> None:
    wire.reply(completion("545,000.", usage={
        "prompt_tokens": 10, "completion_tokens": 50, "total_tokens": 60,
        "completion_tokens_details": {"reasoning_tokens": 42},
    }))
    request = ChatRequest(model=MODEL, messages=(Message("user", "How big is Lisbon?"),),
                          settings=ModelSettings(reasoning=Reasoning(effort="high")))
    result = await llm(wire).chat(request, make_test_ctx())
    assert wire.bodies()[0]["reasoning_effort"] == "high"
    assert (result.usage.output_tokens, result.usage.reasoning_tokens) == (8, 42)
    for asked, reason in (
        (Reasoning(summary=True), "Chat Completions returns no reasoning summary; the "
         "Responses API (the spec openai:MODEL) does, or leave summary False"),
        (Reasoning(budget_tokens=1024), "Chat Completions takes an effort (reasoning_effort), "
         "not a token budget (budget_tokens=1024); leave budget_tokens None"),
    ):
        refused = ChatRequest(model=MODEL, messages=request.messages,
                              settings=ModelSettings(reasoning=asked))
        with pytest.raises(UnsupportedSetting) as info:
            await llm(wire).chat(refused, make_test_ctx())
        assert info.value.reason == reason
    assert len(wire.requests) == 1
