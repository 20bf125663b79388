"""Reasoning in the message contract: the setting, the parts a message carries, their usage."""

from __future__ import annotations

from typing import Any

import pytest

import agentkit
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.types import (
    LLMResult,
    Message,
    ModelSettings,
    Reasoning,
    ReasoningPart,
    ToolCall,
    Usage,
)
from agentkit.core.policies.prices import DEFAULT_PRICES

SIGNED = ReasoningPart("anthropic", "Lisbon is a city; look it up.",
                       {"type": "thinking", "signature": "sig-1"})


def test_reasoning_is_exported_from_agentkit_and_the_types_module() -> None:
    assert agentkit.Reasoning is Reasoning
    assert Reasoning() == Reasoning(effort="medium", budget_tokens=None, summary=False)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"effort": "max"}, "Reasoning.effort must be 'low', 'medium' or 'high', got 'max'"),
        ({"budget_tokens": 0}, "Reasoning.budget_tokens must be a positive int or None, got 0"),
        ({"budget_tokens": True},
         "Reasoning.budget_tokens must be a positive int or None, got True"),
        ({"summary": "yes"}, "Reasoning.summary must be True or False, got 'yes'"),
    ],
)
def test_a_bad_reasoning_setting_says_what_is_accepted(
    fields: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError) as info:
        Reasoning(**fields)
    assert str(info.value) == message


def test_model_settings_take_reasoning_and_merge_it_like_the_other_fields() -> None:
    base = ModelSettings(max_tokens=100, reasoning=Reasoning(effort="low"))
    assert base.is_set()
    assert ModelSettings(reasoning=Reasoning()).is_set()
    assert base.merged(ModelSettings(temperature=0.5)).reasoning == Reasoning(effort="low")
    high = Reasoning(effort="high", summary=True)
    assert base.merged(ModelSettings(reasoning=high)) == ModelSettings(
        max_tokens=100, reasoning=high
    )
    with pytest.raises(ValueError) as info:
        ModelSettings(reasoning="high")  # type: ignore[arg-type]
    assert str(info.value) == (
        "ModelSettings.reasoning must be a Reasoning(effort=..., budget_tokens=..., "
        "summary=...) or None, got 'high'"
    )


def test_a_result_carries_its_reasoning_into_the_transcript_message() -> None:
    call = ToolCall("c1", "lookup", {"city": "Lisbon"},
                    provider_state={"openai": {"id": "fc_1"}})
    result = LLMResult("", (call,), reasoning=(SIGNED,))
    assert result.message == Message("assistant", "", tool_calls=(call,), reasoning=(SIGNED,))
    assert result.message.tool_calls[0].provider_state == {"openai": {"id": "fc_1"}}


def test_reasoning_state_is_frozen_and_parts_are_checked() -> None:
    part = ReasoningPart("openai", state={"summary": [{"type": "summary_text", "text": "t"}]})
    assert isinstance(part.state, FrozenDict)
    assert part.state["summary"] == (FrozenDict({"type": "summary_text", "text": "t"}),)
    assert Message("assistant", reasoning=[SIGNED]).reasoning == (SIGNED,)  # type: ignore[arg-type]
    with pytest.raises(ValueError) as empty:
        ReasoningPart("")
    assert str(empty.value) == (
        "ReasoningPart.provider must name the provider that produced it, got ''"
    )
    with pytest.raises(TypeError) as loose:
        Message("assistant", reasoning=("thought",))  # type: ignore[arg-type]
    assert str(loose.value) == (
        "Message.reasoning must be a tuple of ReasoningPart, got ('thought',)"
    )
    with pytest.raises(TypeError) as state:
        ToolCall("c1", "f", provider_state={"gemini": "sig"})  # type: ignore[dict-item]
    assert str(state.value) == (
        "ToolCall.provider_state must map provider names to JSON objects, got {'gemini': 'sig'}"
    )


def test_reasoning_tokens_add_up_and_are_priced_as_output() -> None:
    total = Usage(output_tokens=10, reasoning_tokens=30) + Usage(reasoning_tokens=5, requests=1)
    assert total == Usage(output_tokens=10, reasoning_tokens=35, requests=1)
    assert total.total_tokens == 45
    # gpt-5: $10 per million output tokens, thinking included.
    assert DEFAULT_PRICES.cost("gpt-5", Usage(output_tokens=100, reasoning_tokens=900)) == (
        pytest.approx(1000 * 10 / 1e6)
    )
