"""Media in a user message, as each provider puts it on the wire, and what is refused
before any request is sent."""

from __future__ import annotations

import base64

import pytest

from agentkit.core.contracts.errors import UnsupportedMedia
from agentkit.core.contracts.media import Audio, File, Image
from agentkit.core.contracts.types import ChatRequest, Message
from agentkit.core.testing import make_test_ctx
from agentkit.providers import AnthropicLLM, OpenAILLM, OpenAIResponsesLLM

from .conftest import Reply, WireServer
from .fake_responses import check_request, reply, text

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
PDF = b"%PDF-1.7\n" + bytes(100)
PNG64 = base64.b64encode(PNG).decode()
PDF64 = base64.b64encode(PDF).decode()
JPEG_URL = "https://example.com/harbour.jpg"
ASK = Message("user", "What do these show?", attachments=(
    Image(PNG, "image/png"), Image.from_url(JPEG_URL),
    File(PDF, "application/pdf", name="contract.pdf"),
))
ANTHROPIC_OK = Reply(body={
    "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
    "content": [{"type": "text", "text": "A harbour."}], "stop_reason": "end_turn",
    "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5},
})
CHAT_OK = Reply(body={
    "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-4o",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "A harbour."},
                 "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
})


def anthropic(wire: WireServer) -> AnthropicLLM:
    return AnthropicLLM(api_key="k", base_url=wire.url, max_retries=0, cache=None)


def chat(wire: WireServer) -> OpenAILLM:
    return OpenAILLM(api_key="sk-test", base_url=f"{wire.url}/v1", max_retries=0)


def responses(wire: WireServer) -> OpenAIResponsesLLM:
    return OpenAIResponsesLLM(api_key="sk-test", base_url=f"{wire.url}/v1", max_retries=0)


async def test_anthropic_takes_image_and_document_blocks(wire: WireServer) -> None:
    wire.reply(ANTHROPIC_OK)
    notes = Message("user", "", attachments=(File(b"Minutes: agreed.", "text/plain",
                                                  name="minutes.txt"),))
    request = ChatRequest(model="claude-sonnet-4-6", messages=(ASK, notes))
    await anthropic(wire).chat(request, make_test_ctx())
    assert wire.bodies()[0]["messages"] == [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                     "data": PNG64}},
        {"type": "image", "source": {"type": "url", "url": JPEG_URL}},
        {"type": "document", "title": "contract.pdf",
         "source": {"type": "base64", "media_type": "application/pdf", "data": PDF64}},
        {"type": "text", "text": "What do these show?"},
        {"type": "document", "title": "minutes.txt",
         "source": {"type": "text", "media_type": "text/plain", "data": "Minutes: agreed."}},
    ]}]


async def test_chat_completions_takes_image_url_and_file_parts(wire: WireServer) -> None:
    wire.reply(CHAT_OK)
    clip = Message("user", "And this?", attachments=(Audio(b"RIFF" + bytes(8), "audio/wav"),))
    await chat(wire).chat(ChatRequest(model="gpt-4o", messages=(ASK, clip)), make_test_ctx())
    assert wire.bodies()[0]["messages"] == [
        {"role": "user", "content": [
            {"type": "text", "text": "What do these show?"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG64}"}},
            {"type": "image_url", "image_url": {"url": JPEG_URL}},
            {"type": "file", "file": {"filename": "contract.pdf",
                                      "file_data": f"data:application/pdf;base64,{PDF64}"}},
        ]},
        {"role": "user", "content": [
            {"type": "text", "text": "And this?"},
            {"type": "input_audio", "input_audio": {
                "data": base64.b64encode(b"RIFF" + bytes(8)).decode(), "format": "wav"}},
        ]},
    ]


async def test_the_responses_api_takes_input_image_and_input_file_parts(
    wire: WireServer,
) -> None:
    wire.reply(reply([text("A harbour.")], model="gpt-4.1"))
    report = Message("user", "", attachments=(File.from_url("https://example.com/q3.pdf"),))
    await responses(wire).chat(ChatRequest(model="gpt-4.1", messages=(ASK, report)),
                               make_test_ctx())
    body = check_request(wire.bodies()[0])
    assert body["input"] == [
        {"role": "user", "content": [
            {"type": "input_text", "text": "What do these show?"},
            {"type": "input_image", "image_url": f"data:image/png;base64,{PNG64}",
             "detail": "auto"},
            {"type": "input_image", "image_url": JPEG_URL, "detail": "auto"},
            {"type": "input_file", "filename": "contract.pdf",
             "file_data": f"data:application/pdf;base64,{PDF64}"},
        ]},
        {"role": "user", "content": [
            {"type": "input_file", "file_url": "https://example.com/q3.pdf"},
        ]},
    ]


@pytest.mark.parametrize(
    ("provider", "media", "message"),
    [
        ("anthropic", Audio(b"RIFF", "audio/wav"),
         "anthropic cannot take audio/wav (as audio bytes) in messages[0] (user): it accepts "
         "images (image/png, image/jpeg, image/gif, image/webp; bytes or URL), PDF documents "
         "(application/pdf; bytes or URL) and plain-text documents (text/plain bytes in "
         "UTF-8)"),
        ("anthropic", Image(bytes(5 * 1024 * 1024 + 1), "image/png"),
         "anthropic cannot take image/png (as image bytes) in messages[0] (user): the "
         "Messages API takes images of at most 5 MB (5,242,880 bytes); this one is "
         "5,242,881 bytes; it accepts images (image/png, image/jpeg, image/gif, image/webp; "
         "bytes or URL), PDF documents (application/pdf; bytes or URL) and plain-text "
         "documents (text/plain bytes in UTF-8)"),
        ("chat", File.from_url("https://example.com/q3.pdf"),
         "openai cannot take application/pdf (by URL) in messages[0] (user): it accepts "
         "images (image/png, image/jpeg, image/gif, image/webp; bytes or URL), PDF "
         "documents (application/pdf bytes), plain-text documents (text/plain bytes in "
         "UTF-8) and audio (audio/wav, audio/mpeg bytes)"),
        ("responses", Image(b"II*\x00", "image/tiff"),
         "openai cannot take image/tiff (as image bytes) in messages[0] (user): it accepts "
         "images (image/png, image/jpeg, image/gif, image/webp; bytes or URL), PDF documents "
         "(application/pdf; bytes or URL) and plain-text documents (text/plain bytes in "
         "UTF-8)"),
    ],
)
async def test_a_part_the_provider_cannot_take_is_refused_before_any_request(
    wire: WireServer, provider: str, media: Image | Audio | File, message: str
) -> None:
    llm = {"anthropic": anthropic, "chat": chat, "responses": responses}[provider](wire)
    request = ChatRequest(model="some-model", messages=(Message("user", "Look.",
                                                                attachments=(media,)),))
    with pytest.raises(UnsupportedMedia) as info:
        await llm.chat(request, make_test_ctx())
    assert str(info.value) == message
    assert (info.value.provider, info.value.kind, info.value.transient) == (
        "anthropic" if provider == "anthropic" else "openai", "unsupported_media", False
    )
    assert wire.requests == []
