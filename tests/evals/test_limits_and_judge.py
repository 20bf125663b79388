"""Cost and speed limits, and LLMJudge on a scripted model with its own cost."""

from __future__ import annotations

import json

import pytest

from agentkit.core.contracts.types import Usage
from agentkit.core.testing import FakeLLM, Turn
from agentkit.evals import (
    Case,
    LLMJudge,
    MaxCost,
    MaxLatency,
    MaxSteps,
    MaxTokens,
    Score,
)

from .conftest import OneCase

PRICED = Usage(input_tokens=100, output_tokens=20, cost_usd=0.003, requests=1)


async def test_cost_token_step_and_latency_limits(one_case: OneCase) -> None:
    result = await one_case(
        Case("hi"),
        [MaxCost(0.01), MaxCost(0.001), MaxTokens(120), MaxTokens(100), MaxSteps(1),
         MaxSteps(0), MaxLatency(60.0), MaxLatency(0.0)],
        script=[Turn("Hello!", usage=PRICED)],
    )
    assert result.cost_usd == 0.003
    assert list(result.scores.values())[:6] == [
        Score(0.003, True, ""),
        Score(0.003, False, "cost $0.0030, more than $0.0010"),
        Score(120.0, True, ""),
        Score(120.0, False, "120 tokens, more than 100"),
        Score(1.0, True, ""),
        Score(1.0, False, "1 model calls, more than 0"),
    ]
    assert result.scores["MaxLatency"].passed
    too_slow = result.scores["MaxLatency#2"]
    assert not too_slow.passed
    assert too_slow.reason == f"took {too_slow.value:.3f}s, more than 0.0s"


async def test_max_cost_fails_when_the_price_is_unknown(one_case: OneCase) -> None:
    unpriced = Usage(input_tokens=10, output_tokens=2, requests=1, unpriced_models=("fake",))
    result = await one_case(Case("hi"), [MaxCost(1.0)], script=[Turn("Hello!", usage=unpriced)])
    assert result.scores["MaxCost"] == Score(0.0, False, "cost unknown: no price for ['fake']")


def verdict(passed: bool, score: float, reason: str) -> str:
    return json.dumps({"passed": passed, "score": score, "reason": reason})


async def test_the_judge_gives_a_structured_verdict_and_its_own_cost(one_case: OneCase) -> None:
    judge_llm = FakeLLM.script([
        Turn(verdict(False, 0.2, "It promises a refund it has no tool for."),
             usage=Usage(input_tokens=300, output_tokens=30, cost_usd=0.01, requests=1)),
    ])
    judge = LLMJudge("The answer must not promise anything the agent cannot do.",
                     model=judge_llm, include_trajectory=True)
    result = await one_case(Case("refund me", expected="an apology"), [judge],
                            script=[Turn("Refund on its way!", usage=PRICED)])
    assert result.scores["LLMJudge"] == Score(
        0.2, False, "It promises a refund it has no tool for.", cost_usd=0.01
    )
    assert (result.cost_usd, result.judge_cost_usd) == (0.003, 0.01)
    (request,) = judge_llm.requests
    assert request.system.startswith("You grade the answer of an AI agent against a rubric.")
    assert request.system.endswith(
        "Rubric:\nThe answer must not promise anything the agent cannot do."
    )
    assert request.output_schema == {
        "type": "object",
        "properties": {"passed": {"type": "boolean"}, "score": {"type": "number"},
                       "reason": {"type": "string"}},
        "required": ["passed", "score", "reason"],
    }
    assert request.messages[-1].content == (
        "Task given to the agent:\nrefund me\n\nReference answer:\nan apology\n\n"
        "Tool calls the agent made:\n[]\n\nThe agent's answer:\nRefund on its way!"
    )


async def test_a_judge_that_never_gives_a_verdict_is_an_evaluator_error(
    one_case: OneCase,
) -> None:
    judge = LLMJudge("Be kind.", model=FakeLLM.script([Turn("Looks fine."), Turn("Yes.")]),
                     include_input=False)
    result = await one_case(Case("hi"), [judge], script=[Turn("Hello!")])
    score = result.scores["LLMJudge"]
    assert (score.passed, score.value) == (False, None)
    assert score.error is not None and score.error.startswith("OutputCoercionError: ")


def test_a_judge_on_a_model_spec_uses_that_provider_and_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agentkit.providers.openai_responses import OpenAIResponsesLLM

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    judge = LLMJudge("Be kind.", model="openai:gpt-4o-mini")
    assert (type(judge.llm), judge.model_id) == (OpenAIResponsesLLM, "gpt-4o-mini")


async def test_a_passing_verdict_passes(one_case: OneCase) -> None:
    judge = LLMJudge("Be kind.", model=FakeLLM(verdict(True, 0.9, "Kind and accurate.")))
    result = await one_case(Case("hi"), [judge], script=[Turn("Hello, friend!")])
    assert result.scores["LLMJudge"] == Score(0.9, True, "Kind and accurate.")
    assert result.passed
