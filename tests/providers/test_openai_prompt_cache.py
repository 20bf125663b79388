"""OpenAILLM and OpenAI's automatic prompt cache: the ``prompt_cache_key`` it sends and the
cached tokens it reads, on the JSON and the streaming paths."""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from agentkit.agents import Agent, FinalEvent
from agentkit.core.contracts.types import ChatRequest, Message, Scope
from agentkit.core.testing import make_test_ctx
from agentkit.providers import OpenAILLM
from agentkit.providers.openai import default_cache_key

from .conftest import Reply, WireServer

MODEL = "gpt-4o-mini"


def completion(text: str, prompt: int, cached: int) -> Reply:
    return Reply(body={
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": MODEL,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": 7, "total_tokens": prompt + 7,
                  "prompt_tokens_details": {"cached_tokens": cached}},
    })


def streamed(text: str, prompt: int, cached: int) -> Reply:
    base = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": MODEL}
    return Reply(events=[
        (None, {**base, "choices": [{"index": 0, "delta": {"content": text},
                                     "finish_reason": None}]}),
        (None, {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}),
        (None, {**base, "choices": [], "usage": {
            "prompt_tokens": prompt, "completion_tokens": 7, "total_tokens": prompt + 7,
            "prompt_tokens_details": {"cached_tokens": cached}}}),
        (None, "[DONE]"),
    ])


def llm(wire: WireServer, **options: Any) -> OpenAILLM:
    """A provider talking to the test server by its own address (not OpenAI's)."""
    return OpenAILLM(api_key="sk-test", base_url=f"{wire.url}/v1", max_retries=0, **options)


def via_openai(wire: WireServer) -> OpenAILLM:
    """A provider addressed to OpenAI's own API, whose requests the test server receives
    as an HTTP proxy: nothing leaves the machine."""
    import httpx2
    import openai

    client = openai.AsyncOpenAI(api_key="sk-test", base_url="http://api.openai.com/v1",
                                max_retries=0, http_client=httpx2.AsyncClient(proxy=wire.url))
    return OpenAILLM(client=client)


def expected_key(agent: str, scope: str) -> str:
    return "agentkit-" + hashlib.sha256(f"{agent}\0{scope}".encode()).hexdigest()[:32]


ATLAS = Agent(name="atlas", model=MODEL, prompt="You answer questions about cities.")


async def test_the_key_is_one_per_agent_and_scope_and_cached_tokens_are_read(
    wire: WireServer,
) -> None:
    wire.reply(completion("Lisbon.", 2000, 1920), completion("Porto.", 2000, 1920),
               completion("Faro.", 2000, 0))
    scope = Scope(7, 1)
    first = await ATLAS.run("Capital?", make_test_ctx(llm=via_openai(wire), scope=scope))
    await ATLAS.run("Second city?", make_test_ctx(llm=via_openai(wire), scope=scope))
    await ATLAS.run("South?", make_test_ctx(llm=via_openai(wire), scope=Scope(8, 1)))

    assert wire.requests[0].path == "http://api.openai.com/v1/chat/completions"
    keys = [body["prompt_cache_key"] for body in wire.bodies()]
    assert keys == [expected_key("atlas", "org7:dom1")] * 2 + [expected_key("atlas", "org8:dom1")]
    usage = first.usage
    assert (usage.input_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (80, 1920, 0)
    assert usage.cost_usd == pytest.approx((80 * 0.15 + 1920 * 0.075 + 7 * 0.6) / 1e6)


async def test_streaming_sends_the_key_and_reads_cached_tokens(wire: WireServer) -> None:
    wire.reply(streamed("Lisbon.", 3000, 2944))
    events = [e async for e in ATLAS.stream("Capital?", make_test_ctx(llm=via_openai(wire)))]

    final = events[-1]
    assert isinstance(final, FinalEvent)
    assert wire.bodies()[0]["prompt_cache_key"] == expected_key("atlas", "org0:dom0")
    usage = final.result.usage
    assert (usage.input_tokens, usage.cache_read_tokens) == (56, 2944)


async def test_the_key_can_be_fixed_chosen_per_request_or_left_out(wire: WireServer) -> None:
    wire.reply(*(completion("ok", 10, 0) for _ in range(6)))
    request = ChatRequest(model=MODEL, messages=(Message("user", "hi"),), agent="atlas")
    ctx = make_test_ctx()
    await llm(wire, prompt_cache_key="support-bot").chat(request, ctx)
    await llm(wire, prompt_cache_key=lambda r, c: f"{r.agent}/{c.scope.key()}").chat(request, ctx)
    await llm(wire, prompt_cache_key=default_cache_key).chat(request, ctx)
    await llm(wire, prompt_cache_key=None).chat(request, ctx)
    # "auto" sends no key to a server that is not OpenAI's, nor for a request no agent made.
    await llm(wire).chat(request, ctx)
    await via_openai(wire).chat(ChatRequest(model=MODEL, messages=(Message("user", "hi"),)), ctx)

    bodies = wire.bodies()
    assert [b.get("prompt_cache_key") for b in bodies] == [
        "support-bot", "atlas/org0:dom0", expected_key("atlas", "org0:dom0"), None, None, None,
    ]
    assert default_cache_key(request, ctx) == expected_key("atlas", "org0:dom0")


def test_a_key_of_the_wrong_type_is_refused() -> None:
    with pytest.raises(TypeError) as info:
        OpenAILLM(api_key="k", prompt_cache_key=42)  # type: ignore[arg-type]
    assert str(info.value) == (
        "OpenAILLM(prompt_cache_key=...) takes 'auto', a key string, a function "
        "(request, ctx) -> str | None, or None; got 42"
    )


SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


async def test_an_output_schema_goes_natively_to_openai_and_to_other_servers_when_asked(
    wire: WireServer,
) -> None:
    """response_format follows the prompt_cache_key rule: OpenAI's own API gets it by
    default, another server only with structured_output='json_schema'."""
    wire.reply(*(completion('{"city": "Lisbon"}', 10, 0) for _ in range(4)))
    request = ChatRequest(model=MODEL, messages=(Message("user", "Where?"),),
                          output_schema=SCHEMA)
    for provider in (via_openai(wire), llm(wire), llm(wire, structured_output="json_schema"),
                     llm(wire, structured_output=None)):
        await provider.chat(request, make_test_ctx())
    native = {"type": "json_schema", "json_schema": {
        "name": "output", "strict": True, "schema": {**SCHEMA, "additionalProperties": False},
    }}
    assert [body.get("response_format") for body in wire.bodies()] == [
        native, None, native, None,
    ]
    with pytest.raises(ValueError) as info:
        llm(wire, structured_output="json")
    assert str(info.value) == (
        "OpenAILLM(structured_output=...) must be 'auto', 'json_schema' or None, got 'json'"
    )
