"""Run summaries (``summarize_runs``), run against every store agentkit ships, and the
paging fallback every other store gets; and the upgrade of registries written before
summaries existed, whose records keep their figures."""

from __future__ import annotations

import dataclasses
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.run_totals import RunSummary, RunTotals
from agentkit.core.contracts.runs import RunFilter, RunPage, RunQuery, RunRecord
from agentkit.core.contracts.types import Usage
from agentkit.core.stores.run_totals import summarize_runs
from agentkit.state.codec import dumps
from agentkit.state.stores import InMemoryStore
from agentkit.state.stores.postgres import MIGRATIONS, PostgresStore
from agentkit.state.stores.sqlite import SQLiteStore
from tests.state.stores.test_store_contract import KINDS, close_store, open_store


@pytest.fixture(params=KINDS)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    opened = await open_store(request.param, request, tmp_path)
    yield opened
    await close_store(opened)


DAY = 86400.0
DEC_1 = 1_764_547_200.0  # 2025-12-01 00:00 UTC


def record(run_id: str, created: float, *, tokens: int = 0, cost: float | None = None,
           **fields: Any) -> RunRecord:
    values: dict[str, Any] = {
        "agent": "support", "status": "complete", "scope": "org1:dom1", **fields,
    }
    usage = Usage(input_tokens=tokens, output_tokens=tokens // 2, cache_read_tokens=tokens * 2,
                  cache_write_tokens=1 if tokens else 0, reasoning_tokens=tokens // 4,
                  requests=2 if tokens else 0)
    return RunRecord(run_id=run_id, created=created, updated=created, usage=usage,
                     cost_usd=cost, **values)


def totals(runs: int, tokens: int, cost: float, *, priced_writes: int | None = None,
           requests: int | None = None) -> RunTotals:
    """The totals of ``runs`` runs made by :func:`record` with ``tokens`` tokens in all."""
    return RunTotals(runs=runs, usage=Usage(
        cost_usd=cost, input_tokens=tokens, output_tokens=tokens // 2,
        cache_read_tokens=tokens * 2,
        cache_write_tokens=runs if priced_writes is None else priced_writes,
        reasoning_tokens=tokens // 4, requests=2 * runs if requests is None else requests,
    ))


ROWS = [
    record("a", DEC_1 + 10, tokens=100, cost=0.25, session="s1"),
    record("b", DEC_1 + DAY - 0.5, tokens=40, cost=0.5, agent="billing", status="suspended"),
    record("c", DEC_1 + DAY, tokens=8, agent="billing", scope="org2:dom1", session="s1"),
    record("d", DEC_1 + DAY + 5, tokens=20, cost=1.0, status="error", scope="org2:dom1"),
    record("e", DEC_1 + 2 * DAY + 1, status="running", session="s2"),
]


async def test_a_summary_sums_usage_and_cost_in_total_per_agent_per_day_and_by_status(
    store: Any,
) -> None:
    for row in ROWS:
        await store.put_run(row)
    summary = await store.summarize_runs(RunFilter())
    assert summary == RunSummary(
        total=totals(5, 168, 1.75, priced_writes=4, requests=8),
        by_status=FrozenDict({"complete": 2, "error": 1, "running": 1, "suspended": 1}),
        by_agent=FrozenDict({
            "billing": totals(2, 48, 0.5),
            "support": totals(3, 120, 1.25, priced_writes=2, requests=4),
        }),
        by_day=FrozenDict({
            "2025-12-01": totals(2, 140, 0.75),
            "2025-12-02": totals(2, 28, 1.0),
            "2025-12-03": RunTotals(runs=1),
        }),
    )
    assert summary.total.cache_share == 336 / (168 + 336 + 4)
    assert type(summary.total.usage) is Usage
    assert summary.total.usage.unpriced_models == ()
    assert list(summary.by_agent) == ["billing", "support"]
    assert await store.summarize_runs(RunFilter()) == await summarize_runs(store, RunFilter())


async def test_a_summary_is_filtered_by_agent_status_session_and_scope(store: Any) -> None:
    for row in ROWS:
        await store.put_run(row)

    async def runs(**filters: Any) -> tuple[int, float, int]:
        total = (await store.summarize_runs(RunFilter(**filters))).total
        return total.runs, total.usage.cost_usd, total.usage.input_tokens

    assert await runs(agent="billing") == (2, 0.5, 48)
    assert await runs(status="complete") == (2, 0.25, 108)
    assert await runs(session="s1") == (2, 0.25, 108)
    assert await runs(scopes=("org2:dom1",)) == (2, 1.0, 28)
    assert await runs(scopes=("org1:dom1", "org2:dom1")) == (5, 1.75, 168)
    assert await runs(agent="support", scopes=("org2:dom1",)) == (1, 1.0, 20)
    assert await store.summarize_runs(RunFilter(scopes=())) == RunSummary()
    assert await store.summarize_runs(RunQuery(agent="billing", limit=1)) == (
        await store.summarize_runs(RunFilter(agent="billing")))
    assert await store.summarize_runs(RunFilter(agent="nobody")) == RunSummary()


