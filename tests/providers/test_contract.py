"""The provider contract: what every provider does, written once and run against
Anthropic, OpenAI Chat Completions, the OpenAI Responses API, Gemini and Bedrock, each
through its official SDK on its local fake server (adapters in ``contract.py``).

Provider-specific behaviour (settings each maps or refuses, media limits, reasoning
state, caching) stays in each provider's own test module.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentkit import make_ctx
from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.errors import ProviderError, UnsupportedSetting
from agentkit.core.contracts.media import Image
from agentkit.core.contracts.types import (
    ChatRequest,
    LLMResult,
    Message,
    ModelSettings,
    TextDelta,
    ToolCallDelta,
    Usage,
)
from agentkit.core.policies import DEFAULT_PRICES
from agentkit.core.testing import make_test_ctx

from .cities import broken_lookup, city_population
from .conftest import WireServer
from .contract import (
    Anthropic,
    Bedrock,
    Gemini,
    OpenAIChat,
    OpenAIResponses,
    ProviderWire,
    ReasoningWire,
)

PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
PROVIDERS = ["anthropic", "openai-chat", "openai", "google", "bedrock"]


def _wired(name: str, request: pytest.FixtureRequest) -> Any:
    if name == "bedrock":
        wired = request.getfixturevalue("bedrock")  # its own server and AWS environment
        return Bedrock(wired.server, wired.llm)
    wire: WireServer = request.getfixturevalue("wire")
    if name == "anthropic":
        from agentkit.providers import AnthropicLLM

        return Anthropic(wire, AnthropicLLM(api_key="k", base_url=wire.url, max_retries=0))
    if name == "openai-chat":
        from agentkit.providers import OpenAILLM

        return OpenAIChat(wire, OpenAILLM(api_key="k", base_url=f"{wire.url}/v1",
                                          max_retries=0))
    if name == "openai":
        from agentkit.providers import OpenAIResponsesLLM

        return OpenAIResponses(wire, OpenAIResponsesLLM(api_key="k", base_url=f"{wire.url}/v1",
                                                        max_retries=0))
    from .fake_gemini import google_llm

    return Gemini(wire, google_llm(wire))


@pytest.fixture(params=PROVIDERS)
def provider(request: pytest.FixtureRequest) -> ProviderWire:
    """Each provider's LLM on its fake server, behind the one adapter shape."""
    wired: ProviderWire = _wired(request.param, request)
    return wired


@pytest.fixture(params=[p for p in PROVIDERS if p != "openai-chat"])
def reasoner(request: pytest.FixtureRequest) -> ReasoningWire:
    """Each provider that sends reasoning state to be sent back (Chat Completions has
    none)."""
    wired: ReasoningWire = _wired(request.param, request)
    return wired



def ask(provider: ProviderWire, **fields: Any) -> ChatRequest:
    return ChatRequest(model=provider.model, messages=(Message("user", "How big is Lisbon?"),),
                       **fields)


async def chat(provider: ProviderWire, **fields: Any) -> LLMResult:
    return await provider.llm.chat(ask(provider, **fields), make_test_ctx(llm=provider.llm))


async def stream(provider: ProviderWire, **fields: Any) -> list[Any]:
    ctx = make_test_ctx(llm=provider.llm)
    return [e async for e in provider.llm.stream(ask(provider, **fields), ctx)]


def priced(provider: ProviderWire, input_tokens: int, output_tokens: int) -> float:
    return DEFAULT_PRICES.cost(provider.model, Usage(input_tokens=input_tokens,
                                                     output_tokens=output_tokens))


async def test_a_text_answer_comes_back_with_its_usage_and_cost(provider: ProviderWire) -> None:
    provider.answer("Lisbon has about 545,000 residents.", usage=(1200, 80))
    result = await chat(provider)
    assert (result.content, result.tool_calls, result.finish_reason) == (
        "Lisbon has about 545,000 residents.", (), "stop")
    usage = result.usage
    assert (usage.input_tokens, usage.output_tokens, usage.requests) == (1200, 80, 1)
    assert usage.cost_usd == pytest.approx(priced(provider, 1200, 80))
    assert usage.cost_usd > 0
    assert len(provider.requests()) == 1


async def test_parallel_tool_calls_are_read_in_order(provider: ProviderWire) -> None:
    provider.calls(("call_a", "city_population", {"city": "Lisbon"}),
                   ("call_b", "city_population", {"city": "Porto"}))
    result = await chat(provider, tools=(city_population.schema,))
    assert result.finish_reason == "tool_calls"
    assert [(c.name, dict(c.arguments)) for c in result.tool_calls] == [
        ("city_population", {"city": "Lisbon"}), ("city_population", {"city": "Porto"})]
    ids = [c.id for c in result.tool_calls]
    assert ids == (["call_a", "call_b"] if provider.ids else ids)
    assert len(set(ids)) == 2 and all(ids)


async def test_tool_results_and_a_failed_call_go_back_to_the_model(
    provider: ProviderWire,
) -> None:
    """A ReAct turn with two calls, one of which fails: both results reach the model on
    the next request, the failure as the tool's error (flagged where the wire can)."""
    provider.calls(("call_a", "city_population", {"city": "Lisbon"}),
                   ("call_b", "broken_lookup", {"code": "LIS"}))
    provider.answer("Lisbon has about 545,000 residents.")
    agent = Agent(name="atlas", model=provider.model, prompt="You answer questions.",
                  cognition=ReActCognition(tools=[city_population, broken_lookup]))
    result = await agent.run("How big is Lisbon?", make_ctx(provider.llm))
    assert result.output == "Lisbon has about 545,000 residents."
    assert result.usage.requests == 2
    _, second = provider.requests()
    results = provider.results(second)
    assert [text for text, _ in results] == [
        "545000", "tool 'broken_lookup' failed: RuntimeError: airport database offline"]
    assert [flag for _, flag in results] in ([False, True], [None, None])


