"""OpenAIResponsesLLM against a real HTTP server speaking the Responses API, every request
checked against the openai SDK's own request types."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit import make_ctx
from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.errors import ProviderError, UnsupportedSetting
from agentkit.core.contracts.types import (
    ChatRequest,
    LLMResult,
    Message,
    ModelSettings,
    Reasoning,
    ReasoningDelta,
    ReasoningPart,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
)
from agentkit.core.testing import make_test_ctx
from agentkit.providers import OpenAILLM, OpenAIResponsesLLM, llm_for
from agentkit.tools import tool

from .conftest import Reply, WireServer
from .fake_responses import call, check_request, reasoning, reply, stream, streamed, text

MODEL = "gpt-5"


@tool(side_effecting=False, idempotent=True)
def city_population(city: str) -> int:
    """Look up the most recent census population for a named city."""
    return {"lisbon": 545_000}.get(city.lower(), 0)


@tool(side_effecting=False)
def weather(city: str, unit: str = "celsius") -> str:
    """Report today's weather for a named city in the unit asked for."""
    return f"sunny in {city}"


def llm(wire: WireServer, **options: Any) -> OpenAIResponsesLLM:
    return OpenAIResponsesLLM(api_key="sk-test", base_url=f"{wire.url}/v1", max_retries=0,
                              **options)


def bodies(wire: WireServer) -> list[dict[str, Any]]:
    return [check_request(body) for body in wire.bodies()]


THOUGHT = reasoning("rs_1", "Look the city up first.", "gAAAAencrypted-1")


async def test_a_tool_turn_sends_the_encrypted_reasoning_back_with_the_call(
    wire: WireServer,
) -> None:
    wire.reply(
        reply([THOUGHT, call("call_1", "city_population", {"city": "Lisbon"}, "fc_1")]),
        reply([reasoning("rs_2", "", "gAAAAencrypted-2"), text("About 545,000.")]),
    )
    agent = Agent(name="atlas", model=MODEL, prompt="You answer questions about cities.",
                  cognition=ReActCognition(tools=[city_population, weather]),
                  settings=ModelSettings(reasoning=Reasoning(effort="low", summary=True)))
    result = await agent.run("How big is Lisbon?", make_ctx(llm(wire)))

    assert result.output == "About 545,000."
    assert [r.path for r in wire.requests] == ["/v1/responses", "/v1/responses"]
    first, second = bodies(wire)
    assert first == {
        "model": MODEL,
        "input": [{"role": "user", "content": "How big is Lisbon?"}],
        "store": False,
        "instructions": "You answer questions about cities.",
        "tools": [
            {"type": "function", "name": "city_population",
             "description": "Look up the most recent census population for a named city.",
             "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                            "required": ["city"], "additionalProperties": False},
             "strict": True},
            {"type": "function", "name": "weather",
             "description": "Report today's weather for a named city in the unit asked for.",
             "parameters": {"type": "object", "properties": {
                 "city": {"type": "string"}, "unit": {"type": "string"}},
                 "required": ["city"]},
             "strict": False},
        ],
        "reasoning": {"effort": "low", "summary": "auto"},
        "include": ["reasoning.encrypted_content"],
    }
    assert second["input"][1:] == [
        THOUGHT,
        {"type": "function_call", "call_id": "call_1", "name": "city_population",
         "arguments": '{"city": "Lisbon"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "545000"},
    ]
    assert result.messages[1].reasoning == (
        ReasoningPart("openai", "Look the city up first.", THOUGHT),
    )
    assert result.messages[1].tool_calls == (
        ToolCall("call_1", "city_population", {"city": "Lisbon"},
                 provider_state={"openai": {"id": "fc_1"}}),
    )
    assert result.usage == Usage(input_tokens=80, output_tokens=40, cache_read_tokens=120,
                                 requests=2, reasoning_tokens=60,
                                 cost_usd=result.usage.cost_usd)
    # gpt-5: $1.25 in, $0.125 cached, $10 out (reasoning billed as output)
    assert result.usage.cost_usd == pytest.approx((80 * 1.25 + 120 * 0.125 + 100 * 10) / 1e6)


@pytest.mark.parametrize("store", [False, True])
async def test_what_goes_back_depends_on_whether_openai_keeps_the_items(
    wire: WireServer, store: bool
) -> None:
    """Stateless, the API refuses ids of items it never stored: a reasoning item without
    encrypted content is dropped and a call goes without its item id. Plaintext
    reasoning content never goes back (input items may not carry it)."""
    wire.reply(reply([text("Done.")]))
    sealed = {**THOUGHT, "content": [{"type": "reasoning_text", "text": "raw"}]}
    bare = reasoning("rs_0", "Earlier.", "")
    del bare["encrypted_content"]
    asked = ToolCall("call_1", "city_population", {"city": "Lisbon"},
                     provider_state={"openai": {"id": "fc_1"}})
    transcript = (
        Message("user", "How big is Lisbon?"),
        Message("assistant", "", (asked,), reasoning=(
            ReasoningPart("openai", "Earlier.", bare), ReasoningPart("openai", "", sealed))),
        Message("tool", "545000", tool_call_id="call_1", name="city_population"),
    )
    await llm(wire, store=store).chat(ChatRequest(model=MODEL, messages=transcript),
                                      make_test_ctx())
    body = bodies(wire)[0]
    call_item = {"type": "function_call", "call_id": "call_1", "name": "city_population",
                 "arguments": '{"city": "Lisbon"}'}
    expected = [THOUGHT, call_item] if not store else [bare, THOUGHT, {**call_item, "id": "fc_1"}]
    assert (body["store"], body["input"][1:-1]) == (store, expected)


async def test_streaming_maps_reasoning_text_and_call_deltas(wire: WireServer) -> None:
    found = call("call_9", "city_population", {"city": "Lisbon"}, "fc_9")
    output = [THOUGHT, text("Checking."), found]
    wire.reply(stream(*streamed(output, [
        {"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": 0,
         "summary_index": 0, "delta": "Look the city "},
        {"type": "response.reasoning_summary_text.delta", "item_id": "rs_1", "output_index": 0,
         "summary_index": 0, "delta": "up first."},
        {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 1,
         "content_index": 0, "delta": "Checking.", "logprobs": []},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_9",
         "output_index": 2, "delta": '{"city": '},
        {"type": "response.function_call_arguments.delta", "item_id": "fc_9",
         "output_index": 2, "delta": '"Lisbon"}'},
    ])))
    request = ChatRequest(model=MODEL, messages=(Message("user", "How big is Lisbon?"),),
                          tools=(city_population.schema,))
    events = [e async for e in llm(wire).stream(request, make_test_ctx())]

    assert events[:-1] == [
        ToolCallDelta(index=0, id="call_9", name="city_population"),
        ReasoningDelta("Look the city "), ReasoningDelta("up first."), TextDelta("Checking."),
        ToolCallDelta(index=0, arguments_json='{"city": '),
        ToolCallDelta(index=0, arguments_json='"Lisbon"}'),
    ]
    final = events[-1]
    assert isinstance(final, LLMResult)
    assert (final.content, final.finish_reason, final.tool_calls[0].arguments) == (
        "Checking.", "tool_calls", {"city": "Lisbon"}
    )
    assert final.reasoning == (ReasoningPart("openai", "Look the city up first.", THOUGHT),)
    assert bodies(wire)[0]["stream"] is True