async def test_a_rewritten_run_is_summed_once_with_its_latest_figures_on_its_first_day(
    store: Any,
) -> None:
    await store.put_run(record("r1", DEC_1, status="running"))
    await store.set_versioned_with_run(
        "checkpoint:r1", {"step": 1}, expected_version=0,
        record=record("r1", DEC_1 + DAY, tokens=12, cost=0.125, status="complete"),
    )
    unpriced = record("r2", DEC_1 + 5, tokens=4, cost=None, agent="a\x00b")
    await store.put_run(dataclasses.replace(
        unpriced, usage=dataclasses.replace(unpriced.usage, unpriced_models=("mystery-1",))))
    summary = await store.summarize_runs(RunFilter())
    assert summary.total == totals(2, 16, 0.125)
    assert summary.by_day == FrozenDict({"2025-12-01": totals(2, 16, 0.125)})
    assert summary.by_status == FrozenDict({"complete": 2})
    assert list(summary.by_agent) == ["a\x00b", "support"]


def test_scopes_of_a_summary_given_as_one_string_are_refused() -> None:
    with pytest.raises(TypeError) as info:
        RunFilter(scopes="org1:dom1")  # type: ignore[arg-type]
    assert str(info.value) == (
        "RunFilter(scopes=...) is a tuple of scope keys or None, got the string "
        "'org1:dom1': write scopes=('org1:dom1',)"
    )


class ListingOnly:
    """A user's store with the registry's listing but no ``summarize_runs``."""

    def __init__(self) -> None:
        self.inner = InMemoryStore()
        self.pages = 0

    async def put_run(self, run: RunRecord) -> None:
        await self.inner.put_run(run)

    async def list_runs(self, query: RunQuery) -> RunPage:
        self.pages += 1
        return await self.inner.list_runs(query)


async def test_a_store_without_summaries_is_summed_from_its_listing_a_page_at_a_time() -> None:
    listing = ListingOnly()
    for n in range(2500):
        await listing.put_run(record(f"r{n:04d}", DEC_1 + n, tokens=4, cost=0.25,
                                     scope="org1:dom1" if n % 5 else "org2:dom1"))
    paged = await summarize_runs(listing, RunFilter(scopes=("org1:dom1",)))  # type: ignore[arg-type]
    assert listing.pages == 2
    assert paged == await listing.inner.summarize_runs(RunFilter(scopes=("org1:dom1",)))
    assert paged.total == totals(2000, 8000, 500.0)


# -- registries written before summaries ---------------------------------------------------

_OLD_SQLITE_RUNS = """
CREATE TABLE runs (run_id TEXT PRIMARY KEY, agent TEXT NOT NULL, status TEXT NOT NULL,
                   session TEXT, scope TEXT NOT NULL, created REAL NOT NULL,
                   updated REAL NOT NULL, value TEXT NOT NULL);
"""


def _old_row(run: RunRecord) -> tuple[Any, ...]:
    return (run.run_id, run.agent, run.status, run.session, run.scope, run.created,
            run.updated, dumps(run))


OLD = [
    record("a", DEC_1, tokens=100, cost=0.25, output="text with \x00 in it"),
    record("b", DEC_1 + DAY, tokens=8, agent="billing", output=float("nan")),
    record("c", DEC_1 + 1, cost=float("nan")),
]


async def test_a_sqlite_file_from_before_summaries_is_upgraded_keeping_its_figures(
    tmp_path: Path,
) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(_OLD_SQLITE_RUNS)
        conn.executemany("INSERT INTO runs VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                         [_old_row(run) for run in OLD])
        conn.execute("INSERT INTO runs VALUES ('bad', 'x', 'complete', NULL, 's', 1, 1, '{')")
    async with SQLiteStore(path) as upgraded:
        summary = await upgraded.summarize_runs(RunFilter(scopes=("org1:dom1",)))
        assert await upgraded.get_run("a") == OLD[0]
    assert summary.total == totals(3, 108, 0.25, priced_writes=2, requests=4)
    assert summary.by_agent["billing"] == totals(1, 8, 0.0)
    with sqlite3.connect(path) as conn:
        plan = conn.execute(
            "EXPLAIN QUERY PLAN SELECT agent, status, sum(cost_usd) FROM runs "
            "WHERE scope = 'org1:dom1' GROUP BY agent, status").fetchall()
    assert "USING COVERING INDEX runs_totals" in " ".join(str(step[-1]) for step in plan)


async def test_a_postgres_registry_from_before_summaries_is_migrated_keeping_its_figures(
    postgres_dsn: str, postgres_schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("agentkit.state.stores.postgres.MIGRATIONS", MIGRATIONS[:3])
    async with PostgresStore(postgres_dsn, schema=postgres_schema) as old:
        await old.set("k", "kept")
    connection = await asyncpg.connect(postgres_dsn)
    try:
        await connection.executemany(
            f"INSERT INTO {postgres_schema}.runs VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
            [_old_row(run) for run in OLD],
        )
    finally:
        await connection.close()
    monkeypatch.undo()
    async with PostgresStore(postgres_dsn, schema=postgres_schema) as migrated:
        summary = await migrated.summarize_runs(RunFilter(scopes=("org1:dom1",)))
        assert await migrated.get("k") == "kept"
        assert await migrated.get_run("b") is not None
    assert summary.total == totals(3, 108, 0.25, priced_writes=2, requests=4)
    assert summary.by_agent["billing"] == totals(1, 8, 0.0)
    assert summary.by_day["2025-12-02"] == totals(1, 8, 0.0)
