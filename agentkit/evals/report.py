"""What an eval found: one CaseResult per case and repeat, aggregates, and comparisons."""

from __future__ import annotations

import statistics
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from agentkit.core.contracts.frozen import FrozenDict
from agentkit.evals.report_files import read_json, write_json, write_junit
from agentkit.evals.report_table import render
from agentkit.evals.results import Aggregate, CaseResult, Change, Comparison
from agentkit.evals.scores import Score

__all__ = ["EvalReport"]

DEFAULT_THRESHOLD = 0.1
"""A pass rate that drops by more than this is a regression."""


def _rate(results: Sequence[CaseResult]) -> float:
    return sum(r.passed for r in results) / len(results) if results else 0.0


@dataclass(frozen=True, slots=True)
class EvalReport:
    """Every result of an eval. ``passed`` is True when every result passed and the eval
    ran to the end."""

    name: str
    """The dataset's name."""
    eval_id: str
    """This eval's id; every run id of the eval starts with ``eval-<eval_id>``."""
    results: tuple[CaseResult, ...]
    """One per case and repeat, in dataset order, repeats together."""
    evaluators: tuple[str, ...] = ()
    """The evaluators' names, in order."""
    repeat: int = 1
    """Runs per case."""
    stopped: str | None = None
    """Why the eval stopped early (the budget ran out), or None when it ran to the end."""
    unfinished: tuple[str, ...] = ()
    """``case_id#repeat`` of the runs not scored because the eval stopped early."""
    metadata: Mapping[str, Any] = field(default_factory=FrozenDict)
    """The agent's name, the model, when the eval started."""

    @property
    def passed(self) -> bool:
        """Every result passed, and the eval was not stopped early."""
        return self.stopped is None and all(r.passed for r in self.results)

    @property
    def pass_rate(self) -> float:
        """Passing results / results."""
        return _rate(self.results)

    @property
    def cost_usd(self) -> float:
        """The agent's cost over every run."""
        return sum(r.cost_usd for r in self.results)

    @property
    def judge_cost_usd(self) -> float:
        """What the evaluators spent (LLMJudge), apart from the agent."""
        return sum(r.judge_cost_usd for r in self.results)

    @property
    def aggregates(self) -> Mapping[str, Aggregate]:
        """Per evaluator name: pass rate, mean and standard deviation over every run."""
        by_name: dict[str, list[Score]] = {}
        for result in self.results:
            for name, score in result.scores.items():
                by_name.setdefault(name, []).append(score)
        found: dict[str, Aggregate] = {}
        for name, scores in by_name.items():
            values = [s.value for s in scores if s.value is not None]
            found[name] = Aggregate(
                pass_rate=sum(s.passed for s in scores) / len(scores),
                mean=statistics.fmean(values) if values else 0.0,
                stdev=statistics.stdev(values) if len(values) > 1 else 0.0,
                count=len(scores),
            )
        return FrozenDict(found)

    def case_pass_rates(self) -> Mapping[str, float]:
        """Per case id, the share of its repeats that passed."""
        by_case: dict[str, list[CaseResult]] = {}
        for result in self.results:
            by_case.setdefault(result.case_id, []).append(result)
        return {case: _rate(results) for case, results in by_case.items()}

    def failures(self) -> tuple[CaseResult, ...]:
        """The results that did not pass."""
        return tuple(r for r in self.results if not r.passed)

    def compare(self, baseline: EvalReport, *, threshold: float = DEFAULT_THRESHOLD) -> Comparison:
        """Case by case against ``baseline``: a regression is a case that passed every
        repeat there and fails now, or a pass rate (of a case, or of an evaluator) that
        dropped by more than ``threshold``; an improvement is the reverse."""
        regressions: list[Change] = []
        improvements: list[Change] = []

        def weigh(case: str | None, evaluator: str | None, before: float, after: float) -> None:
            change = Change(case, evaluator, before, after)
            if after < before and (before == 1.0 or before - after > threshold):
                regressions.append(change)
            elif after > before and (after == 1.0 or after - before > threshold):
                improvements.append(change)

        old = baseline.case_pass_rates()
        now = self.case_pass_rates()
        for case, after in now.items():
            if case in old:
                weigh(case, None, old[case], after)
        old_aggregates = baseline.aggregates
        for name, aggregate in self.aggregates.items():
            if name in old_aggregates:
                weigh(None, name, old_aggregates[name].pass_rate, aggregate.pass_rate)
        return Comparison(
            tuple(regressions), tuple(improvements), tuple(c for c in now if c not in old)
        )

    def print(self, file: TextIO | None = None, *, timings: bool = True) -> None:
        """A table of every result, then the aggregates, on ``file`` (stdout).
        ``timings=False`` leaves out latencies (for output that must not vary)."""
        text = render(self.name, self.results, self.aggregates, repeat=self.repeat,
                      stopped=self.stopped, unfinished=self.unfinished, timings=timings)
        print(text, file=file or sys.stdout)

    def to_json(self, path: str | Path) -> None:
        """Write the report as JSON (outputs that are not JSON data are kept as their
        ``repr``); :meth:`from_json` reads it back."""
        header = {
            "name": self.name, "eval_id": self.eval_id, "evaluators": list(self.evaluators),
            "repeat": self.repeat, "stopped": self.stopped, "unfinished": list(self.unfinished),
            "metadata": dict(self.metadata),
        }
        write_json(header, self.results, Path(path))

    @classmethod
    def from_json(cls, path: str | Path) -> EvalReport:
        """A report :meth:`to_json` wrote."""
        return cls(**read_json(Path(path)))

    def to_junit(self, path: str | Path) -> None:
        """Write JUnit XML for CI: one test case per case and repeat."""
        write_junit(self.name, self.results, self.unfinished, self.stopped, Path(path))
