"""Sums over the run registry: what some runs used and cost, in total, per agent, per day
and by status, without reading their records one by one.

A store that can (``summarize_runs``, a
:class:`~agentkit.core.stores.run_totals.RunSummarizer`) answers with one aggregate
query over columns kept beside each record; any other store is summed by paging its
listing (:func:`agentkit.core.stores.run_totals.summarize_runs`). Both give the same
:class:`RunSummary`, built here from ``(agent, status, day, sums)`` groups, so the
stores differ only in where the groups are summed.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.runs import RunFilter, RunRecord
from agentkit.core.contracts.types import NO_USAGE, Usage

__all__ = [
    "DAY_SECONDS",
    "RunFilter",
    "RunSummary",
    "RunTotals",
    "day_of",
    "summary_of",
    "summary_of_records",
]

DAY_SECONDS = 86400
"""A UTC day, in seconds since the epoch (which counts no leap seconds)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunTotals:
    """What some runs used, summed: how many runs, and their usage."""

    runs: int = 0
    """How many runs."""
    usage: Usage = NO_USAGE
    """Their tokens and requests, and their cost in US dollars: each run's record's
    ``cost_usd``, a run whose models were unpriced adding nothing. The registry keeps a
    run's cost, not which of its models were unpriced, so ``unpriced_models`` is empty."""

    def __add__(self, other: RunTotals) -> RunTotals:
        return RunTotals(runs=self.runs + other.runs, usage=self.usage + other.usage)

    @property
    def cache_share(self) -> float | None:
        """Cache reads over all input tokens (full-rate, cache reads and cache writes);
        None without input tokens."""
        usage = self.usage
        prompt = usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens
        return None if prompt == 0 else usage.cache_read_tokens / prompt

    @classmethod
    def of(cls, record: RunRecord) -> RunTotals:
        """One run's figures."""
        usage = record.usage
        # The record's cost, not its usage's: it is the figure the databases keep in a
        # column (NULL when the record has none), so every store sums the same.
        return cls(runs=1, usage=Usage(
            input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens, cost_usd=record.cost_usd or 0.0,
            requests=usage.requests, reasoning_tokens=usage.reasoning_tokens,
        ))


@dataclass(frozen=True, slots=True, kw_only=True)
class RunSummary:
    """The sums of the runs a :class:`~agentkit.core.contracts.runs.RunFilter` matches."""

    total: RunTotals = field(default_factory=RunTotals)
    """Every matching run."""
    by_status: FrozenDict[str, int] = field(default_factory=FrozenDict)
    """How many runs stand at each status."""
    by_agent: FrozenDict[str, RunTotals] = field(default_factory=FrozenDict)
    """Per agent, by name."""
    by_day: FrozenDict[str, RunTotals] = field(default_factory=FrozenDict)
    """Per UTC day the runs were created, as ``"2026-12-01"``."""


def day_of(created: float) -> int:
    """The UTC day number (days since the epoch) of a ``created`` time."""
    return int(created // DAY_SECONDS)


def summary_of(groups: Iterable[tuple[str, str, int, RunTotals]]) -> RunSummary:
    """The summary of ``(agent, status, day number, totals)`` groups, in any order and
    with any group given more than once."""
    total = RunTotals()
    statuses: dict[str, int] = {}
    agents: dict[str, RunTotals] = {}
    days: dict[int, RunTotals] = {}
    for agent, status, day, totals in groups:
        total += totals
        statuses[status] = statuses.get(status, 0) + totals.runs
        agents[agent] = agents.get(agent, RunTotals()) + totals
        days[day] = days.get(day, RunTotals()) + totals
    return RunSummary(
        total=total,
        by_status=FrozenDict(sorted(statuses.items())),
        by_agent=FrozenDict(sorted(agents.items())),
        by_day=FrozenDict(
            (time.strftime("%Y-%m-%d", time.gmtime(day * DAY_SECONDS)), totals)
            for day, totals in sorted(days.items())
        ),
    )


def summary_of_records(records: Iterable[RunRecord]) -> RunSummary:
    """The summary of ``records`` (each one group of one run)."""
    return summary_of(
        (record.agent, record.status, day_of(record.created), RunTotals.of(record))
        for record in records
    )
