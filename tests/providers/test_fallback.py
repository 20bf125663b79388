"""FallbackLLM against real HTTP servers speaking Anthropic's and OpenAI's wire formats."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit.agents import Agent, StepEvent
from agentkit.core.contracts.errors import ProviderError
from agentkit.core.contracts.types import (
    ChatRequest,
    LLMResult,
    Message,
    ReasoningPart,
    TextDelta,
    ToolCall,
    Usage,
)
from agentkit.core.policies import (
    DEFAULT_PRICES,
    Budget,
    CircuitOpen,
    circuit_breaker,
    meter,
    tracing,
)
from agentkit.core.testing import FakeLLM, RecordingTracer, Turn, make_test_ctx
from agentkit.providers import AnthropicLLM, FallbackLLM, OpenAILLM
from agentkit.providers.fallback import translated

from .conftest import Reply, WireServer
from .test_openai import completion

CLAUDE = "claude-sonnet-4-6"
GPT = "gpt-4o-mini"


def anthropic_error(status: int, kind: str) -> Reply:
    return Reply(status, {"type": "error", "error": {"type": kind, "message": "not now"}})


def models(first: WireServer, second: WireServer, **options: Any) -> FallbackLLM:
    return FallbackLLM(
        AnthropicLLM(api_key="k", base_url=first.url, max_retries=0),
        (OpenAILLM(api_key="k", base_url=f"{second.url}/v1", max_retries=0), GPT),
        **options,
    )


@pytest.mark.parametrize(("status", "kind"), [
    (429, "rate_limit_error"), (529, "overloaded_error"), (500, "api_error"), (503, "api_error"),
])
async def test_a_transient_failure_sends_the_same_request_to_the_next_model(
    wire: WireServer, second_wire: WireServer, status: int, kind: str
) -> None:
    wire.reply(anthropic_error(status, kind))
    second_wire.reply(completion("Lisbon."))
    agent = Agent(name="atlas", model=CLAUDE, prompt="You answer questions about cities.")
    result = await agent.run("Capital of Portugal?", make_test_ctx(llm=models(wire, second_wire)))
    assert result.output == "Lisbon."
    assert [r.body["model"] for r in wire.requests] == [CLAUDE]
    assert [r.body["model"] for r in second_wire.requests] == [GPT]
    sent = second_wire.requests[0].body["messages"]
    assert sent == [{"role": "system", "content": "You answer questions about cities."},
                    {"role": "user", "content": "Capital of Portugal?"}]
    usage = Usage(input_tokens=10, output_tokens=5, requests=1,
                  cost_usd=DEFAULT_PRICES.cost(GPT, Usage(input_tokens=10, output_tokens=5)))
    assert dict(result.usage_by_model) == {GPT: usage}
    assert result.usage == usage


async def test_a_permanent_failure_does_not_fall_through(
    wire: WireServer, second_wire: WireServer
) -> None:
    wire.reply(anthropic_error(400, "invalid_request_error"))
    with pytest.raises(ProviderError) as info:
        await models(wire, second_wire).chat(
            ChatRequest(model=CLAUDE, messages=(Message("user", "hi"),)), make_test_ctx())
    assert (info.value.status, info.value.kind) == (400, "bad_request")
    assert second_wire.requests == []


async def test_a_permanent_failure_falls_through_when_on_names_its_kind(
    wire: WireServer, second_wire: WireServer
) -> None:
    wire.reply(anthropic_error(400, "invalid_request_error"))
    second_wire.reply(completion("hello"))
    result = await models(wire, second_wire, on=("transient", "bad_request")).chat(
        ChatRequest(model=CLAUDE, messages=(Message("user", "hi"),)), make_test_ctx())
    assert (result.content, result.model) == ("hello", GPT)


async def test_the_last_models_failure_is_the_calls_failure(
    wire: WireServer, second_wire: WireServer
) -> None:
    wire.reply(anthropic_error(529, "overloaded_error"))
    second_wire.reply(Reply(503, {"error": {"message": "unavailable"}}))
    with pytest.raises(ProviderError) as info:
        await models(wire, second_wire).chat(
            ChatRequest(model=CLAUDE, messages=(Message("user", "hi"),)), make_test_ctx())
    assert (info.value.provider, info.value.status) == ("openai", 503)


def _busy() -> ProviderError:
    return ProviderError("fake: HTTP 529 (overloaded)", provider="fake", transient=True,
                         status=529, kind="overloaded")


async def test_an_open_circuit_skips_a_model_without_calling_it() -> None:
    primary = FakeLLM.script([Turn(error=_busy())])
    backup = FakeLLM.script([Turn("one"), Turn("two")])
    observed: list[tuple[str, dict[str, Any]]] = []
    llm = FallbackLLM(primary, (backup, "backup-model"),
                      circuit=circuit_breaker(failure_threshold=1, reset_after=60))
    ctx = make_test_ctx(llm=llm, observer=lambda kind, data: observed.append((kind, data)))
    request = ChatRequest(model="main-model", messages=(Message("user", "hi"),))
    first = await llm.chat(request, ctx)
    second = await llm.chat(request, ctx)
    assert (first.content, second.content) == ("one", "two")
    assert len(primary.requests) == 1  # the second call never reached it
    assert [r.model for r in backup.requests] == ["backup-model", "backup-model"]
    falls = [data for kind, data in observed if kind == "model.fallback"]
    assert [(d["model"], d["next_model"]) for d in falls] == [
        ("main-model", "backup-model"), ("main-model", "backup-model")]
    assert falls[1]["error"] == str(CircuitOpen("model 'main-model'", 1, 60.0))


async def test_a_stream_falls_through_before_its_first_delta_only() -> None:
    primary = FakeLLM.script([Turn(error=_busy())])
    backup = FakeLLM.script([Turn("from the backup")])
    llm = FallbackLLM(primary, (backup, "backup-model"))
    request = ChatRequest(model="main-model", messages=(Message("user", "hi"),))
    events = [e async for e in llm.stream(request, make_test_ctx())]
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["from", " the", " backup"]
    final = events[-1]
    assert isinstance(final, LLMResult) and final.model == "backup-model"


async def test_each_step_event_names_the_model_that_answered() -> None:
    llm = FallbackLLM(FakeLLM.script([Turn(error=_busy())]),
                      (FakeLLM.script([Turn("done")]), "backup-model"))
    agent = Agent(name="a", model="main-model", prompt="p")
    events = [e async for e in agent.stream("hi", make_test_ctx(llm=llm))]
    steps = [e for e in events if isinstance(e, StepEvent)]
    assert [(s.step, s.model) for s in steps] == [(1, "backup-model")]
    assert list(events[-1].result.usage_by_model) == ["backup-model"]


async def test_the_chat_span_names_the_model_that_answered() -> None:
    tracer = RecordingTracer()
    llm = FallbackLLM(FakeLLM.script([Turn(error=_busy())]),
                      (FakeLLM("ok"), "backup-model"))
    ctx = make_test_ctx(llm=llm, tracer=tracer, chat_middleware=[tracing()])
    await Agent(name="a", model="main-model", prompt="p").run("hi", ctx)
    (span,) = [s for s in tracer.spans if s.name.startswith("chat")]
    assert (span.attributes["gen_ai.request.model"],
            span.attributes["gen_ai.response.model"]) == ("main-model", "backup-model")


async def test_spec_entries_are_built_with_llm_for(
    second_wire: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    second_wire.reply(completion("hi from llama"))
    llm = FallbackLLM(FakeLLM.script([Turn(error=_busy())]),
                      f"openai:llama3.1@{second_wire.url}/v1")
    result = await llm.chat(ChatRequest(model="main", messages=(Message("user", "hi"),)),
                            make_test_ctx())
    assert result.content == "hi from llama"
    assert second_wire.requests[0].body["model"] == "llama3.1"


def test_bad_entries_and_kinds_say_what_is_accepted() -> None:
    with pytest.raises(TypeError) as alone:
        FallbackLLM(FakeLLM())
    assert str(alone.value) == (
        "FallbackLLM(primary, *fallbacks) needs at least one fallback: with only a primary, "
        "use that provider itself"
    )
    with pytest.raises(TypeError) as entry:
        FallbackLLM(FakeLLM(), 42)  # type: ignore[arg-type]
    assert str(entry.value) == (
        "FallbackLLM entry 1 must be a provider (with chat and stream), a (provider, model "
        "id) pair or a model spec such as 'openai:gpt-4o-mini', got 42"
    )
    with pytest.raises(ValueError) as kind:
        FallbackLLM(FakeLLM(), FakeLLM(), on=("transient", "rate-limit"))
    assert str(kind.value).startswith(
        "FallbackLLM(on=...) got unknown failure kind(s) ['rate-limit']; accepted: ["
    )


async def test_an_unpriced_answer_is_charged_at_the_price_of_the_model_that_gave_it() -> None:
    """A FallbackLLM's answer may come from another model than the one asked for."""
    usage = Usage(input_tokens=1000, output_tokens=100, requests=1)
    busy = ProviderError("fake: HTTP 529", provider="fake", transient=True, kind="overloaded")
    llm = FallbackLLM(FakeLLM.script([Turn(error=busy)]),
                      (FakeLLM.script([Turn("hi", usage=usage)]), "gpt-4o-mini"))
    budget = Budget(max_cost_usd=1.0)
    ctx = make_test_ctx(llm=llm, chat_middleware=[meter()], budget=budget)
    await ctx.invoker.chat(
        ChatRequest(model="claude-sonnet-4-6", messages=(Message("user", "hi"),)), ctx)
    assert budget.spent_usd == pytest.approx(DEFAULT_PRICES.cost("gpt-4o-mini", usage))
    assert budget.spent_usd != pytest.approx(DEFAULT_PRICES.cost("claude-sonnet-4-6", usage))