async def test_a_streamed_answer_arrives_as_text_deltas_then_the_whole_result(
    provider: ProviderWire,
) -> None:
    provider.stream_text("Lisbon has ", "about 545,000 ", "residents.", usage=(300, 12))
    *deltas, result = await stream(provider)
    assert [d for d in deltas if isinstance(d, TextDelta)] == [
        TextDelta("Lisbon has "), TextDelta("about 545,000 "), TextDelta("residents.")]
    assert isinstance(result, LLMResult)
    assert (result.content, result.finish_reason) == ("Lisbon has about 545,000 residents.",
                                                      "stop")
    assert (result.usage.input_tokens, result.usage.output_tokens) == (300, 12)
    assert result.usage.cost_usd == pytest.approx(priced(provider, 300, 12))


async def test_a_streamed_tool_call_arrives_as_deltas_then_the_whole_call(
    provider: ProviderWire,
) -> None:
    provider.stream_call(("call_a", "city_population", {"city": "Lisbon"}),
                         ('{"city": ', '"Lisbon"}'))
    *deltas, result = await stream(provider, tools=(city_population.schema,))
    calls = [d for d in deltas if isinstance(d, ToolCallDelta)]
    assert {d.index for d in calls} == {0}
    assert [d.name for d in calls if d.name] == ["city_population"]
    assert json.loads("".join(d.arguments_json for d in calls)) == {"city": "Lisbon"}
    assert isinstance(result, LLMResult)
    (call,) = result.tool_calls
    expected_id = "call_a" if provider.ids else call.id
    # provider_state is each provider's own (the Responses API's item id, ...)
    assert (call.id, call.name, dict(call.arguments)) == (
        expected_id, "city_population", {"city": "Lisbon"})
    assert result.finish_reason == "tool_calls"


async def test_a_stream_that_ends_before_it_finishes_is_an_error_not_a_short_answer(
    provider: ProviderWire,
) -> None:
    provider.stream_cut("Lisbon is ")
    with pytest.raises(ProviderError) as caught:
        await stream(provider)
    assert caught.value.provider == provider.reports
    assert (caught.value.kind, caught.value.transient) == ("stream_truncated", False)


async def test_a_reply_that_is_not_json_is_a_malformed_reply(provider: ProviderWire) -> None:
    provider.not_json()
    with pytest.raises(ProviderError) as caught:
        await chat(provider)
    # transient: a proxy's or an overloaded server's garbage is worth another try
    assert (caught.value.provider, caught.value.kind, caught.value.transient) == (
        provider.reports, "malformed_reply", True)


async def test_http_failures_are_classified_and_keep_the_apis_message(
    provider: ProviderWire,
) -> None:
    for status in (429, 500, 503, 400):
        provider.failure(status, f"the API's own words ({status})")
    found = []
    for _ in range(4):
        with pytest.raises(ProviderError) as caught:
            await chat(provider)
        error = caught.value
        found.append((error.provider, error.status, error.transient,
                      f"the API's own words ({error.status})" in str(error)))
    assert found == [(provider.reports, 429, True, True), (provider.reports, 500, True, True),
                     (provider.reports, 503, True, True), (provider.reports, 400, False, True)]


SETTINGS = [("temperature", 0.25), ("top_p", 0.5), ("seed", 7), ("max_tokens", 321),
            ("stop", ["END"])]


async def test_a_setting_is_sent_or_refused_before_sending_never_dropped(
    provider: ProviderWire,
) -> None:
    for setting, value in SETTINGS:
        sent = len(provider.requests())
        provider.answer("ok")  # a refused setting leaves it for the next one
        try:
            await chat(provider, settings=ModelSettings(**{setting: value}))
        except UnsupportedSetting as refused:
            assert (refused.provider, refused.setting) == (provider.reports, setting)
            assert len(provider.requests()) == sent, f"{setting} was refused after sending"
        else:
            assert provider.settings(provider.requests()[-1]).get(setting) == value, setting


async def test_an_image_in_a_user_message_is_sent_as_its_bytes(provider: ProviderWire) -> None:
    provider.answer("A red square.")
    picture = Message("user", "What is this?", attachments=(Image(PNG, "image/png"),))
    request = ChatRequest(model=provider.model, messages=(picture,))
    result = await provider.llm.chat(request, make_test_ctx(llm=provider.llm))
    assert result.content == "A red square."
    assert provider.images(provider.requests()[0]) == [PNG]


async def test_reasoning_state_goes_back_to_the_provider_with_the_call(
    reasoner: ReasoningWire,
) -> None:
    """What the model thought before a call, with its opaque state, rides on the
    assistant message and is sent back verbatim on the request with the call's result."""
    reasoner.think("The census figure is what counts.", "c2lnbmVkLTE=",
                   ("call_a", "city_population", {"city": "Lisbon"}))
    reasoner.answer("About 545,000.")
    agent = Agent(name="atlas", model=reasoner.thinker, prompt="You answer questions.",
                  cognition=ReActCognition(tools=[city_population]))
    result = await agent.run("How big is Lisbon?", make_ctx(reasoner.llm))
    assert result.output == "About 545,000."
    first, second = reasoner.requests()
    assert (reasoner.states(first), reasoner.states(second)) == ([], ["c2lnbmVkLTE="])
    (turn,) = [m for m in result.messages if m.role == "assistant" and m.tool_calls]
    assert [p.text for p in turn.reasoning] == ["The census figure is what counts."]
