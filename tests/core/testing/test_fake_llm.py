"""FakeLLM: a scripted, strict, recording stand-in for a chat model."""

from __future__ import annotations

import pytest

from agentkit.core.contracts.types import (
    ChatRequest,
    LLMResult,
    Message,
    ReasoningDelta,
    ReasoningPart,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
)
from agentkit.core.runtime import RunContext
from agentkit.core.testing import FakeLLM, FakeLLMExhausted, Turn, make_test_ctx


def ask(text: str, system: str = "") -> ChatRequest:
    return ChatRequest(model="fake", system=system, messages=(Message("user", text),))


@pytest.fixture
def ctx() -> RunContext:
    return make_test_ctx()


async def test_an_empty_fake_fails_on_the_first_call(ctx: RunContext) -> None:
    llm = FakeLLM()
    with pytest.raises(FakeLLMExhausted) as info:
        await llm.chat(ask("hi"), ctx)
    assert str(info.value) == (
        "FakeLLM: the script has 0 turn(s) and all were used; call 1 has no answer. "
        "Add a Turn to FakeLLM.script([...])."
    )
    assert isinstance(info.value, AssertionError)


async def test_a_reply_answers_every_call(ctx: RunContext) -> None:
    llm = FakeLLM("x")
    answers = [(await llm.chat(ask(q), ctx)).content for q in ("a", "b", "c")]
    assert answers == ["x", "x", "x"]
    llm.assert_all_used()


async def test_a_script_answers_in_order_and_records_requests(ctx: RunContext) -> None:
    llm = FakeLLM.script([Turn(content="one"), Turn(content="two")])
    first, second = ask("first"), ask("second")
    assert (await llm.chat(first, ctx)).content == "one"
    assert (await llm.chat(second, ctx)).content == "two"
    assert llm.requests == [first, second]
    assert llm.remaining == 0
    llm.assert_all_used()


async def test_an_exhausted_script_names_the_call_that_had_no_answer(ctx: RunContext) -> None:
    llm = FakeLLM.script([Turn(content="one"), Turn(content="two")])
    await llm.chat(ask("1"), ctx)
    await llm.chat(ask("2"), ctx)
    third = ask("3")
    with pytest.raises(FakeLLMExhausted) as info:
        await llm.chat(third, ctx)
    assert str(info.value) == (
        "FakeLLM: the script has 2 turn(s) and all were used; call 3 has no answer. "
        "Add a Turn to FakeLLM.script([...])."
    )
    assert llm.requests[-1] is third


async def test_assert_all_used_fails_while_turns_remain(ctx: RunContext) -> None:
    llm = FakeLLM.script([Turn(content="one"), Turn(content="two")])
    await llm.chat(ask("1"), ctx)
    assert llm.remaining == 1
    with pytest.raises(AssertionError) as info:
        llm.assert_all_used()
    assert str(info.value) == "FakeLLM: 1 of 2 scripted turn(s) were never used"


async def test_a_turn_with_an_error_raises_it_and_the_script_moves_on(ctx: RunContext) -> None:
    error = TimeoutError("provider timed out")
    llm = FakeLLM.script([Turn(error=error), Turn(content="recovered")])
    with pytest.raises(TimeoutError) as info:
        await llm.chat(ask("1"), ctx)
    assert info.value is error
    assert (await llm.chat(ask("2"), ctx)).content == "recovered"
    llm.assert_all_used()


async def test_default_usage_and_finish_reason(ctx: RunContext) -> None:
    call = ToolCall("c1", "city_population", {"city": "Lisbon"})
    llm = FakeLLM.script([Turn(tool_calls=(call,)), Turn(content="Lisbon: 545,000.")])
    request = ask("How big is Lisbon?", system="You answer questions.")  # 18 + 21 chars

    assert await llm.chat(request, ctx) == LLMResult(
        tool_calls=(call,),
        usage=Usage(input_tokens=9, output_tokens=0, requests=1),
        finish_reason="tool_calls",
        model="fake",
    )
    assert await llm.chat(request, ctx) == LLMResult(
        content="Lisbon: 545,000.",
        usage=Usage(input_tokens=9, output_tokens=4, requests=1),
        finish_reason="stop",
        model="fake",
    )


