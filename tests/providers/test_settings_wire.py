"""ModelSettings on the wire: each provider sends every setting in its own format (to a
real HTTP server), and refuses, naming itself, a setting it cannot honour."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit.agents import Agent, ModelSettings, UnsupportedSetting
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ChatRequest, Message, ToolSchema
from agentkit.core.testing import make_test_ctx
from agentkit.providers import AnthropicLLM, OpenAILLM
from agentkit.tools import tool

from .conftest import Reply, WireServer

ASK = (Message("user", "hi"),)
TOOLS = (
    ToolSchema("lookup", "Look an order up.", {"type": "object", "properties": {}}),
    ToolSchema("refund", "Refund an order.", {"type": "object", "properties": {}}),
)


def anthropic_reply() -> Reply:
    return Reply(body={
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
        "content": [{"type": "text", "text": "ok"}], "stop_reason": "end_turn",
        "stop_sequence": None, "usage": {"input_tokens": 3, "output_tokens": 1},
    })


def openai_reply() -> Reply:
    return Reply(body={
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "gpt-4o-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
    })


async def anthropic_body(wire: WireServer, settings: ModelSettings,
                         tools: tuple[ToolSchema, ...] = TOOLS) -> Any:
    wire.reply(anthropic_reply())
    llm = AnthropicLLM(api_key="k", base_url=wire.url, max_retries=0)
    request = ChatRequest(model="claude-sonnet-4-6", messages=ASK, tools=tools,
                          settings=settings)
    await llm.chat(request, make_test_ctx(llm))
    body = wire.bodies()[-1]
    return {k: v for k, v in body.items() if k not in ("model", "messages", "tools")}


async def openai_body(wire: WireServer, settings: ModelSettings,
                      tools: tuple[ToolSchema, ...] = TOOLS) -> Any:
    wire.reply(openai_reply())
    llm = OpenAILLM(api_key="k", base_url=f"{wire.url}/v1", max_retries=0)
    request = ChatRequest(model="gpt-4o-mini", messages=ASK, tools=tools, settings=settings)
    await llm.chat(request, make_test_ctx(llm))
    body = wire.bodies()[-1]
    return {k: v for k, v in body.items() if k not in ("model", "messages", "tools")}


async def test_anthropic_sends_every_setting_it_supports(wire: WireServer) -> None:
    settings = ModelSettings(
        max_tokens=321, stop=("END", "STOP"), tool_choice="refund", parallel_tool_calls=False,
        extra={"metadata": {"user_id": "u-1"}, "temperature": 0.25},
    )
    assert await anthropic_body(wire, settings) == {
        "max_tokens": 321,
        "stop_sequences": ["END", "STOP"],
        "tool_choice": {"type": "tool", "name": "refund", "disable_parallel_tool_use": True},
        "metadata": {"user_id": "u-1"},
        "temperature": 0.25,
    }


async def test_openai_sends_every_setting(wire: WireServer) -> None:
    settings = ModelSettings(
        temperature=0.25, max_tokens=321, top_p=0.9, stop="END", tool_choice="refund",
        parallel_tool_calls=False, seed=42, extra={"user": "u-1"},
    )
    assert await openai_body(wire, settings) == {
        "max_tokens": 321,
        "temperature": 0.25,
        "top_p": 0.9,
        "seed": 42,
        "stop": ["END"],
        "tool_choice": {"type": "function", "function": {"name": "refund"}},
        "parallel_tool_calls": False,
        "user": "u-1",
    }


@pytest.mark.parametrize(
    ("choice", "parallel", "anthropic", "openai"),
    [
        ("auto", None, {"type": "auto"}, "auto"),
        ("none", None, {"type": "none"}, "none"),
        ("required", None, {"type": "any"}, "required"),
        ("lookup", None, {"type": "tool", "name": "lookup"},
         {"type": "function", "function": {"name": "lookup"}}),
        (None, True, {"type": "auto", "disable_parallel_tool_use": False}, None),
        ("required", False, {"type": "any", "disable_parallel_tool_use": True}, "required"),
    ],
)
async def test_tool_choice_in_each_wire_format(
    wire: WireServer, choice: str | None, parallel: bool | None, anthropic: Any, openai: Any
) -> None:
    settings = ModelSettings(tool_choice=choice, parallel_tool_calls=parallel)
    sent = await anthropic_body(wire, settings)
    assert sent == {"max_tokens": 4096, "tool_choice": anthropic}
    expected: dict[str, Any] = {} if openai is None else {"tool_choice": openai}
    if parallel is not None:
        expected["parallel_tool_calls"] = parallel
    assert await openai_body(wire, settings) == expected


async def test_without_tools_auto_and_parallel_are_moot_and_not_sent(wire: WireServer) -> None:
    settings = ModelSettings(tool_choice="auto", parallel_tool_calls=False)
    assert await anthropic_body(wire, settings, tools=()) == {"max_tokens": 4096}
    assert await openai_body(wire, settings, tools=()) == {}


@pytest.mark.parametrize(
    ("setting", "value"), [("temperature", 0.5), ("top_p", 0.9), ("seed", 7)]
)
async def test_anthropic_refuses_sampling_settings_it_has_no_parameter_for(
    wire: WireServer, setting: str, value: Any
) -> None:
    with pytest.raises(UnsupportedSetting) as caught:
        await anthropic_body(wire, ModelSettings(**{setting: value}))
    assert str(caught.value) == (
        f"anthropic cannot honour ModelSettings.{setting}: the Messages API has no {setting} "
        f"parameter; if your model still accepts one, send it as "
        f"ModelSettings(extra={{{setting!r}: ...}}). Remove it from the agent's or the "
        "run's settings, or use a provider that supports it"
    )
    assert (caught.value.provider, caught.value.setting, caught.value.transient) == (
        "anthropic", setting, False
    )
    assert wire.requests == []


@pytest.mark.parametrize("send", [anthropic_body, openai_body])
async def test_a_tool_choice_naming_a_tool_not_offered_is_refused(
    wire: WireServer, send: Any
) -> None:
    with pytest.raises(UnsupportedSetting) as caught:
        await send(wire, ModelSettings(tool_choice="delete_everything"))
    provider = "anthropic" if send is anthropic_body else "openai"
    assert str(caught.value) == (
        f"{provider} cannot honour ModelSettings.tool_choice: it names tool "
        "'delete_everything', which this request does not offer; accepted: 'auto', 'none', "
        "'required' or one of ['lookup', 'refund']. Remove it from the agent's or the run's "
        "settings, or use a provider that supports it"
    )
    with pytest.raises(UnsupportedSetting) as required:
        await send(wire, ModelSettings(tool_choice="required"), tools=())
    assert "'required' needs tools, and this request offers none" in str(required.value)
    assert wire.requests == []


@pytest.mark.parametrize("send", [anthropic_body, openai_body])
async def test_extra_fields_may_not_overwrite_what_agentkit_sets(
    wire: WireServer, send: Any
) -> None:
    with pytest.raises(UnsupportedSetting) as caught:
        await send(wire, ModelSettings(extra={"messages": [], "max_tokens": 1}))
    provider = "anthropic" if send is anthropic_body else "openai"
    expected = "['max_tokens', 'messages']" if provider == "anthropic" else "['messages']"
    assert str(caught.value).startswith(
        f"{provider} cannot honour ModelSettings.extra: it sets {expected}, which agentkit "
        "already sets from the request"
    )
    assert wire.requests == []


@tool(side_effecting=False)
def lookup(order_id: str) -> str:
    """Look up a customer order and return its current status line."""
    return f"{order_id} shipped"


async def test_an_agents_settings_and_a_runs_overrides_reach_the_wire(wire: WireServer) -> None:
    wire.reply(openai_reply(), openai_reply())
    llm = OpenAILLM(api_key="k", base_url=f"{wire.url}/v1", max_retries=0)
    agent = Agent("tuned", "gpt-4o-mini", "p", cognition=ReActCognition([lookup]),
                  settings=ModelSettings(temperature=0.1, tool_choice="required"))
    await agent.run("one", make_test_ctx(llm))
    await agent.run("two", make_test_ctx(llm),
                    settings=ModelSettings(tool_choice="auto", max_tokens=50))
    first, second = wire.bodies()
    assert (first["temperature"], first["tool_choice"]) == (0.1, "required")
    assert (second["temperature"], second["tool_choice"], second["max_tokens"]) == (
        0.1, "auto", 50
    )
