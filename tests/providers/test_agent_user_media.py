"""An agent's task with media: the parts reach each provider in its native shape through
``agent.run``, and a part that is not text or media is refused before any request."""

from __future__ import annotations

import base64

import pytest

from agentkit import Agent
from agentkit.core.contracts.errors import UnsupportedMedia
from agentkit.core.contracts.media import Audio, File, Image
from agentkit.core.testing import make_test_ctx
from agentkit.providers import AnthropicLLM, OpenAILLM

from .conftest import WireServer
from .test_user_media_wire import ANTHROPIC_OK, CHAT_OK

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
PDF = b"%PDF-1.7\n" + bytes(100)
PNG64 = base64.b64encode(PNG).decode()
PDF64 = base64.b64encode(PDF).decode()
JPEG_URL = "https://example.com/harbour.jpg"
TASK = ["What do these show?", Image(PNG, "image/png"), Image.from_url(JPEG_URL),
        File(PDF, "application/pdf", name="contract.pdf")]


async def test_an_agent_task_with_media_reaches_anthropic_as_blocks(wire: WireServer) -> None:
    wire.reply(ANTHROPIC_OK)
    llm = AnthropicLLM(api_key="k", base_url=wire.url, max_retries=0, cache=None)
    agent = Agent("looker", "claude-sonnet-4-6", "Describe what you are shown.")
    result = await agent.run(TASK, make_test_ctx(llm))
    assert result.output == "A harbour."
    assert wire.bodies()[0]["messages"] == [{"role": "user", "content": [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                     "data": PNG64}},
        {"type": "image", "source": {"type": "url", "url": JPEG_URL}},
        {"type": "document", "title": "contract.pdf",
         "source": {"type": "base64", "media_type": "application/pdf", "data": PDF64}},
        {"type": "text", "text": "What do these show?"},
    ]}]


async def test_an_agent_task_with_media_reaches_chat_completions_as_parts(
    wire: WireServer,
) -> None:
    wire.reply(CHAT_OK)
    llm = OpenAILLM(api_key="sk-test", base_url=f"{wire.url}/v1", max_retries=0)
    agent = Agent("looker", "gpt-4o", "Describe what you are shown.")
    result = await agent.run(TASK, make_test_ctx(llm))
    assert result.output == "A harbour."
    assert wire.bodies()[0]["messages"][1:] == [{"role": "user", "content": [
        {"type": "text", "text": "What do these show?"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG64}"}},
        {"type": "image_url", "image_url": {"url": JPEG_URL}},
        {"type": "file", "file": {"filename": "contract.pdf",
                                  "file_data": f"data:application/pdf;base64,{PDF64}"}},
    ]}]


async def test_text_parts_are_joined_and_the_turn_keeps_its_media(wire: WireServer) -> None:
    wire.reply(CHAT_OK)
    llm = OpenAILLM(api_key="sk-test", base_url=f"{wire.url}/v1", max_retries=0)
    agent = Agent("looker", "gpt-4o", "Describe what you are shown.")
    result = await agent.run(["Look.", Image(PNG, "image/png"), "Then say."],
                             make_test_ctx(llm))
    asked = result.messages[0]
    assert (asked.role, asked.content, asked.attachments) == (
        "user", "Look.\n\nThen say.", (Image(PNG, "image/png"),)
    )


@pytest.mark.parametrize(
    ("task", "message"),
    [
        (["Look.", b"\x89PNG"], "task part 1 is a bytes; a task must be a str, or a "
         "sequence of str, Image, File and Audio parts"),
        (["Look.", {"type": "image"}], "task part 1 is a dict; a task must be a str, or a "
         "sequence of str, Image, File and Audio parts"),
        (b"Look.", "a task must be a str, or a sequence of str, Image, File and Audio "
         "parts, got bytes"),
        (42, "a task must be a str, or a sequence of str, Image, File and Audio parts, "
         "got int"),
    ],
)
async def test_a_part_that_is_not_text_or_media_is_refused_before_any_request(
    wire: WireServer, task: object, message: str
) -> None:
    llm = OpenAILLM(api_key="sk-test", base_url=f"{wire.url}/v1", max_retries=0)
    agent = Agent("looker", "gpt-4o", "Describe what you are shown.")
    with pytest.raises(TypeError) as info:
        await agent.run(task, make_test_ctx(llm))  # type: ignore[arg-type]
    assert str(info.value) == message
    assert wire.requests == []


async def test_media_the_provider_cannot_take_is_refused_before_any_request(
    wire: WireServer,
) -> None:
    llm = AnthropicLLM(api_key="k", base_url=wire.url, max_retries=0, cache=None)
    agent = Agent("listener", "claude-sonnet-4-6", "Transcribe.")
    with pytest.raises(UnsupportedMedia) as info:
        await agent.run(["Transcribe this.", Audio(b"RIFF", "audio/wav")], make_test_ctx(llm))
    assert str(info.value).startswith(
        "anthropic cannot take audio/wav (as audio bytes) in messages[0] (user): "
    )
    assert wire.requests == []
