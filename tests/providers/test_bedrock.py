"""BedrockLLM through botocore against a local server speaking Converse's real wire format.

Each case takes the ``bedrock`` fixture (a :class:`BedrockWire`: the fake server and a
provider pointed at it) and talks through the LLM Protocol or an agent run, so that the
cases can be lifted into a contract suite shared by every provider.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentkit import make_ctx
from agentkit.agents import Agent, TextDeltaEvent, ToolCallEvent, ToolResultEvent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.errors import ProviderError
from agentkit.core.contracts.types import (
    ChatRequest,
    LLMResult,
    Message,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolSchema,
    Usage,
)
from agentkit.core.testing import make_test_ctx
from agentkit.tools import tool

from .fake_bedrock import (
    MODEL,
    REQUEST_ID,
    BedrockWire,
    Reply,
    converse_reply,
    event,
    exception,
    stream_reply,
    text_stream,
)

CITY = ToolSchema("population", "The population of a city.",
                  {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]})


def ask(text: str = "Hello?", **fields: Any) -> ChatRequest:
    return ChatRequest(model=MODEL, messages=(Message("user", text),), **fields)


async def collect(wire: BedrockWire, request: ChatRequest) -> list[Any]:
    return [e async for e in wire.llm.stream(request, make_test_ctx())]


async def test_a_text_answer_is_read_with_its_usage_and_cost(bedrock: BedrockWire) -> None:
    bedrock.server.reply(converse_reply([{"text": "Hi "}, {"text": "there."}],
                                        usage={"inputTokens": 1000, "outputTokens": 200}))
    result = await bedrock.llm.chat(ask(system="Be brief."), make_test_ctx())

    assert result == LLMResult(
        content="Hi there.", finish_reason="stop", model=MODEL,
        # Sonnet 4.5 in-region on Bedrock: $3.30 in, $16.50 out per million.
        usage=Usage(input_tokens=1000, output_tokens=200, requests=1,
                    cost_usd=pytest.approx(0.0033 + 0.0033)),
    )
    recorded = bedrock.server.requests[0]
    assert (recorded.operation, recorded.model) == ("converse", MODEL)
    assert recorded.body == {"messages": [{"role": "user", "content": [{"text": "Hello?"}]}],
                             "system": [{"text": "Be brief."}]}
    assert recorded.headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")


@tool(side_effecting=False)
def population(city: str) -> str:
    """The population of a city, as a sentence."""
    if city == "Atlantis":
        raise LookupError("no such city: Atlantis")
    return f"{city} has 2.1 million people."


def tool_use(call_id: str, city: str) -> dict[str, Any]:
    return {"toolUse": {"toolUseId": call_id, "name": "population", "input": {"city": city}}}


def agent() -> Agent:
    return Agent(name="atlas", model=MODEL, prompt="You answer questions about cities.",
                 cognition=ReActCognition(tools=[population]))


async def test_an_agent_run_calls_a_tool_and_sends_its_result_back(bedrock: BedrockWire) -> None:
    bedrock.server.reply(
        converse_reply([{"text": "Let me look."}, tool_use("tu_1", "Paris")], stop="tool_use"),
        converse_reply([{"text": "Paris has 2.1 million people."}]),
    )
    result = await agent().run("How many people live in Paris?", make_ctx(bedrock.llm))

    assert result.output == "Paris has 2.1 million people."
    first, second = bedrock.server.bodies()
    assert first["toolConfig"]["tools"][0] == {"toolSpec": {
        "name": "population", "description": "The population of a city, as a sentence.",
        "inputSchema": {"json": {"type": "object", "properties": {"city": {"type": "string"}},
                                 "required": ["city"]}},
    }}
    assert second["messages"][1:] == [
        {"role": "assistant", "content": [{"text": "Let me look."}, tool_use("tu_1", "Paris")]},
        {"role": "user", "content": [{"toolResult": {
            "toolUseId": "tu_1", "content": [{"text": "Paris has 2.1 million people."}],
            "status": "success"}}]},
    ]


async def test_a_stream_passes_on_text_and_tool_input_deltas(bedrock: BedrockWire) -> None:
    bedrock.server.reply(stream_reply(
        event("messageStart", {"role": "assistant"}),
        event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "Looking"}}),
        event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": " it up."}}),
        event("contentBlockStop", {"contentBlockIndex": 0}),
        event("contentBlockStart", {"contentBlockIndex": 1, "start": {
            "toolUse": {"toolUseId": "tu_1", "name": "population"}}}),
        event("contentBlockDelta", {"contentBlockIndex": 1,
                                    "delta": {"toolUse": {"input": '{"city": '}}}),
        event("contentBlockDelta", {"contentBlockIndex": 1,
                                    "delta": {"toolUse": {"input": '"Paris"}'}}}),
        event("contentBlockStop", {"contentBlockIndex": 1}),
        event("messageStop", {"stopReason": "tool_use"}),
        event("metadata", {"usage": {"inputTokens": 20, "outputTokens": 9, "totalTokens": 29},
                           "metrics": {"latencyMs": 40}}),
    ))
    events = await collect(bedrock, ask(tools=(CITY,)))

    assert events[:-1] == [
        TextDelta("Looking"), TextDelta(" it up."),
        ToolCallDelta(0, id="tu_1", name="population"),
        ToolCallDelta(0, arguments_json='{"city": '), ToolCallDelta(0, arguments_json='"Paris"}'),
    ]
    final = events[-1]
    assert (final.content, final.tool_calls, final.finish_reason) == (
        "Looking it up.", (ToolCall("tu_1", "population", {"city": "Paris"}),), "tool_calls")
    assert (final.usage.input_tokens, final.usage.output_tokens) == (20, 9)
    assert bedrock.server.requests[0].operation == "converse-stream"


@pytest.mark.parametrize(
    ("frames", "how", "delivered"),
    [
        (text_stream("Hel", "lo")[:3], "before messageStop", 2),
        (text_stream("Hel", "lo")[:-1], "before its metadata event (the usage)", 2),
        # Hung up in the middle of a frame: botocore's parser never sees it whole.
        ([*text_stream("Hel")[:2], event("messageStop", {"stopReason": "end_turn"})[:20]],
         "before messageStop", 1),
    ],
)
async def test_a_truncated_stream_is_an_error_not_a_short_answer(
    bedrock: BedrockWire, frames: list[bytes], how: str, delivered: int,
) -> None:
    bedrock.server.reply(stream_reply(*frames))
    with pytest.raises(ProviderError) as info:
        await collect(bedrock, ask())
    assert str(info.value) == (
        f"bedrock: the stream ended {how}, after {delivered} delta(s): the answer is "
        f"incomplete; request id {REQUEST_ID}"
    )
    assert (info.value.kind, info.value.transient) == ("stream_truncated", False)


@pytest.mark.parametrize(
    ("reply", "message", "transient"),
    [
        (Reply(raw=b"<html><body>Bad gateway</body></html>", content_type="text/html"),
         "malformed reply: the body is an HTML page, not the API's JSON (is base_url the "
         "API's address?): '<html><body>Bad gateway</body></html>'", False),
        (Reply(raw=b"{not json"), "malformed reply: the body is not valid JSON (Expecting "
         "property name enclosed in double quotes: char 1): '{not json'", True),
        (Reply(raw=b""), "malformed reply: the body is empty", True),
        (Reply(body={"output": {"message": {"role": "assistant", "content": "hi"}},
                     "stopReason": "end_turn", "usage": {"inputTokens": 1, "outputTokens": 1,
                                                         "totalTokens": 2}, "metrics": {}}),
         "malformed reply: output.message.content: expected a list, got a string", False),
        (Reply(body={"output": {"message": {"role": "assistant", "content": []}},
                     "stopReason": "end_turn", "metrics": {}}),
         "malformed reply: usage: expected an object, got nothing", False),
    ],
)
async def test_a_malformed_reply_is_a_provider_error(
    bedrock: BedrockWire, reply: Reply, message: str, transient: bool,
) -> None:
    bedrock.server.reply(reply)
    with pytest.raises(ProviderError) as info:
        await bedrock.llm.chat(ask(), make_test_ctx())
    assert str(info.value) == f"bedrock: {message}; request id {REQUEST_ID}"
    assert (info.value.kind, info.value.transient) == ("malformed_reply", transient)


async def test_a_stream_request_answered_with_json_is_a_provider_error(
    bedrock: BedrockWire,
) -> None:
    bedrock.server.reply(Reply(body={"message": "hello"}))
    with pytest.raises(ProviderError) as info:
        await collect(bedrock, ask())
    assert str(info.value) == (
        "bedrock: malformed reply: asked for a stream, got a body of type application/json "
        "instead of application/vnd.amazon.eventstream: '{\"message\": \"hello\"}'; request "
        f"id {REQUEST_ID}"
    )


@pytest.mark.parametrize(
    ("status", "code", "kind", "transient"),
    [
        (429, "ThrottlingException", "rate_limit", True),
        (503, "ServiceUnavailableException", "server_error", True),
        (429, "ModelNotReadyException", "model_not_ready", True),
        (400, "ValidationException", "bad_request", False),
        (403, "AccessDeniedException", "permission", False),
    ],
)
async def test_service_exceptions_are_classified_and_keep_the_services_message(
    bedrock: BedrockWire, status: int, code: str, kind: str, transient: bool,
) -> None:
    bedrock.server.reply(Reply(status, {"message": f"the service says: {code}"},
                               error_type=code))
    with pytest.raises(ProviderError) as info:
        await bedrock.llm.chat(ask(), make_test_ctx())
    error = info.value
    assert str(error) == f"bedrock: {code}: the service says: {code}; request id {REQUEST_ID}"
    assert (error.kind, error.transient, error.status, error.request_id) == (
        kind, transient, status, REQUEST_ID)


async def test_an_exception_in_the_middle_of_a_stream_is_classified(
    bedrock: BedrockWire,
) -> None:
    bedrock.server.reply(stream_reply(*text_stream("Hel")[:2],
                                      exception("throttlingException", "Too many tokens")))
    with pytest.raises(ProviderError) as info:
        await collect(bedrock, ask())
    assert str(info.value) == (
        f"bedrock: ThrottlingException: Too many tokens; request id {REQUEST_ID}")
    assert (info.value.kind, info.value.transient) == ("rate_limit", True)


async def test_cache_usage_is_read_back_and_priced(bedrock: BedrockWire) -> None:
    usage = {"inputTokens": 100, "outputTokens": 50, "cacheReadInputTokens": 20_000,
             "cacheWriteInputTokens": 3_000}
    bedrock.server.reply(converse_reply([{"text": "ok"}], usage=usage),
                         stream_reply(*text_stream("ok", usage=usage)))
    chatted = await bedrock.llm.chat(ask(), make_test_ctx())
    streamed = (await collect(bedrock, ask()))[-1]

    # $3.30 input, $0.33 cache read, $4.125 cache write, $16.50 output, per million.
    cost = (100 * 3.3 + 20_000 * 0.33 + 3_000 * 4.125 + 50 * 16.5) / 1e6
    for result in (chatted, streamed):
        assert result.usage == Usage(input_tokens=100, output_tokens=50,
                                     cache_read_tokens=20_000, cache_write_tokens=3_000,
                                     requests=1, cost_usd=pytest.approx(cost))


async def test_an_inference_profile_id_is_the_model_and_is_priced(bedrock: BedrockWire) -> None:
    profile = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
    bedrock.server.reply(converse_reply([{"text": "ok"}],
                                        usage={"inputTokens": 1000, "outputTokens": 0}))
    result = await bedrock.llm.chat(
        ChatRequest(model=f"bedrock:{profile}", messages=(Message("user", "hi"),)),
        make_test_ctx())

    assert bedrock.server.requests[0].model == profile
    assert (result.model, result.usage.cost_usd) == (profile, pytest.approx(0.0033))
    assert result.usage.unpriced_models == ()


async def test_an_unknown_model_is_counted_and_named_unpriced(bedrock: BedrockWire) -> None:
    bedrock.server.reply(converse_reply([{"text": "ok"}]))
    result = await bedrock.llm.chat(
        ChatRequest(model="meta.llama3-70b-instruct-v1:0", messages=(Message("user", "hi"),)),
        make_test_ctx())
    assert result.usage == Usage(input_tokens=10, output_tokens=5, requests=1,
                                 unpriced_models=("meta.llama3-70b-instruct-v1:0",))


def corrupted(frame_bytes: bytes) -> bytes:
    """The frame with one payload byte changed, so its message CRC32 no longer holds."""
    broken = bytearray(frame_bytes)
    broken[-6] ^= 0x01
    return bytes(broken)


@pytest.mark.parametrize(
    ("bad", "message", "transient"),
    [
        # Garbled on the way: a fresh request is as good as new.
        (corrupted(event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "lo"}})),
         "malformed reply: Checksum mismatch: expected 0x", True),
        (event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": 7}}),
         "malformed reply: contentBlockDelta.delta.text: expected a string, got an integer",
         False),
    ],
)
async def test_a_broken_event_in_a_stream_is_a_malformed_reply(
    bedrock: BedrockWire, bad: bytes, message: str, transient: bool,
) -> None:
    bedrock.server.reply(stream_reply(*text_stream("Hel")[:2], bad))
    with pytest.raises(ProviderError) as info:
        await collect(bedrock, ask())
    assert str(info.value).startswith(f"bedrock: {message}")
    assert str(info.value).endswith(f"; request id {REQUEST_ID}")
    assert (info.value.kind, info.value.transient) == ("malformed_reply", transient)


async def test_an_agent_streams_a_tool_turn_and_its_answer(bedrock: BedrockWire) -> None:
    bedrock.server.reply(
        stream_reply(
            event("messageStart", {"role": "assistant"}),
            event("contentBlockStart", {"contentBlockIndex": 0, "start": {
                "toolUse": {"toolUseId": "tu_1", "name": "population"}}}),
            event("contentBlockDelta", {"contentBlockIndex": 0,
                                        "delta": {"toolUse": {"input": '{"city": "Lima"}'}}}),
            event("contentBlockStop", {"contentBlockIndex": 0}),
            event("messageStop", {"stopReason": "tool_use"}),
            event("metadata", {"usage": {"inputTokens": 9, "outputTokens": 4, "totalTokens": 13},
                               "metrics": {"latencyMs": 5}}),
        ),
        stream_reply(*text_stream("Lima has ", "2.1 million.")),
    )
    seen = [e async for e in agent().stream("Lima?", make_ctx(bedrock.llm))
            if isinstance(e, TextDeltaEvent | ToolCallEvent | ToolResultEvent)]

    assert seen == [
        ToolCallEvent(ToolCall("tu_1", "population", {"city": "Lima"})),
        ToolResultEvent("tu_1", "population", "Lima has 2.1 million people.", False),
        TextDeltaEvent("Lima has "), TextDeltaEvent("2.1 million."),
    ]
    assert [r.operation for r in bedrock.server.requests] == ["converse-stream"] * 2


async def test_an_input_too_long_is_a_context_length_error(bedrock: BedrockWire) -> None:
    bedrock.server.reply(Reply(400, {"message": "Input is too long for requested model."},
                               error_type="ValidationException"))
    with pytest.raises(ProviderError) as info:
        await bedrock.llm.chat(ask(), make_test_ctx())
    assert (info.value.kind, info.value.transient, info.value.status) == (
        "context_length", False, 400)
