"""What BedrockLLM puts on the wire: settings, media, reasoning sent back, cache points.

Every request here also passes botocore's validation of the Converse input (the fake
server refuses one that does not, and the fixture fails on it).
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from agentkit.core.contracts.errors import UnsupportedMedia, UnsupportedSetting
from agentkit.core.contracts.media import Audio, File, Image
from agentkit.core.contracts.reasoning import Reasoning, ReasoningDelta, ReasoningPart
from agentkit.core.contracts.types import (
    ChatRequest,
    Message,
    ModelSettings,
    ToolCall,
    ToolSchema,
)
from agentkit.core.testing import make_test_ctx
from agentkit.providers import BedrockLLM

from .fake_bedrock import MODEL, BedrockWire, converse_reply, event, stream_reply

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
PDF = b"%PDF-1.7\n" + b"0" * 2000 + b"\n%%EOF\n"
CITY = ToolSchema("population", "The population of a city.",
                  {"type": "object", "properties": {"city": {"type": "string"}}})


def request(*messages: Message, **fields: Any) -> ChatRequest:
    return ChatRequest(model=fields.pop("model", MODEL),
                       messages=messages or (Message("user", "Hello?"),), **fields)


async def sent(wire: BedrockWire, chat: ChatRequest) -> Any:
    wire.server.reply(converse_reply([{"text": "ok"}]))
    await wire.llm.chat(chat, make_test_ctx())
    return wire.server.bodies()[-1]


async def test_settings_are_mapped_to_inference_config_and_tool_choice(
    bedrock: BedrockWire,
) -> None:
    settings = ModelSettings(max_tokens=300, temperature=0.2, top_p=0.9, stop=("END",),
                             tool_choice="population",
                             extra={"top_k": 40, "requestMetadata": {"team": "atlas"}})
    body = await sent(bedrock, request(tools=(CITY,), settings=settings))

    assert body["inferenceConfig"] == {"maxTokens": 300, "temperature": 0.2, "topP": 0.9,
                                       "stopSequences": ["END"]}
    assert body["toolConfig"]["toolChoice"] == {"tool": {"name": "population"}}
    assert body["additionalModelRequestFields"] == {"top_k": 40}
    assert body["requestMetadata"] == {"team": "atlas"}
    required = await sent(bedrock, request(tools=(CITY,),
                                           settings=ModelSettings(tool_choice="required")))
    assert required["toolConfig"]["toolChoice"] == {"any": {}}


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (ModelSettings(seed=7), "bedrock cannot honour ModelSettings.seed: Converse has no "
         "seed parameter"),
        (ModelSettings(parallel_tool_calls=False), "bedrock cannot honour "
         "ModelSettings.parallel_tool_calls: Converse has no switch for parallel tool calls "
         "(a model that takes one reads it from ModelSettings(extra={...}), sent as "
         "additionalModelRequestFields)"),
        (ModelSettings(tool_choice="none"), "bedrock cannot honour ModelSettings.tool_choice: "
         "Converse has no 'none' tool choice; accepted: 'auto', 'required' or a tool name "
         "(or offer no tools)"),
        (ModelSettings(reasoning=Reasoning(), extra={"thinking": {}}), "bedrock cannot honour "
         "ModelSettings.extra: it sets 'thinking', which agentkit already sets from the "
         "request; use the ModelSettings field instead"),
    ],
)
async def test_settings_converse_cannot_honour_are_refused_before_sending(
    bedrock: BedrockWire, settings: ModelSettings, message: str,
) -> None:
    with pytest.raises(UnsupportedSetting) as info:
        await bedrock.llm.chat(request(tools=(CITY,), settings=settings), make_test_ctx())
    assert str(info.value) == (
        f"{message}. Remove it from the agent's or the run's settings, or use a provider "
        "that supports it")
    assert bedrock.server.requests == []


async def test_reasoning_on_a_model_without_thinking_is_refused(bedrock: BedrockWire) -> None:
    with pytest.raises(UnsupportedSetting) as info:
        await bedrock.llm.chat(request(model="amazon.nova-pro-v1:0",
                                       settings=ModelSettings(reasoning=Reasoning())),
                               make_test_ctx())
    assert info.value.reason == (
        "agentkit maps it for Claude models on Bedrock only, not 'amazon.nova-pro-v1:0'; "
        "send the model's own field as ModelSettings(extra={...})")


async def test_a_png_and_a_pdf_in_a_user_message_go_as_image_and_document_blocks(
    bedrock: BedrockWire,
) -> None:
    message = Message("user", "What do these show?", attachments=(
        Image(PNG, "image/png"), File(PDF, "application/pdf", name="q3 report.final.pdf")))
    body = await sent(bedrock, request(message))

    assert body["messages"] == [{"role": "user", "content": [
        {"text": "What do these show?"},
        {"image": {"format": "png", "source": {"bytes": base64.b64encode(PNG).decode()}}},
        {"document": {"format": "pdf", "name": "q3 report-final-pdf",
                      "source": {"bytes": base64.b64encode(PDF).decode()}}},
        # The two parts make the prompt long enough to cache.
        {"cachePoint": {"type": "default"}},
    ]}]


@pytest.mark.parametrize(
    ("part", "media_type", "limit"),
    [
        (Audio(b"RIFF" + bytes(60), "audio/wav"), "audio/wav (as audio bytes)", None),
        (Image.from_url("https://example.com/cat.png"), "image/png (by URL)", None),
        (Image(b"BM" + bytes(30), "image/bmp"), "image/bmp (as image bytes)", None),
        (Image(bytes(3_932_161), "image/png"), "image/png (as image bytes)",
         "Converse takes images of at most 3.75 MB (3,932,160 bytes); this one is 3,932,161 "
         "bytes"),
        (File(bytes(4_718_593), "application/pdf"), "application/pdf (as file bytes)",
         "Converse takes documents of at most 4.5 MB (4,718,592 bytes); this one is 4,718,593 "
         "bytes"),
    ],
)
async def test_a_part_converse_cannot_take_is_refused_before_any_request(
    bedrock: BedrockWire, part: Any, media_type: str, limit: str | None,
) -> None:
    with pytest.raises(UnsupportedMedia) as info:
        await bedrock.llm.chat(request(Message("user", "Look.", attachments=(part,))),
                               make_test_ctx())
    broken = f"{limit}; " if limit else ""
    assert str(info.value) == (
        f"bedrock cannot take {media_type} in messages[0] (user): {broken}it accepts images "
        "(png, jpeg, gif, webp) and documents (pdf, csv, doc, docx, xls, xlsx, html, txt, md) "
        "as bytes, in user messages")
    assert bedrock.server.requests == []


THOUGHT = {"reasoningText": {"text": "The user wants Paris.", "signature": "c2lnLTE="}}


async def test_reasoning_with_its_signature_is_kept_and_sent_back_verbatim(
    bedrock: BedrockWire,
) -> None:
    bedrock.server.reply(converse_reply([
        {"reasoningContent": THOUGHT},
        {"reasoningContent": {"redactedContent": "cmVkYWN0ZWQ="}},
        {"toolUse": {"toolUseId": "tu_1", "name": "population", "input": {"city": "Paris"}}},
    ], stop="tool_use"))
    settings = ModelSettings(max_tokens=8000, reasoning=Reasoning(effort="low"))
    first = request(tools=(CITY,), settings=settings)
    result = await bedrock.llm.chat(first, make_test_ctx())

    assert bedrock.server.bodies()[0]["additionalModelRequestFields"] == {
        "thinking": {"type": "enabled", "budget_tokens": 1024}}
    assert result.reasoning == (
        ReasoningPart("bedrock", "The user wants Paris.", THOUGHT),
        ReasoningPart("bedrock", state={"redactedContent": "cmVkYWN0ZWQ="}),
    )
    foreign = ReasoningPart("anthropic", "elsewhere", {"type": "thinking", "signature": "x"})
    answer = Message("assistant", "", tool_calls=result.tool_calls,
                     reasoning=(foreign, *result.reasoning))
    body = await sent(bedrock, request(
        Message("user", "Hello?"), answer,
        Message("tool", "2.1 million", tool_call_id="tu_1", name="population"),
        tools=(CITY,), settings=settings))

    assert body["messages"][1] == {"role": "assistant", "content": [
        {"reasoningContent": THOUGHT},
        {"reasoningContent": {"redactedContent": "cmVkYWN0ZWQ="}},
        {"toolUse": {"toolUseId": "tu_1", "name": "population", "input": {"city": "Paris"}}},
    ]}


async def test_streamed_reasoning_is_passed_on_and_kept_with_its_signature(
    bedrock: BedrockWire,
) -> None:
    bedrock.server.reply(stream_reply(
        event("messageStart", {"role": "assistant"}),
        event("contentBlockDelta", {"contentBlockIndex": 0,
                                    "delta": {"reasoningContent": {"text": "The user "}}}),
        event("contentBlockDelta", {"contentBlockIndex": 0,
                                    "delta": {"reasoningContent": {"text": "wants Paris."}}}),
        event("contentBlockDelta", {"contentBlockIndex": 0,
                                    "delta": {"reasoningContent": {"signature": "c2lnLTE="}}}),
        event("contentBlockStop", {"contentBlockIndex": 0}),
        event("contentBlockDelta", {"contentBlockIndex": 1, "delta": {"text": "Paris."}}),
        event("messageStop", {"stopReason": "end_turn"}),
        event("metadata", {"usage": {"inputTokens": 5, "outputTokens": 9, "totalTokens": 14},
                           "metrics": {"latencyMs": 3}}),
    ))
    events = [e async for e in bedrock.llm.stream(request(), make_test_ctx())]

    assert events[:2] == [ReasoningDelta("The user "), ReasoningDelta("wants Paris.")]
    assert events[-1].reasoning == (ReasoningPart("bedrock", "The user wants Paris.", THOUGHT),)
    assert events[-1].content == "Paris."


LONG = "Answer questions about the cities of the world, their people and their history. " * 60


def transcript() -> tuple[Message, ...]:
    call = ToolCall("tu_1", "population", {"city": "Paris"})
    return (
        Message("user", "How many people live in Paris?"),
        Message("assistant", "", tool_calls=(call,)),
        Message("tool", "2.1 million", tool_call_id="tu_1", name="population"),
    )


async def test_cache_points_go_where_the_anthropic_cache_puts_its_breakpoints(
    bedrock: BedrockWire,
) -> None:
    tools = (ToolSchema("population", LONG, {"type": "object", "properties": {}}),)
    body = await sent(bedrock, request(*transcript(), system=LONG + "Today: Monday.",
                                       stable_system=len(LONG), tools=tools))
    point = {"cachePoint": {"type": "default"}}

    assert body["toolConfig"]["tools"][-1] == point
    assert body["system"] == [{"text": LONG}, point, {"text": "Today: Monday."}]
    # The message the previous request ended with, and the newest one.
    assert body["messages"][0]["content"][-1] == point
    assert body["messages"][2]["content"][-1] == point
    assert body["messages"][1]["content"][-1] != point


async def test_a_short_prompt_gets_no_cache_points_and_cache_none_gets_none(
    bedrock: BedrockWire, monkeypatch: pytest.MonkeyPatch,
) -> None:
    body = await sent(bedrock, request(*transcript(), system="Be brief."))
    assert "cachePoint" not in repr(body)
    bedrock.llm = BedrockLLM(region="us-east-1", endpoint_url=bedrock.server.url,
                             max_retries=0, cache=None)
    body = await sent(bedrock, request(*transcript(), system=LONG, tools=(CITY,)))
    assert "cachePoint" not in repr(body)


async def test_a_one_hour_cache_asks_for_its_ttl_and_other_models_get_no_points(
    bedrock: BedrockWire,
) -> None:
    bedrock.llm = BedrockLLM(region="us-east-1", endpoint_url=bedrock.server.url,
                             max_retries=0, cache_ttl="1h")
    body = await sent(bedrock, request(system=LONG))
    assert body["system"] == [{"text": LONG}, {"cachePoint": {"type": "default", "ttl": "1h"}}]
    body = await sent(bedrock, request(system=LONG, model="meta.llama3-70b-instruct-v1:0"))
    assert body["system"] == [{"text": LONG}]


async def test_tool_turns_in_a_request_without_tools_go_as_text(bedrock: BedrockWire) -> None:
    """Converse refuses toolUse and toolResult blocks when no tools are offered."""
    body = await sent(bedrock, request(
        *transcript(),
        Message("tool", "tool 'population' failed: LookupError: down", tool_call_id="tu_2",
                name="population", is_error=True),
    ))
    assert body["messages"] == [
        {"role": "user", "content": [{"text": "How many people live in Paris?"}]},
        {"role": "assistant", "content": [
            {"text": '[tool call tu_1: population({"city": "Paris"})]'}]},
        {"role": "user", "content": [
            {"text": "[result of tool call tu_1 (population)]: 2.1 million"},
            {"text": "[result of tool call tu_2 (population) (failed)]: tool 'population' "
                     "failed: LookupError: down"}]},
    ]
    assert "toolConfig" not in body