async def test_a_truncated_stream_is_an_error_never_a_short_answer(wire: WireServer) -> None:
    events = streamed([text("Lisbon has about 545,000.")], [
        {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0,
         "content_index": 0, "delta": "Lisbon has about", "logprobs": []},
    ])
    wire.reply(stream(*events[:3]))  # created, item added, one delta: then the line drops
    request = ChatRequest(model=MODEL, messages=(Message("user", "How big is Lisbon?"),))
    seen: list[Any] = []
    with pytest.raises(ProviderError) as info:
        async for event in llm(wire).stream(request, make_test_ctx()):
            seen.append(event)
    assert seen == [TextDelta("Lisbon has about")]
    assert (info.value.kind, info.value.transient) == ("stream_truncated", False)
    assert str(info.value) == (
        "openai: the stream ended before response.completed, after 1 delta(s): the answer is "
        "incomplete; request id req_s1"
    )


async def test_failures_are_classified_like_the_other_providers(wire: WireServer) -> None:
    wire.reply(
        reply([], status="failed", error={"code": "rate_limit_exceeded",
                                          "message": "Slow down."}),
        stream({"type": "error", "code": "server_error", "message": "The server broke.",
                "param": None}),
        Reply(400, {"error": {"message": "No such model.", "type": "invalid_request_error",
                              "code": "model_not_found", "param": "model"}}),
    )
    request = ChatRequest(model=MODEL, messages=(Message("user", "hi"),))
    with pytest.raises(ProviderError) as failed:
        await llm(wire).chat(request, make_test_ctx())
    assert (failed.value.kind, failed.value.transient, str(failed.value)) == (
        "rate_limit", True, "openai: rate_limit_exceeded: Slow down.; request id req_r1"
    )
    with pytest.raises(ProviderError) as mid_stream:
        async for _ in llm(wire).stream(request, make_test_ctx()):
            pass
    assert (mid_stream.value.kind, mid_stream.value.transient) == ("server_error", True)
    with pytest.raises(ProviderError) as refused:
        await llm(wire).chat(request, make_test_ctx())
    assert (refused.value.kind, refused.value.transient, refused.value.status) == (
        "bad_request", False, 400
    )


