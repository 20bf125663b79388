"""Extended thinking through AnthropicLLM: the setting, thinking blocks read and sent back
verbatim on the tool-result request, thinking deltas, and what is refused."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit import make_ctx
from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.errors import UnsupportedSetting
from agentkit.core.contracts.types import (
    ChatRequest,
    LLMResult,
    Message,
    ModelSettings,
    Reasoning,
    ReasoningDelta,
    ReasoningPart,
    TextDelta,
)
from agentkit.core.testing import make_test_ctx
from agentkit.providers import AnthropicLLM
from agentkit.tools import tool

from .conftest import Reply, WireServer

MODEL = "claude-sonnet-4-6"
THINKING = {"type": "thinking", "thinking": "The census figure is what counts.",
            "signature": "EqQBCkYIBxgCKkBsig=="}
REDACTED = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT"}


@tool(side_effecting=False, idempotent=True)
def city_population(city: str) -> int:
    """Look up the most recent census population for a named city."""
    return {"lisbon": 545_000}.get(city.lower(), 0)


def message(content: list[dict[str, Any]], stop: str) -> Reply:
    return Reply(body={
        "id": "msg_1", "type": "message", "role": "assistant", "model": MODEL,
        "content": content, "stop_reason": stop, "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 50},
    })


def llm(wire: WireServer) -> AnthropicLLM:
    return AnthropicLLM(api_key="test-key", base_url=wire.url, max_retries=0, cache=None)


async def test_thinking_blocks_go_back_verbatim_on_the_tool_result_request(
    wire: WireServer,
) -> None:
    use = {"type": "tool_use", "id": "toolu_1", "name": "city_population",
           "input": {"city": "Lisbon"}}
    wire.reply(
        message([THINKING, REDACTED, {"type": "text", "text": "Let me check."}, use], "tool_use"),
        message([{"type": "text", "text": "About 545,000."}], "end_turn"),
    )
    agent = Agent(name="atlas", model=MODEL, prompt="You answer questions about cities.",
                  cognition=ReActCognition(tools=[city_population]),
                  settings=ModelSettings(reasoning=Reasoning()))
    result = await agent.run("How big is Lisbon?", make_ctx(llm(wire)))

    assert result.output == "About 545,000."
    first, second = wire.bodies()
    assert (first["thinking"], first["max_tokens"]) == (
        {"type": "enabled", "budget_tokens": 4096}, 4096 + 4096
    )
    assert second["messages"][1] == {"role": "assistant", "content": [
        THINKING, REDACTED, {"type": "text", "text": "Let me check."}, use,
    ]}
    assert result.messages[1].reasoning == (
        ReasoningPart("anthropic", THINKING["thinking"],
                      {"type": "thinking", "signature": THINKING["signature"]}),
        ReasoningPart("anthropic", "", REDACTED),
    )


async def test_reasoning_from_another_provider_is_never_sent_and_a_budget_is_kept(
    wire: WireServer,
) -> None:
    wire.reply(message([{"type": "text", "text": "ok"}], "end_turn"))
    transcript = (
        Message("user", "hi"),
        Message("assistant", "Hello.", reasoning=(
            ReasoningPart("openai", "greet", {"type": "reasoning", "id": "rs_1",
                                              "encrypted_content": "gAAA", "summary": []}),
        )),
        Message("user", "And now?"),
    )
    settings = ModelSettings(max_tokens=9000, reasoning=Reasoning(budget_tokens=3000))
    await llm(wire).chat(ChatRequest(model=MODEL, messages=transcript, settings=settings),
                         make_test_ctx())
    body = wire.bodies()[0]
    assert body["messages"][1] == {
        "role": "assistant", "content": [{"type": "text", "text": "Hello."}],
    }
    assert (body["max_tokens"], body["thinking"]) == (
        9000, {"type": "enabled", "budget_tokens": 3000}
    )


def event(kind: str, **fields: Any) -> tuple[str, dict[str, Any]]:
    return kind, {"type": kind, **fields}


async def test_streaming_passes_thinking_deltas_on_and_keeps_the_signature(
    wire: WireServer,
) -> None:
    wire.reply(Reply(events=[
        event("message_start", message={
            "id": "msg_s", "type": "message", "role": "assistant", "model": MODEL,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 20, "output_tokens": 1}}),
        event("content_block_start", index=0,
              content_block={"type": "thinking", "thinking": "", "signature": ""}),
        event("content_block_delta", index=0,
              delta={"type": "thinking_delta", "thinking": "Census first, "}),
        event("content_block_delta", index=0,
              delta={"type": "thinking_delta", "thinking": "then answer."}),
        event("content_block_delta", index=0,
              delta={"type": "signature_delta", "signature": "EqQBsig=="}),
        event("content_block_stop", index=0),
        event("content_block_start", index=1, content_block=REDACTED),
        event("content_block_stop", index=1),
        event("content_block_start", index=2, content_block={"type": "text", "text": ""}),
        event("content_block_delta", index=2, delta={"type": "text_delta", "text": "545,000."}),
        event("content_block_stop", index=2),
        event("message_delta", delta={"stop_reason": "end_turn", "stop_sequence": None},
              usage={"output_tokens": 40}),
        event("message_stop"),
    ]))
    request = ChatRequest(model=MODEL, messages=(Message("user", "How big is Lisbon?"),),
                          settings=ModelSettings(reasoning=Reasoning(effort="high",
                                                                     summary=True)))
    events = [e async for e in llm(wire).stream(request, make_test_ctx())]

    assert events[:3] == [ReasoningDelta("Census first, "), ReasoningDelta("then answer."),
                          TextDelta("545,000.")]
    final = events[3]
    assert isinstance(final, LLMResult)
    assert final.reasoning == (
        ReasoningPart("anthropic", "Census first, then answer.",
                      {"type": "thinking", "signature": "EqQBsig=="}),
        ReasoningPart("anthropic", "", REDACTED),
    )
    assert wire.bodies()[0]["thinking"] == {
        "type": "enabled", "budget_tokens": 16384, "display": "summarized",
    }


@pytest.mark.parametrize(
    ("model", "settings", "message"),
    [
        ("claude-3-5-haiku-latest", ModelSettings(reasoning=Reasoning()),
         "anthropic cannot honour ModelSettings.reasoning: claude-3-5-haiku-latest has no "
         "extended thinking (Claude 3.7 Sonnet and later models have it)"),
        (MODEL, ModelSettings(reasoning=Reasoning(budget_tokens=512)),
         "anthropic cannot honour ModelSettings.reasoning: budget_tokens=512 is below the "
         "Messages API's minimum thinking budget of 1024 tokens"),
        (MODEL, ModelSettings(max_tokens=2000, reasoning=Reasoning(budget_tokens=2000)),
         "anthropic cannot honour ModelSettings.reasoning: a thinking budget of 2000 tokens "
         "must be less than max_tokens (2000); raise max_tokens or lower "
         "Reasoning.budget_tokens"),
        (MODEL, ModelSettings(tool_choice="required", reasoning=Reasoning()),
         "anthropic cannot honour ModelSettings.tool_choice: 'required' forces a tool call, "
         "which the Messages API refuses while thinking is on; use 'auto' or 'none', or "
         "leave ModelSettings.reasoning unset"),
    ],
)
async def test_what_thinking_cannot_take_is_refused_before_sending(
    wire: WireServer, model: str, settings: ModelSettings, message: str
) -> None:
    request = ChatRequest(model=model, messages=(Message("user", "hi"),), settings=settings,
                          tools=(city_population.schema,))
    with pytest.raises(UnsupportedSetting) as info:
        await llm(wire).chat(request, make_test_ctx())
    assert str(info.value) == (
        message + ". Remove it from the agent's or the run's settings, or use a provider "
        "that supports it"
    )
    assert wire.requests == []
