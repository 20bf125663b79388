"""Evaluators of the answer: Equals, Contains, Matches, IsInstance, MatchesSchema."""

from __future__ import annotations

from dataclasses import dataclass

from agentkit.agents import Agent
from agentkit.core.testing import Turn
from agentkit.evals import Case, Contains, Equals, IsInstance, Matches, MatchesSchema, Score

from .conftest import OneCase


async def test_equals_compares_with_the_expected_answer_or_its_own_value(one_case: OneCase) -> None:
    result = await one_case(
        Case("capital of France?", expected="Paris"), [Equals(), Equals("Lyon")],
        script=[Turn("Paris")],
    )
    assert result.scores == {
        "Equals": Score(1.0, True, ""),
        "Equals#2": Score(0.0, False, "expected 'Lyon', got 'Paris'"),
    }
    assert result.passed is False


async def test_equals_without_expected_is_an_evaluator_error_never_a_pass(
    one_case: OneCase,
) -> None:
    result = await one_case(Case("hi"), [Equals()], script=[Turn("hello")])
    assert result.scores["Equals"] == Score(
        None, False, "", "ValueError: Equals() with no value compares with Case.expected, and "
        "case 'case-1' has none; give the case expected= or the evaluator a value",
    )
    assert result.passed is False
    assert result.reasons() == [
        "Equals: evaluator error: ValueError: Equals() with no value compares with "
        "Case.expected, and case 'case-1' has none; give the case expected= or the evaluator "
        "a value",
    ]


async def test_contains_finds_a_substring_optionally_ignoring_case(one_case: OneCase) -> None:
    result = await one_case(
        Case("refund?", expected="refunded"),
        [Contains(), Contains("REFUNDED", case_sensitive=False), Contains("declined")],
        script=[Turn("I refunded $20.")],
    )
    assert [(n, s.passed, s.reason) for n, s in result.scores.items()] == [
        ("Contains", True, ""),
        ("Contains#2", True, ""),
        ("Contains#3", False, "'declined' not found in 'I refunded $20.'"),
    ]


async def test_matches_searches_the_text_answer(one_case: OneCase) -> None:
    result = await one_case(
        Case("order?"), [Matches(r"A-\d{4}"), Matches(r"^B-")], script=[Turn("Order A-1042.")]
    )
    assert [(s.passed, s.reason) for s in result.scores.values()] == [
        (True, ""), (False, "'^B-' does not match 'Order A-1042.'"),
    ]


@dataclass
class Verdict:
    approved: bool
    reason: str


async def test_isinstance_and_matches_schema_check_a_structured_answer(one_case: OneCase) -> None:
    agent = Agent("judge", "fake", "Judge.", output=Verdict)
    schema = {"type": "object", "properties": {"approved": {"const": True}},
              "required": ["approved", "reason"]}
    result = await one_case(
        Case("approve?"), [IsInstance(Verdict), IsInstance(str), MatchesSchema(schema)],
        agent=agent, script=[Turn('{"approved": false, "reason": "over limit"}')],
    )
    assert result.output == Verdict(approved=False, reason="over limit")
    assert [(n, s.passed, s.reason) for n, s in result.scores.items()] == [
        ("IsInstance", True, ""),
        ("IsInstance#2", False,
         "expected str, got Verdict Verdict(approved=False, reason='over limit')"),
        ("MatchesSchema", False, "$.approved: expected True, got False"),
    ]