async def test_structured_output_is_sent_as_a_json_schema_text_format(wire: WireServer) -> None:
    wire.reply(reply([text('{"city": "Lisbon", "population": 545000}')], model="gpt-4.1"))
    schema = {"type": "object", "properties": {"city": {"type": "string"},
                                               "population": {"type": "integer"}},
              "required": ["city", "population"]}
    request = ChatRequest(model="gpt-4.1", messages=(Message("user", "Lisbon?"),),
                          output_schema=schema, settings=ModelSettings(max_tokens=300))
    result = await llm(wire).chat(request, make_test_ctx())
    body = bodies(wire)[0]
    assert body["text"] == {"format": {
        "type": "json_schema", "name": "output", "strict": True,
        "schema": {**schema, "additionalProperties": False},
    }}
    assert (body["max_output_tokens"], "include" in body) == (300, False)
    assert result.content == '{"city": "Lisbon", "population": 545000}'


@pytest.mark.parametrize(
    ("model", "settings", "reason"),
    [
        (MODEL, ModelSettings(stop=["END"]),
         "stop: the Responses API takes no stop parameter; for stop sequences, use Chat "
         "Completions (the spec openai-chat:MODEL, or OpenAILLM)"),
        (MODEL, ModelSettings(seed=7),
         "seed: the Responses API takes no seed parameter; for a seed, use Chat Completions "
         "(the spec openai-chat:MODEL, or OpenAILLM)"),
        (MODEL, ModelSettings(reasoning=Reasoning(budget_tokens=2048)),
         "reasoning: the Responses API takes an effort ('low', 'medium', 'high'), not a "
         "token budget (budget_tokens=2048); leave budget_tokens None"),
        ("gpt-4o", ModelSettings(reasoning=Reasoning()),
         "reasoning: gpt-4o is not a reasoning model (the o-series and GPT-5 are)"),
    ],
)
async def test_settings_the_responses_api_has_no_field_for_are_refused(
    wire: WireServer, model: str, settings: ModelSettings, reason: str
) -> None:
    request = ChatRequest(model=model, messages=(Message("user", "hi"),), settings=settings)
    with pytest.raises(UnsupportedSetting) as info:
        await llm(wire).chat(request, make_test_ctx())
    assert str(info.value) == (
        f"openai cannot honour ModelSettings.{reason}. Remove it from the agent's or the "
        "run's settings, or use a provider that supports it"
    )
    assert wire.requests == []


def test_openai_specs_are_the_responses_api_and_openai_chat_and_servers_chat_completions(
) -> None:
    assert isinstance(llm_for("openai:gpt-5", api_key="k"), OpenAIResponsesLLM)
    proxied = llm_for("openai:gpt-5", api_key="k", base_url="http://127.0.0.1:9/v1")
    assert isinstance(proxied, OpenAIResponsesLLM)
    assert str(proxied.client.base_url) == "http://127.0.0.1:9/v1/"
    assert isinstance(llm_for("openai-chat:gpt-4o-mini", api_key="k"), OpenAILLM)
    assert isinstance(llm_for("openai:llama3.1@http://127.0.0.1:11434/v1"), OpenAILLM)


async def test_an_incomplete_response_is_cut_for_length_and_a_refusal_is_filtered(
    wire: WireServer,
) -> None:
    refusal = {"type": "message", "id": "msg_2", "role": "assistant", "status": "completed",
               "content": [{"type": "refusal", "refusal": "I can't help with that."}]}
    wire.reply(
        reply([text("Lisbon has about")], status="incomplete",
              incomplete_details={"reason": "max_output_tokens"}),
        reply([refusal]),
    )
    request = ChatRequest(model=MODEL, messages=(Message("user", "How big is Lisbon?"),))
    cut = await llm(wire).chat(request, make_test_ctx())
    refused = await llm(wire).chat(request, make_test_ctx())
    assert (cut.content, cut.finish_reason) == ("Lisbon has about", "length")
    assert (refused.content, refused.finish_reason) == (
        "I can't help with that.", "content_filter"
    )
