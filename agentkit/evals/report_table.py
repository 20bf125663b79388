"""The terminal table ``EvalReport.print()`` shows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agentkit.evals.results import Aggregate, CaseResult
from agentkit.evals.scores import Score

__all__ = ["render"]


def _mark(score: Score | None) -> str:
    if score is None:
        return "-"
    if score.error is not None:
        return "ERROR"
    return "pass" if score.passed else "FAIL"


def _status(result: CaseResult) -> str:
    if result.passed:
        return "pass"
    return {"timeout": "TIMEOUT", "crashed": "CRASHED"}.get(result.stop_reason, "FAIL")


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
            for row in rows]


def render(
    name: str,
    results: Sequence[CaseResult],
    aggregates: Mapping[str, Aggregate],
    *,
    repeat: int,
    stopped: str | None,
    unfinished: Sequence[str],
    timings: bool = True,
) -> str:
    """A report as text: a row per result, a row per evaluator, the totals, and why
    each failure failed."""
    names = list(dict.fromkeys(n for r in results for n in r.scores))
    head = ["case", "run", "result", *names, "cost"] + (["latency"] if timings else [])
    rows = [head]
    for result in results:
        row = [result.case_id, str(result.repeat + 1), _status(result),
               *(_mark(result.scores.get(n)) for n in names), f"${result.cost_usd:.4f}"]
        rows.append(row + ([f"{result.latency_s:.2f}s"] if timings else []))
    cases = len({r.case_id for r in results})
    lines = [f"eval {name!r}: {cases} case(s) x {repeat} repeat(s)", ""]
    lines += _table(rows)
    if aggregates:
        lines.append("")
        lines += _table([["evaluator", "pass rate", "mean", "stdev"]] + [
            [evaluator, f"{a.pass_rate:.0%}", f"{a.mean:.2f}", f"{a.stdev:.2f}"]
            for evaluator, a in aggregates.items()
        ])
    passed = sum(r.passed for r in results)
    rate = passed / len(results) if results else 0.0
    cost = sum(r.cost_usd for r in results)
    judged = sum(r.judge_cost_usd for r in results)
    lines += ["", f"passed {passed} of {len(results)} ({rate:.0%}); "
                  f"agent cost ${cost:.4f}, judge cost ${judged:.4f}"]
    if stopped is not None:
        lines.append(f"stopped early: {stopped}; not run: {', '.join(unfinished)}")
    failures = [r for r in results if not r.passed]
    if failures:
        lines.append("failures:")
        for result in failures:
            for reason in result.reasons() or [f"stopped with {result.stop_reason!r}"]:
                lines.append(f"  {result.case_id}#{result.repeat + 1}: {reason}")
    return "\n".join(lines)
