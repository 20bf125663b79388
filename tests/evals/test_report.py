"""Reports: print, JSON round-trip, JUnit XML, and compare against a baseline."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import pytest

from agentkit.agents import Agent
from agentkit.core.contracts.types import ToolCall, Usage
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.evals import Case, CaseResult, Change, Contains, Dataset, EvalReport, Score


def result(case_id: str, passed: bool, repeat: int = 0, **fields: object) -> CaseResult:
    score = Score.check(passed, "" if passed else "'x' not found in 'y'")
    defaults: dict[str, object] = dict(
        case_id=case_id, repeat=repeat, output="y", trajectory=(), scores={"Contains": score},
        usage=Usage(), cost_usd=0.0, latency_s=0.5, run_id=f"eval-t-{case_id}-{repeat + 1}",
        passed=passed,
    )
    defaults.update(fields)
    return CaseResult(**defaults)  # type: ignore[arg-type]


def report(*results: CaseResult, **fields: object) -> EvalReport:
    return EvalReport(name="support", eval_id="support-0", results=results,
                      evaluators=("Contains",), **fields)  # type: ignore[arg-type]


def test_compare_finds_a_seeded_regression_and_an_improvement() -> None:
    baseline = report(result("refund", True), result("refund", True, 1),
                      result("greet", False), result("greet", False, 1),
                      result("lookup", True), result("lookup", False, 1))
    now = report(result("refund", True), result("refund", False, 1),  # seeded regression
                 result("greet", True), result("greet", True, 1),
                 result("lookup", True), result("lookup", False, 1), result("new", True))
    comparison = now.compare(baseline)
    assert comparison.regressions == (Change("refund", None, 1.0, 0.5),)
    assert comparison.improvements == (
        Change("greet", None, 0.0, 1.0), Change(None, "Contains", 0.5, 5 / 7),
    )
    assert comparison.new_cases == ("new",)
    assert str(comparison.regressions[0]) == "case 'refund': pass rate 100% -> 50%"


def test_compare_flags_an_evaluator_pass_rate_that_dropped_past_the_threshold() -> None:
    cases = [f"c{n}" for n in range(10)]
    baseline = report(*(result(c, n < 8) for n, c in enumerate(cases)))  # 80%
    slightly = report(*(result(c, n < 8 or c == "c9") for n, c in enumerate(cases)))
    worse = report(*(result(c, n < 6) for n, c in enumerate(cases)))  # 60%
    assert worse.compare(baseline).regressions == (
        Change("c6", None, 1.0, 0.0), Change("c7", None, 1.0, 0.0),
        Change(None, "Contains", 0.8, 0.6),
    )
    assert slightly.compare(baseline).regressions == ()
    assert worse.compare(baseline, threshold=0.25).regressions[-1:] == (
        Change("c7", None, 1.0, 0.0),
    )


def test_json_round_trip(tmp_path: Path) -> None:
    original = report(
        result("refund", True, output={"refunded": 20.0},
               trajectory=(ToolCall("c1", "refund", {"order_id": "A-1"}),),
               usage=Usage(input_tokens=10, output_tokens=5, cost_usd=0.002, requests=1,
                           unpriced_models=("m",)),
               cost_usd=0.002, judge_cost_usd=0.01),
        result("greet", False, stop_reason="timeout", error="timed out after 1s", scores={}),
        stopped="the eval's budget ran out", unfinished=("late#1",),
        metadata={"agent": "support", "model": "fake"},
    )
    path = tmp_path / "report.json"
    original.to_json(path)
    assert EvalReport.from_json(path) == original


def test_a_file_that_is_not_a_report_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text('{"name": "x"}')
    with pytest.raises(ValueError) as exc:
        EvalReport.from_json(path)
    assert str(exc.value) == (
        f"{path}: not an agentkit eval report (format 1); write one with "
        "report.to_json(path) or agentkit eval --json"
    )


def test_junit_xml_parses_with_the_standard_library(tmp_path: Path) -> None:
    broken = result("judge", False, scores={"LLMJudge": Score(None, False, error="KeyError: 'x'")})
    path = tmp_path / "junit.xml"
    report(result("refund", True), result("greet", False), broken,
           stopped="the eval's budget ran out", unfinished=("late#1",)).to_junit(path)
    root = ET.parse(path).getroot()
    suite = root.find("testsuite")
    assert suite is not None
    assert {k: suite.get(k) for k in ("name", "tests", "failures", "errors", "skipped")} == {
        "name": "support", "tests": "4", "failures": "1", "errors": "1", "skipped": "1",
    }
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert list(cases) == ["refund#1", "greet#1", "judge#1", "late#1"]
    assert cases["refund#1"].find("failure") is None
    failure = cases["greet#1"].find("failure")
    assert failure is not None and failure.get("message") == "Contains: 'x' not found in 'y'"
    error = cases["judge#1"].find("error")
    assert error is not None and error.text == "LLMJudge: evaluator error: KeyError: 'x'"
    skipped = cases["late#1"].find("skipped")
    assert skipped is not None and skipped.get("message") == "the eval's budget ran out"


async def test_print_shows_a_row_per_run_the_aggregates_and_the_failures() -> None:
    llm = FakeLLM.script([Turn("Refunded."), Turn("Hello.")])
    dataset = Dataset([Case("refund", id="refund", expected="Refunded"),
                       Case("greet", id="greet", expected="Hi")],
                      evaluators=[Contains()], name="support")
    found = await dataset.evaluate(Agent("a", "fake", "p"), lambda: make_test_ctx(llm=llm),
                                   max_concurrency=1, progress=False)
    out = io.StringIO()
    found.print(out, timings=False)
    assert out.getvalue().splitlines() == [
        "eval 'support': 2 case(s) x 1 repeat(s)",
        "",
        "case    run  result  Contains  cost",
        "refund  1    pass    pass      $0.0000",
        "greet   1    FAIL    FAIL      $0.0000",
        "",
        "evaluator  pass rate  mean  stdev",
        "Contains   50%        0.50  0.71",
        "",
        "passed 1 of 2 (50%); agent cost $0.0000, judge cost $0.0000",
        "failures:",
        "  greet#1: Contains: 'Hi' not found in 'Hello.'",
    ]
    assert replace(found, stopped="x").passed is False