async def test_explicit_usage_and_finish_reason_are_reported(ctx: RunContext) -> None:
    usage = Usage(input_tokens=100, output_tokens=7, cost_usd=0.01, requests=1)
    llm = FakeLLM.script([Turn(content="cut off", usage=usage, finish_reason="length")])
    result = await llm.chat(ChatRequest(model="claude-test", messages=()), ctx)
    assert result == LLMResult(
        content="cut off", usage=usage, finish_reason="length", model="claude-test"
    )


async def test_stream_yields_pieces_that_concatenate_then_the_result(ctx: RunContext) -> None:
    call = ToolCall("c1", "city_population", {"city": "Lisbon"})
    llm = FakeLLM.script([Turn(content="let me  look that up", tool_calls=(call,))])
    request = ask("How big is Lisbon?")

    events = [event async for event in llm.stream(request, ctx)]

    *deltas, final = events
    text = [d for d in deltas if isinstance(d, TextDelta)]
    assert text == [
        TextDelta("let"),
        TextDelta(" me"),
        TextDelta(" "),
        TextDelta(" look"),
        TextDelta(" that"),
        TextDelta(" up"),
    ]
    assert "".join(d.text for d in text) == "let me  look that up"
    assert deltas[len(text):] == [
        ToolCallDelta(index=0, id="c1", name="city_population", arguments_json='{"city": "Lisbon"}')
    ]
    assert final == LLMResult(
        content="let me  look that up",
        tool_calls=(call,),
        usage=Usage(input_tokens=4, output_tokens=5, requests=1),
        finish_reason="tool_calls",
        model="fake",
    )
    assert llm.requests == [request]


def test_repr_shows_the_mode() -> None:
    assert repr(FakeLLM("x")) == "FakeLLM('x')"
    assert repr(FakeLLM.script([Turn(content="a")])) == "FakeLLM.script(1 turns, 1 left)"


async def test_a_turn_without_text_streams_no_text_delta(ctx: RunContext) -> None:
    call = ToolCall("c1", "city_population", {"city": "Lisbon"})
    llm = FakeLLM.script([Turn(tool_calls=(call,))])
    events = [event async for event in llm.stream(ask("How big is Lisbon?"), ctx)]
    assert events[:-1] == [
        ToolCallDelta(index=0, id="c1", name="city_population", arguments_json='{"city": "Lisbon"}')
    ]
    assert events[-1] == LLMResult(
        tool_calls=(call,),
        usage=Usage(input_tokens=4, output_tokens=0, requests=1),
        finish_reason="tool_calls",
        model="fake",
    )


async def test_a_turn_scripts_reasoning_that_reaches_the_message_and_the_stream(
    ctx: RunContext,
) -> None:
    signed = ReasoningPart("anthropic", "Check the census.", {"signature": "sig"})
    llm = FakeLLM.script([
        Turn("Lisbon.", reasoning="Think about Lisbon first."),
        Turn("Porto.", reasoning=(signed,)),
    ])
    result = await llm.chat(ask("Which city?"), ctx)
    assert result.message.reasoning == (ReasoningPart("fake", "Think about Lisbon first."),)
    assert result.usage.reasoning_tokens == 6
    events = [event async for event in llm.stream(ask("And the next?"), ctx)]
    assert events[:2] == [ReasoningDelta("Check the census."), TextDelta("Porto.")]
    assert isinstance(events[2], LLMResult) and events[2].reasoning == (signed,)
    with pytest.raises(TypeError) as info:
        Turn(reasoning=["thought"])  # type: ignore[arg-type]
    assert str(info.value) == (
        "Turn.reasoning must be a str or a tuple of ReasoningPart, got ['thought']"
    )
