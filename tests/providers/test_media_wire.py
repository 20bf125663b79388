"""Media attached to a tool result, as each provider puts it on the wire."""

from __future__ import annotations

import base64

from agentkit.core.contracts.media import Audio, Image
from agentkit.core.contracts.types import ChatRequest, Message, ToolCall
from agentkit.core.testing import make_test_ctx
from agentkit.providers import AnthropicLLM, OpenAILLM

from .conftest import Reply, WireServer

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
WAV = b"RIFF" + bytes(60)
B64 = base64.b64encode(PNG).decode()


def transcript() -> tuple[Message, ...]:
    return (
        Message("user", "What does the harbour look like?"),
        Message("assistant", "", tool_calls=(ToolCall("call_1", "photo", {"place": "harbour"}),)),
        Message(
            "tool",
            "Harbour at dawn\n[image: image/png, 1,032 bytes]\n[audio: audio/wav, 64 bytes]",
            tool_call_id="call_1",
            name="photo",
            attachments=(Image(PNG, "image/png"), Audio(WAV, "audio/wav")),
        ),
    )


async def test_anthropic_sends_a_tool_results_image_as_an_image_block(wire: WireServer) -> None:
    wire.reply(Reply(body={
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
        "content": [{"type": "text", "text": "Calm water."}], "stop_reason": "end_turn",
        "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5},
    }))
    llm = AnthropicLLM(api_key="k", base_url=wire.url, max_retries=0)
    await llm.chat(ChatRequest(model="claude-sonnet-4-6", messages=transcript()), make_test_ctx())

    assert wire.bodies()[0]["messages"][2] == {"role": "user", "content": [{
        "type": "tool_result",
        "tool_use_id": "call_1",
        "content": [
            {"type": "text", "text": "Harbour at dawn\n[image: image/png, 1,032 bytes]\n"
                                     "[audio: audio/wav, 64 bytes]"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                         "data": B64}},
        ],
    }]}


async def test_openai_follows_a_tool_result_with_its_images_as_image_parts(
    wire: WireServer,
) -> None:
    """Chat Completions tool messages carry text only, so the images follow at once in a
    user message that names the call they came from."""
    wire.reply(Reply(body={
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-4o",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "Calm water."},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }))
    llm = OpenAILLM(api_key="sk-test", base_url=f"{wire.url}/v1", max_retries=0)
    await llm.chat(ChatRequest(model="gpt-4o", messages=transcript()), make_test_ctx())

    assert wire.bodies()[0]["messages"][2:] == [
        {"role": "tool", "tool_call_id": "call_1",
         "content": "Harbour at dawn\n[image: image/png, 1,032 bytes]\n"
                    "[audio: audio/wav, 64 bytes]"},
        {"role": "user", "content": [
            {"type": "text", "text": "The image(s) returned by tool call call_1 (photo):"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{B64}"}},
        ]},
    ]
