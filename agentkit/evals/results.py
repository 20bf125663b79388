"""The values an eval report is made of: CaseResult, Aggregate, Change, Comparison."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentkit.core.contracts.types import ToolCall, Usage
from agentkit.evals.scores import Score

__all__ = ["Aggregate", "CaseResult", "Change", "Comparison"]


@dataclass(frozen=True, slots=True)
class CaseResult:
    """One run of one case (all its turns), and how each evaluator scored it."""

    case_id: str
    """The case's id."""
    repeat: int
    """Which repeat this was, from 0."""
    output: Any
    """The agent's answer (the last turn's for a multi-turn case); None if it did not
    complete."""
    trajectory: tuple[ToolCall, ...]
    """Every tool call the model asked for, over all turns, in order."""
    scores: Mapping[str, Score]
    """Each evaluator's score, by name (``turn2:Contains`` per turn of a multi-turn case)."""
    usage: Usage
    """The agent's tokens and cost (the judge's cost is in ``judge_cost_usd``)."""
    cost_usd: float
    """The agent's cost in US dollars."""
    latency_s: float
    """Wall-clock seconds the case took."""
    run_id: str
    """The run's id (a multi-turn case's turns are ``<run_id>.t1``, ``.t2``, ...)."""
    passed: bool
    """No error, the run completed or suspended, and every score passed."""
    stop_reason: str = "complete"
    """The run's stop reason, ``timeout`` or ``crashed``."""
    error: str | None = None
    """Why the run failed before it could be scored (a timeout, an exception)."""
    judge_cost_usd: float = field(default=0.0, kw_only=True)
    """What the evaluators themselves spent (LLMJudge calls)."""

    def reasons(self) -> list[str]:
        """Why this result failed: the run's error and each failing score's reason."""
        found = [] if self.error is None else [self.error]
        for name, score in self.scores.items():
            if score.error is not None:
                found.append(f"{name}: evaluator error: {score.error}")
            elif not score.passed:
                found.append(f"{name}: {score.reason or 'failed'}")
        return found


@dataclass(frozen=True, slots=True)
class Aggregate:
    """One evaluator's scores over every run."""

    pass_rate: float
    """Passed scores / scores, from 0.0 to 1.0 (an evaluator error is a fail)."""
    mean: float
    """The mean value, over scores that have one."""
    stdev: float
    """The sample standard deviation of the values (0.0 with fewer than two)."""
    count: int
    """Scores counted."""


@dataclass(frozen=True, slots=True)
class Change:
    """A case (or an evaluator, when ``evaluator`` is set) that got worse or better."""

    case_id: str | None
    """The case; None for an evaluator's pass rate over the whole eval."""
    evaluator: str | None
    """The evaluator, for an evaluator-level change."""
    before: float
    """Pass rate in the baseline."""
    after: float
    """Pass rate now."""

    def __str__(self) -> str:
        what = f"case {self.case_id!r}" if self.case_id is not None else (
            f"evaluator {self.evaluator!r}"
        )
        return f"{what}: pass rate {self.before:.0%} -> {self.after:.0%}"


@dataclass(frozen=True, slots=True)
class Comparison:
    """How a report differs from a baseline report."""

    regressions: tuple[Change, ...]
    """Cases that passed in the baseline and fail now, and pass rates that dropped by
    more than the threshold."""
    improvements: tuple[Change, ...]
    """The same, the other way round."""
    new_cases: tuple[str, ...] = ()
    """Cases with no baseline to compare with."""
