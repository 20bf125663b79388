"""What some runs used, summed: a count of runs and one :class:`Usage` (tokens and the
records' cost), added with ``Usage``'s own addition."""

from __future__ import annotations

import dataclasses
from typing import Any

from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.run_totals import RunSummary, RunTotals, summary_of_records
from agentkit.core.contracts.runs import RunRecord
from agentkit.core.contracts.types import Usage

DEC_1 = 1_764_547_200.0  # 2025-12-01 00:00 UTC


def record(run_id: str, cost: float | None, usage: Usage, **fields: Any) -> RunRecord:
    values: dict[str, Any] = {"agent": "support", "status": "complete", "scope": "o:d",
                              "created": DEC_1, "updated": DEC_1, **fields}
    return RunRecord(run_id=run_id, cost_usd=cost, usage=usage, **values)


def test_the_totals_are_a_count_of_runs_and_a_usage() -> None:
    assert [f.name for f in dataclasses.fields(RunTotals)] == ["runs", "usage"]
    assert RunTotals() == RunTotals(runs=0, usage=Usage())
    assert isinstance(RunTotals().usage, Usage)


def test_one_run_counts_its_tokens_and_the_cost_of_its_record() -> None:
    usage = Usage(input_tokens=10, output_tokens=5, cache_read_tokens=30, cache_write_tokens=2,
                  reasoning_tokens=1, requests=3, cost_usd=9.0)
    assert RunTotals.of(record("a", 0.25, usage)) == RunTotals(runs=1, usage=Usage(
        input_tokens=10, output_tokens=5, cache_read_tokens=30, cache_write_tokens=2,
        reasoning_tokens=1, requests=3, cost_usd=0.25))


def test_an_unpriced_run_adds_its_tokens_and_no_cost_and_names_no_model() -> None:
    """The registry keeps a run's cost (None when unpriced), not which models were
    unpriced, so the totals name none, on every store alike."""
    usage = Usage(input_tokens=7, requests=1, unpriced_models=("mystery-1",))
    assert RunTotals.of(record("a", None, usage)) == RunTotals(
        runs=1, usage=Usage(input_tokens=7, requests=1))


def test_totals_add_runs_and_usage() -> None:
    one = RunTotals(runs=1, usage=Usage(input_tokens=3, cache_read_tokens=1, cost_usd=0.5))
    two = RunTotals(runs=2, usage=Usage(output_tokens=4, cache_write_tokens=2, cost_usd=0.25,
                                        requests=2, reasoning_tokens=1))
    assert one + two == RunTotals(runs=3, usage=Usage(
        input_tokens=3, output_tokens=4, cache_read_tokens=1, cache_write_tokens=2,
        cost_usd=0.75, requests=2, reasoning_tokens=1))
    assert one + RunTotals() == one
    assert (one + two).cache_share == 1 / 6


def test_the_cache_share_is_none_without_input_tokens() -> None:
    assert RunTotals().cache_share is None
    assert RunTotals(runs=1, usage=Usage(output_tokens=9)).cache_share is None
    assert RunTotals(runs=1, usage=Usage(cache_read_tokens=3, input_tokens=1)).cache_share == 0.75


def test_a_summary_of_records_sums_their_totals_per_agent_and_day() -> None:
    a = record("a", 0.5, Usage(input_tokens=2))
    b = record("b", None, Usage(input_tokens=1, unpriced_models=("m",)), agent="billing",
               created=DEC_1 + 86400, status="error")
    assert summary_of_records([a, b]) == RunSummary(
        total=RunTotals(runs=2, usage=Usage(input_tokens=3, cost_usd=0.5)),
        by_status=FrozenDict({"complete": 1, "error": 1}),
        by_agent=FrozenDict({"billing": RunTotals.of(b), "support": RunTotals.of(a)}),
        by_day=FrozenDict({"2025-12-01": RunTotals.of(a), "2025-12-02": RunTotals.of(b)}),
    )
