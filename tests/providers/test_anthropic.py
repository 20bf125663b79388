"""AnthropicLLM against a real HTTP server speaking the Messages API wire format."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit.agents import Agent, FinalEvent, TextDeltaEvent, ToolCallEvent, ToolResultEvent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.errors import ProviderError
from agentkit.core.contracts.types import ChatRequest, LLMResult, Message
from agentkit.core.policies import retry
from agentkit.core.testing import make_test_ctx
from agentkit.providers import AnthropicLLM

from .cities import broken_lookup, city_population
from .conftest import Reply, WireServer

MODEL = "claude-sonnet-4-6"



def message(content: list[dict[str, Any]], stop: str, usage: dict[str, int] | None = None) -> Reply:
    return Reply(body={
        "id": "msg_1", "type": "message", "role": "assistant", "model": MODEL,
        "content": content, "stop_reason": stop, "stop_sequence": None,
        "usage": usage or {"input_tokens": 10, "output_tokens": 5},
    })


def llm(wire: WireServer) -> AnthropicLLM:
    return AnthropicLLM(api_key="test-key", base_url=wire.url, max_retries=0)


def agent() -> Agent:
    return Agent(name="atlas", model=MODEL, prompt="You answer questions about cities.",
                 cognition=ReActCognition(tools=[city_population, broken_lookup]))


async def test_a_react_run_maps_tools_calls_and_results_exactly(wire: WireServer) -> None:
    wire.reply(
        message([
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_a", "name": "city_population",
             "input": {"city": "Lisbon"}},
            {"type": "tool_use", "id": "toolu_b", "name": "broken_lookup",
             "input": {"code": "LIS"}},
        ], "tool_use", {"input_tokens": 100, "output_tokens": 40,
                        "cache_read_input_tokens": 50, "cache_creation_input_tokens": 10}),
        message([{"type": "text", "text": "Lisbon has about 545,000 residents."}], "end_turn"),
    )
    result = await agent().run("How big is Lisbon?", make_test_ctx(llm=llm(wire)))
    assert result.output == "Lisbon has about 545,000 residents."
    assert [r.path for r in wire.requests] == ["/v1/messages", "/v1/messages"]
    headers = wire.requests[0].headers
    assert "test-key" in (headers.get("x-api-key"), headers.get("authorization", "")[7:])
    assert "anthropic-version" in headers
    first, second = wire.bodies()
    assert first == {
        "model": MODEL,
        "max_tokens": 4096,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "How big is Lisbon?"}]}],
        "system": "You answer questions about cities.",
        "tools": [
            {"name": "broken_lookup",
             "description": "Look up an airport by its code; this one always fails, for tests.",
             "input_schema": {"type": "object", "properties": {"code": {"type": "string"}},
                              "required": ["code"]}},
            {"name": "city_population",
             "description": "Look up the most recent census population for a named city.",
             "input_schema": {"type": "object", "properties": {"city": {"type": "string"}},
                              "required": ["city"]}},
        ],
    }
    assert second["messages"][1:] == [
        {"role": "assistant", "content": [
            {"type": "text", "text": "Let me check."},
            {"type": "tool_use", "id": "toolu_a", "name": "city_population",
             "input": {"city": "Lisbon"}},
            {"type": "tool_use", "id": "toolu_b", "name": "broken_lookup",
             "input": {"code": "LIS"}},
        ]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_a", "content": "545000"},
            {"type": "tool_result", "tool_use_id": "toolu_b", "is_error": True,
             "content": "tool 'broken_lookup' failed: RuntimeError: airport database offline"},
        ]},
    ]
    first_usage = result.usage
    assert first_usage.input_tokens == 110
    assert first_usage.output_tokens == 45
    assert first_usage.cache_read_tokens == 50
    assert first_usage.cache_write_tokens == 10
    assert first_usage.cost_usd == pytest.approx(
        (110 * 3 + 45 * 15 + 50 * 0.3 + 10 * 3.75) / 1e6
    )


def sse(*events: tuple[str, dict[str, Any]]) -> Reply:
    return Reply(events=list(events))


def streamed_tool_turn() -> Reply:
    return sse(
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_s1", "type": "message", "role": "assistant", "model": MODEL,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 20, "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "tool_use", "id": "toolu_1",
                                                   "name": "city_population", "input": {}}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "input_json_delta", "partial_json": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "input_json_delta",
                                           "partial_json": "{\"city\": \"Li"}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "input_json_delta", "partial_json": "sbon\"}"}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("content_block_start", {"type": "content_block_start", "index": 1,
                                 "content_block": {"type": "tool_use", "id": "toolu_2",
                                                   "name": "city_population", "input": {}}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 1,
                                 "delta": {"type": "input_json_delta",
                                           "partial_json": "{\"city\": \"Porto\"}"}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 1}),
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                           "usage": {"output_tokens": 30}}),
        ("message_stop", {"type": "message_stop"}),
    )


def streamed_text_turn(*pieces: str) -> Reply:
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_s2", "type": "message", "role": "assistant", "model": MODEL,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 60, "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
    ]
    events += [("content_block_delta", {"type": "content_block_delta", "index": 0,
                                        "delta": {"type": "text_delta", "text": p}})
               for p in pieces]
    events += [
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                           "usage": {"output_tokens": 12}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return sse(*events)


async def test_streaming_assembles_parallel_tool_calls_and_streams_the_answer(
    wire: WireServer,
) -> None:
    wire.reply(streamed_tool_turn(), streamed_text_turn("Lisbon is ", "bigger", "."))
    events = [e async for e in agent().stream("Which is bigger?", make_test_ctx(llm=llm(wire)))]
    calls = [e.call for e in events if isinstance(e, ToolCallEvent)]
    assert [(c.id, dict(c.arguments)) for c in calls] == [
        ("toolu_1", {"city": "Lisbon"}), ("toolu_2", {"city": "Porto"}),
    ]
    assert [(e.call_id, e.content) for e in events if isinstance(e, ToolResultEvent)] == [
        ("toolu_1", "545000"), ("toolu_2", "231000"),
    ]
    texts = [e.text for e in events if isinstance(e, TextDeltaEvent)]
    assert texts == ["Lisbon is ", "bigger", "."]
    final = events[-1]
    assert isinstance(final, FinalEvent)
    assert final.result.output == "Lisbon is bigger."
    assert final.result.usage.input_tokens == 80
    assert final.result.usage.output_tokens == 42
    assert all(body["stream"] is True for body in wire.bodies())
    assert wire.bodies()[1]["messages"][1]["content"][0] == {
        "type": "tool_use", "id": "toolu_1", "name": "city_population", "input": {"city": "Lisbon"},
    }


async def test_native_tool_declarations_are_sent_as_they_are(wire: WireServer) -> None:
    from agentkit.core.contracts.types import ToolSchema

    memory = ToolSchema("memory", "A note tree.", {"type": "object"},
                        native={"anthropic": {"type": "memory_20250818", "name": "memory"}})
    wire.reply(message([{"type": "text", "text": "ok"}], "end_turn"))
    await llm(wire).chat(
        ChatRequest(model=MODEL, messages=(Message("user", "hi"),), tools=(memory,)),
        make_test_ctx(),
    )
    assert wire.bodies()[0]["tools"] == [{"type": "memory_20250818", "name": "memory"}]


@pytest.mark.parametrize(
    ("status", "kind", "transient"),
    [(429, "rate_limit", True), (529, "overloaded", True), (500, "server_error", True),
     (401, "authentication", False), (403, "permission", False), (400, "bad_request", False)],
)
async def test_errors_keep_the_providers_message_and_say_whether_to_retry(
    wire: WireServer, status: int, kind: str, transient: bool
) -> None:
    wire.reply(Reply(status, {"type": "error", "error": {"type": "some_error",
                                                         "message": "the provider says no"}}))
    with pytest.raises(ProviderError) as info:
        await llm(wire).chat(ChatRequest(model=MODEL, messages=(Message("user", "hi"),)),
                             make_test_ctx())
    error = info.value
    assert (error.status, error.kind, error.transient) == (status, kind, transient)
    assert "the provider says no" in str(error)
    assert str(error).startswith(f"anthropic: HTTP {status} ({kind}):")


async def test_a_prompt_too_long_is_a_context_length_error(wire: WireServer) -> None:
    """Anthropic says so only in the text of a 400; the one place that reads it is
    ``_errors.py``, so a run can compact its history and try again."""
    wire.reply(Reply(400, {"type": "error", "error": {
        "type": "invalid_request_error",
        "message": "prompt is too long: 215000 tokens > 200000 maximum"}}))
    with pytest.raises(ProviderError) as info:
        await llm(wire).chat(ChatRequest(model=MODEL, messages=(Message("user", "hi"),)),
                             make_test_ctx())
    assert (info.value.status, info.value.kind, info.value.transient) == (
        400, "context_length", False)
    # The provider's own words from the body, the same whichever SDK version raised it.
    assert str(info.value) == (
        "anthropic: HTTP 400 (context_length): prompt is too long: 215000 tokens > "
        "200000 maximum (invalid_request_error)"
    )


async def test_retry_policy_retries_an_overloaded_model(wire: WireServer) -> None:
    wire.reply(
        Reply(529, {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}),
        message([{"type": "text", "text": "hello"}], "end_turn"),
    )
    ctx = make_test_ctx(llm=llm(wire), chat_middleware=[retry(backoff=lambda n: 0.0)])
    result = await Agent(name="a", model=MODEL, prompt="p").run("hi", ctx)
    assert result.output == "hello"
    assert len(wire.requests) == 2


async def test_a_connection_failure_is_transient() -> None:
    provider = AnthropicLLM(api_key="k", base_url="http://127.0.0.1:9", max_retries=0, timeout=5)
    with pytest.raises(ProviderError) as info:
        await provider.chat(ChatRequest(model=MODEL, messages=(Message("user", "hi"),)),
                            make_test_ctx())
    assert info.value.transient
    assert info.value.kind == "connection"


async def test_missing_credentials_name_the_environment_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ProviderError) as info:
        await AnthropicLLM().chat(ChatRequest(model=MODEL, messages=(Message("user", "hi"),)),
                                  make_test_ctx())
    assert str(info.value) == (
        "anthropic: no credentials: set ANTHROPIC_API_KEY or pass AnthropicLLM(api_key=...)"
    )
    assert not info.value.transient


async def test_a_tool_input_that_is_not_an_object_becomes_a_repair_turn(wire: WireServer) -> None:
    wire.reply(
        message([{"type": "tool_use", "id": "toolu_1", "name": "city_population",
                  "input": "Lisbon"}], "tool_use"),
        message([{"type": "tool_use", "id": "toolu_2", "name": "city_population",
                  "input": {"city": "Lisbon"}}], "tool_use"),
        message([{"type": "text", "text": "545,000."}], "end_turn"),
    )
    result = await agent().run("How big is Lisbon?", make_test_ctx(llm=llm(wire)))
    assert result.output == "545,000."
    repair = wire.bodies()[1]["messages"][-1]["content"]
    assert repair == [{
        "type": "tool_result", "tool_use_id": "toolu_1", "is_error": True,
        "content": "tool 'city_population' call rejected: invalid argument(s): arguments: "
                   "expected a JSON object, got a string. Accepted arguments: ['city']",
    }]
    assert wire.bodies()[2]["messages"][-1]["content"][0]["content"] == "545000"


async def test_a_stream_is_priced_as_the_model_asked_for(wire: WireServer) -> None:
    turn = streamed_text_turn("hi")
    assert turn.events is not None
    turn.events[0][1]["message"]["model"] = "claude-snapshot-unpriced"
    wire.reply(turn)
    events = [e async for e in llm(wire).stream(
        ChatRequest(model=MODEL, messages=(Message("user", "hi"),)), make_test_ctx())]
    final = events[-1]
    assert isinstance(final, LLMResult)
    assert final.model == "claude-snapshot-unpriced"
    assert final.usage.cost_usd == pytest.approx((60 * 3 + 12 * 15) / 1e6)


async def test_an_output_schema_is_sent_natively_where_the_model_takes_it(
    wire: WireServer,
) -> None:
    schema = {"type": "object", "properties": {"city": {"type": "string"}},
              "required": ["city"]}
    wire.reply(message([{"type": "text", "text": '{"city": "Lisbon"}'}], "end_turn"),
               message([{"type": "text", "text": '{"city": "Lisbon"}'}], "end_turn"))
    for model in (MODEL, "claude-3-5-haiku-latest"):
        await llm(wire).chat(ChatRequest(model=model, messages=(Message("user", "Where?"),),
                                         output_schema=schema), make_test_ctx())
    native, older = wire.bodies()
    assert native["output_config"] == {"format": {"type": "json_schema", "schema": {
        **schema, "additionalProperties": False}}}
    assert "output_config" not in older