def _reasoned_transcript() -> tuple[Message, ...]:
    call = ToolCall("c1", "lookup", {"q": "x"},
                    provider_state={"anthropic": {"sig": "a"}, "openai": {"id": "fc_1"}})
    return (
        Message("user", "hi"),
        Message("assistant", tool_calls=(call,), reasoning=(
            ReasoningPart("anthropic", "thinking", {"type": "thinking", "signature": "s"}),
            ReasoningPart("openai", "summary", {"id": "rs_1"}),
        )),
        Message("tool", "found", tool_call_id="c1", name="lookup"),
    )


def test_an_entry_gets_only_its_own_providers_reasoning_and_call_state() -> None:
    request = ChatRequest(model=CLAUDE, messages=_reasoned_transcript())
    for_openai = translated(request, GPT, "openai")
    assert for_openai.model == GPT
    (assistant,) = [m for m in for_openai.messages if m.role == "assistant"]
    assert assistant.reasoning == (ReasoningPart("openai", "summary", {"id": "rs_1"}),)
    assert dict(assistant.tool_calls[0].provider_state) == {"openai": {"id": "fc_1"}}
    assert assistant.tool_calls[0].arguments == {"q": "x"}
    nameless = translated(request, None, None)
    (assistant,) = [m for m in nameless.messages if m.role == "assistant"]
    assert (assistant.reasoning, dict(assistant.tool_calls[0].provider_state)) == ((), {})
    plain = ChatRequest(model=CLAUDE, messages=(Message("user", "hi"),))
    assert translated(plain, None, "anthropic") is plain


async def test_the_fallback_is_sent_the_transcript_without_the_primarys_reasoning() -> None:
    backup = FakeLLM("ok")
    llm = FallbackLLM(FakeLLM.script([Turn(error=_busy())]), (backup, "backup-model"))
    await llm.chat(ChatRequest(model="main", messages=_reasoned_transcript()), make_test_ctx())
    (sent,) = backup.requests
    assert [m.reasoning for m in sent.messages] == [(), (), ()]
    assert dict(sent.messages[1].tool_calls[0].provider_state) == {}
