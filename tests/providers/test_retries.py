"""One agentkit retry is one request: retry() honours Retry-After, and the SDKs do not
retry underneath it; streams are retried only while nothing of them was delivered."""

from __future__ import annotations

from email.utils import formatdate
from typing import Any

import pytest

from agentkit import make_ctx
from agentkit.agents import Agent, FinalEvent, TextDeltaEvent
from agentkit.core.contracts.errors import ProviderError
from agentkit.core.contracts.types import ChatRequest, Message
from agentkit.core.policies import retry
from agentkit.core.testing import make_test_ctx
from agentkit.providers import AnthropicLLM, OpenAILLM

from .conftest import Reply, WireServer
from .test_broken_replies import (
    A_END,
    A_START,
    A_STOP,
    A_STOP_BLOCK,
    A_TEXT_START,
    a_body,
    a_error,
    a_sse,
    a_text,
    chunk,
    o_body,
    o_sse,
)

MODELS = {"anthropic": "claude-sonnet-4-6", "openai": "gpt-4o-mini"}


class Sleeps:
    """retry()'s sleep, recording each wait instead of waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def provider(name: str, wire: WireServer, **options: Any) -> AnthropicLLM | OpenAILLM:
    if name == "anthropic":
        return AnthropicLLM(api_key="k", base_url=wire.url, **options)
    return OpenAILLM(api_key="k", base_url=f"{wire.url}/v1", **options)


def rate_limited(name: str, **headers: str) -> Reply:
    if name == "anthropic":
        return Reply(429, a_error("rate_limit_error", "slow down"), headers=headers)
    return Reply(429, {"error": {"message": "slow down", "type": "requests",
                                 "code": "rate_limit_exceeded"}}, headers=headers)


def answer(name: str) -> Reply:
    return Reply(body=a_body() if name == "anthropic" else o_body())


def request(name: str) -> ChatRequest:
    return ChatRequest(model=MODELS[name], messages=(Message("user", "hi"),))


@pytest.mark.parametrize("name", ["anthropic", "openai"])
@pytest.mark.parametrize(
    ("headers", "waits"),
    [
        ({"retry-after": "2"}, 2.0),
        ({"retry-after-ms": "1500"}, 1.5),
        ({"retry-after": formatdate(0, usegmt=True)}, 0.0),  # a date long past
        ({"retry-after": formatdate(4102444800, usegmt=True)}, 12.0),  # 2100, capped
    ],
)
async def test_retry_waits_as_the_provider_asks_and_each_attempt_is_one_request(
    wire: WireServer, name: str, headers: dict[str, str], waits: float
) -> None:
    wire.reply(rate_limited(name, **headers), rate_limited(name, **headers), answer(name))
    sleeps = Sleeps()
    ctx = make_test_ctx(llm=provider(name, wire),
                        chat_middleware=[retry(max_delay=12.0, sleep=sleeps)])
    result = await ctx.invoker.chat(request(name), ctx)
    assert result.content == "hi"
    assert len(wire.requests) == 3
    assert sleeps.delays == [waits, waits]


@pytest.mark.parametrize("name", ["anthropic", "openai"])
@pytest.mark.parametrize("streamed", [False, True])
async def test_a_lasting_rate_limit_costs_three_requests_under_the_default_chain(
    wire: WireServer, name: str, streamed: bool
) -> None:
    wire.reply(*(rate_limited(name, **{"retry-after-ms": "1"}) for _ in range(9)))
    agent = Agent(name="a", model=MODELS[name], prompt="p")
    ctx = make_ctx(provider(name, wire))
    with pytest.raises(ProviderError) as info:
        if streamed:
            async for _ in agent.stream("hi", ctx):
                pass
        else:
            await agent.run("hi", ctx)
    assert (info.value.kind, info.value.transient, info.value.retry_after) == (
        "rate_limit", True, 0.001
    )
    assert len(wire.requests) == 3


@pytest.mark.parametrize("name", ["anthropic", "openai"])
async def test_without_retry_in_the_chain_the_sdk_retries_as_it_always_did(
    wire: WireServer, name: str
) -> None:
    limited = rate_limited(name, **{"retry-after-ms": "1"})
    wire.reply(limited, limited, answer(name))
    result = await provider(name, wire).chat(request(name), make_test_ctx())
    assert result.content == "hi"
    assert len(wire.requests) == 3


@pytest.mark.parametrize("name", ["anthropic", "openai"])
async def test_an_explicit_max_retries_is_kept_under_retry(wire: WireServer, name: str) -> None:
    wire.reply(*(rate_limited(name, **{"retry-after-ms": "1"}) for _ in range(4)))
    ctx = make_test_ctx(llm=provider(name, wire, max_retries=1),
                        chat_middleware=[retry(max_attempts=2, sleep=Sleeps())])
    with pytest.raises(ProviderError):
        await ctx.invoker.chat(request(name), ctx)
    assert len(wire.requests) == 4


def a_answer(text: str) -> Reply:
    return a_sse(A_START, A_TEXT_START, a_text(text), A_STOP_BLOCK, A_END, A_STOP)


def o_answer(text: str) -> Reply:
    return o_sse(chunk({"content": text}), chunk({}, "stop"))


async def test_overload_reported_mid_stream_is_retried_while_nothing_was_delivered(
    wire: WireServer,
) -> None:
    wire.reply(a_sse(A_START, ("error", a_error("overloaded_error", "Overloaded"))),
               a_answer("Lisbon."))
    ctx = make_test_ctx(llm=provider("anthropic", wire),
                        chat_middleware=[retry(backoff=lambda n: 0.0)])
    events = [e async for e in Agent(name="a", model=MODELS["anthropic"], prompt="p")
              .stream("hi", ctx)]
    final = events[-1]
    assert isinstance(final, FinalEvent)
    assert final.result.output == "Lisbon."
    assert len(wire.requests) == 2


@pytest.mark.parametrize("name", ["anthropic", "openai"])
async def test_a_stream_cut_before_any_delta_is_retried(wire: WireServer, name: str) -> None:
    if name == "anthropic":
        wire.reply(a_sse(A_START), a_answer("Lisbon."))
    else:
        wire.reply(o_sse(done=False), o_answer("Lisbon."))
    ctx = make_test_ctx(llm=provider(name, wire), chat_middleware=[retry(backoff=lambda n: 0.0)])
    events = [e async for e in Agent(name="a", model=MODELS[name], prompt="p").stream("hi", ctx)]
    assert [e.text for e in events if isinstance(e, TextDeltaEvent)] == ["Lisbon."]
    assert len(wire.requests) == 2


@pytest.mark.parametrize("name", ["anthropic", "openai"])
async def test_a_stream_cut_after_deltas_is_an_error_not_a_short_answer(
    wire: WireServer, name: str
) -> None:
    if name == "anthropic":
        wire.reply(a_sse(A_START, A_TEXT_START, a_text("Lisbon is "), a_text("bigg")))
    else:
        wire.reply(o_sse(chunk({"content": "Lisbon is "}), chunk({"content": "bigg"}),
                         done=False))
    ctx = make_test_ctx(llm=provider(name, wire), chat_middleware=[retry(backoff=lambda n: 0.0)])
    seen: list[str] = []
    with pytest.raises(ProviderError) as info:
        async for event in Agent(name="a", model=MODELS[name], prompt="p").stream("hi", ctx):
            assert not isinstance(event, FinalEvent)
            if isinstance(event, TextDeltaEvent):
                seen.append(event.text)
    assert (info.value.kind, info.value.transient) == ("stream_truncated", False)
    assert seen == ["Lisbon is ", "bigg"]
    assert len(wire.requests) == 1
