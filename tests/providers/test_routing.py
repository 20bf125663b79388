"""Several providers in one context: each agent's model spec picks its provider."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from agentkit import make_ctx
from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.errors import ProviderError, UnservedModel
from agentkit.core.policies import Budget
from agentkit.core.testing import FakeLLM, RecordingTracer
from agentkit.providers import AnthropicLLM
from agentkit.tools import as_tool

from .conftest import Reply, WireServer, serving
from .fake_gemini import MODEL as GEMINI
from .fake_gemini import bodies, google_llm, reply, usage

CLAUDE = "claude-sonnet-4-6"


@pytest.fixture
def wire2() -> Iterator[WireServer]:
    """A second server, for a second provider."""
    yield from serving()


def claude_reply(content: list[dict[str, Any]], stop: str) -> Reply:
    return Reply(body={
        "id": "msg_1", "type": "message", "role": "assistant", "model": CLAUDE,
        "content": content, "stop_reason": stop, "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 20},
    })


def triage(model: str = f"google:{GEMINI}") -> Agent:
    return Agent(name="triage", model=model, prompt="Sort a request into a team.",
                 description="Sorts a support request into the team that should take it.")


def main_agent(model: str = f"anthropic:{CLAUDE}", helper: Agent | None = None) -> Agent:
    tools = [as_tool(helper or triage(), name="triage", side_effecting=False)]
    return Agent(name="desk", model=model, prompt="You run the support desk.",
                 cognition=ReActCognition(tools=tools))


async def test_two_agents_on_two_providers_delegate_through_one_context(
    wire: WireServer, wire2: WireServer
) -> None:
    """Each request goes to the provider its agent's spec names, through the one chat
    chain (its tracer sees both models; its budget is charged for both)."""
    wire.reply(reply([{"text": "billing"}], meta=usage(1000, 10)))
    wire2.reply(
        claude_reply([{"type": "tool_use", "id": "toolu_1", "name": "triage",
                       "input": {"task": "I was charged twice"}}], "tool_use"),
        claude_reply([{"type": "text", "text": "Sent to billing."}], "end_turn"),
    )
    tracer = RecordingTracer()
    budget = Budget(max_cost_usd=1.0)
    ctx = make_ctx(
        providers={"google": google_llm(wire),
                   "anthropic": AnthropicLLM(api_key="k", base_url=wire2.url, max_retries=0)},
        tracer=tracer, budget=budget,
    )
    result = await main_agent().run("I was charged twice", ctx)
    assert result.output == "Sent to billing."
    assert [r.path for r in wire.requests] == [f"/v1/models/{GEMINI}:generateContent"]
    assert bodies(wire)[0]["contents"] == [
        {"role": "user", "parts": [{"text": "I was charged twice"}]}
    ]
    assert [r.path for r in wire2.requests] == ["/v1/messages", "/v1/messages"]
    assert [r.body["model"] for r in wire2.requests] == [CLAUDE, CLAUDE]
    assert [s.name for s in tracer.spans if s.name.startswith("chat ")] == [
        f"chat anthropic:{CLAUDE}", f"chat google:{GEMINI}", f"chat anthropic:{CLAUDE}"
    ]
    # gemini-2.5-flash: 1000 in at $0.30, 10 out at $2.50; claude-sonnet-4-6: 2 x (100 in
    # at $3, 20 out at $15) per million tokens
    assert budget.spent_usd == pytest.approx(
        (1000 * 0.30 + 10 * 2.50) / 1e6 + 2 * (100 * 3 + 20 * 15) / 1e6
    )


async def test_a_context_without_providers_builds_each_from_its_spec_when_first_used(
    wire: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    ctx = make_ctx()  # builds nothing yet: no key is needed until an agent names Gemini
    monkeypatch.setenv("GEMINI_API_KEY", "from-env")
    wire.reply(reply([{"text": "billing"}]), reply([{"text": "support"}]))
    agent = triage(f"google:{GEMINI}@{wire.url}")
    first = await agent.run("I was charged twice", ctx)
    second = await agent.run("My login fails", ctx.for_run("run-2"))
    assert (first.output, second.output) == ("billing", "support")
    assert [r.headers["x-goog-api-key"] for r in wire.requests] == ["from-env", "from-env"]


async def test_a_spec_the_context_cannot_build_fails_before_the_run_starts(
    wire: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    ctx = make_ctx()
    with pytest.raises(ProviderError) as missing:
        await triage(f"google:{GEMINI}@{wire.url}").run("I was charged twice", ctx)
    assert "GEMINI_API_KEY" in str(missing.value)
    assert wire.requests == []


async def test_a_model_without_a_provider_is_refused_among_several_providers() -> None:
    ctx = make_ctx(providers={"google": FakeLLM("billing"), "anthropic": FakeLLM("ok")})
    with pytest.raises(UnservedModel) as refused:
        await triage(CLAUDE).run("I was charged twice", ctx)
    assert str(refused.value) == (
        f"run {ctx.run_id}: model 'claude-sonnet-4-6' names no provider, and this context "
        "holds several (['anthropic', 'google']); write the agent's model as PROVIDER:MODEL, "
        "e.g. 'anthropic:claude-sonnet-4-6'"
    )
    assert (refused.value.model, refused.value.available) == (CLAUDE, ("anthropic", "google"))


async def test_a_provider_the_context_was_not_given_is_built_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    ctx = make_ctx(providers={"google": FakeLLM("billing")})
    with pytest.raises(ProviderError) as missing:
        await triage("openai:gpt-4o-mini").run("I was charged twice", ctx)
    assert "OPENAI_API_KEY" in str(missing.value)


async def test_one_provider_serves_models_written_without_a_prefix() -> None:
    """With a single provider a bare model id keeps working, as with make_ctx(llm)."""
    fake = FakeLLM("billing")
    ctx = make_ctx(providers={"anthropic": fake})
    result = await triage(CLAUDE).run("I was charged twice", ctx)
    assert result.output == "billing"
    assert [r.model for r in fake.requests] == [CLAUDE]


async def test_a_prefixed_spec_goes_to_its_provider_even_beside_one_other() -> None:
    google, anthropic = FakeLLM("billing"), FakeLLM("Sent to billing.")
    ctx = make_ctx(providers={"google": google, "anthropic": anthropic})
    await triage().run("I was charged twice", ctx)
    assert [r.model for r in google.requests] == [f"google:{GEMINI}"]
    assert anthropic.requests == []


def test_providers_are_named_by_their_spec_prefix() -> None:
    with pytest.raises(ValueError) as bad:
        make_ctx(providers={"gemini": FakeLLM("x")})
    assert str(bad.value) == (
        "make_ctx(providers=...): 'gemini' is no provider name; accepted: ['anthropic', "
        "'openai', 'openai-chat', 'google', 'vertex', 'bedrock'] (the PROVIDER of a "
        "PROVIDER:MODEL spec)"
    )


def test_one_llm_or_several_providers_not_both() -> None:
    with pytest.raises(TypeError) as both:
        make_ctx(FakeLLM("x"), providers={"google": FakeLLM("y")})
    assert str(both.value) == (
        "make_ctx: pass one llm, or providers={...} for several, not both; with providers= "
        "an agent picks its provider by its model spec (google:gemini-2.5-flash)"
    )


async def test_a_delegated_agents_spec_is_checked_when_the_top_run_starts() -> None:
    """A sub-agent's unservable spec is a configuration mistake, not something the model
    should be told as a failed tool call: the run that delegates to it does not start."""
    claude = FakeLLM("never asked")
    ctx = make_ctx(providers={"google": FakeLLM("billing"), "anthropic": claude})
    with pytest.raises(UnservedModel) as refused:
        await main_agent(helper=triage(GEMINI)).run("I was charged twice", ctx)
    assert refused.value.model == GEMINI
    assert str(refused.value).endswith("e.g. 'google:gemini-2.5-flash'")
    assert claude.requests == []


async def test_a_stream_broken_mid_answer_names_the_provider_that_broke(
    wire: WireServer,
) -> None:
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    wire.reply(Reply(events=[
        ("message_start", {"type": "message_start", "message": {
            "id": "msg_s", "type": "message", "role": "assistant", "model": CLAUDE,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 20, "output_tokens": 1}}}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "text_delta", "text": "Sent to "}}),
        ("error", overloaded),
    ]))
    ctx = make_ctx(providers={
        "anthropic": AnthropicLLM(api_key="k", base_url=wire.url, max_retries=0),
        "google": FakeLLM("billing"),
    })
    with pytest.raises(ProviderError) as broken:
        async for _ in Agent(name="desk", model=f"anthropic:{CLAUDE}", prompt="p").stream(
            "I was charged twice", ctx
        ):
            pass
    assert (broken.value.kind, broken.value.provider) == ("stream_interrupted", "anthropic")
