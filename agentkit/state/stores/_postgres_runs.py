"""PostgresStore's run registry: the ``runs`` table, its migrations and its statements.

Text columns hold :func:`~agentkit.state.stores._postgres_text.stored_key` forms, as the
store's keys do, so a run id or session id with NUL or past the index limit is kept
(and still found by equality); the record itself, in ``value``, keeps them as given.
The summed columns (usage and cost) came later (:data:`TOTALS_MIGRATION`): the migration
adds them and fills them from each row's record, and adds the summary's covering index,
so a summary reads the index and never the records.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentkit.core.contracts.run_totals import RunSummary
from agentkit.core.contracts.runs import RunFilter, RunPage, RunQuery, RunRecord
from agentkit.state.codec import dumps, loads
from agentkit.state.stores._postgres_text import stored_key
from agentkit.state.stores._run_rows import (
    INDEXED,
    SUMMED,
    page_of,
    record_of,
    selection,
    summary_of_rows,
    summed,
    totals_selection,
)

if TYPE_CHECKING:
    import asyncpg

__all__ = [
    "RUNS_MIGRATION",
    "TOTALS_MIGRATION",
    "get_run",
    "list_runs",
    "put_run",
    "set_versioned_with_run",
    "summarize_runs",
]

RUNS_MIGRATION: tuple[str, ...] = (
    "CREATE TABLE {s}.runs (run_id text COLLATE \"C\" PRIMARY KEY, agent text NOT NULL, "
    "status text NOT NULL, session text, scope text NOT NULL, created float8 NOT NULL, "
    "updated float8 NOT NULL, value text NOT NULL)",
    "CREATE INDEX runs_by_created ON {s}.runs (created DESC, run_id DESC)",
    *(
        f"CREATE INDEX runs_by_{column} ON {{s}}.runs ({column}, created DESC, run_id DESC)"
        for column in INDEXED
    ),
)
"""The statements of the migration that adds the registry."""


def _extracted(column: str) -> str:
    # The codec's layout of a RunRecord, {"agentkit": 1, "value": {..., "usage": {...}}},
    # with fields at their defaults left out. A cost that is not a plain number (NaN) is
    # taken as unpriced.
    path = ("ARRAY['value', 'cost_usd']" if column == "cost_usd"
            else f"ARRAY['value', 'usage', '{column}']")
    kind, default = ("float8", "NULL") if column == "cost_usd" else ("bigint", "0")
    return (f"{column} = CASE WHEN json_typeof(j.v #> {path}) = 'number' "
            f"THEN (j.v #>> {path})::numeric::{kind} ELSE {default} END")


TOTALS_MIGRATION: tuple[str, ...] = (
    "ALTER TABLE {s}.runs "
    + ", ".join(f"ADD COLUMN {column} bigint NOT NULL DEFAULT 0" for column in SUMMED[:-1])
    + ", ADD COLUMN cost_usd float8",
    f"UPDATE {{s}}.runs SET {', '.join(_extracted(column) for column in SUMMED)} "
    # PostgreSQL's json refuses to read past a \u0000 escape (text holding NUL), so each
    # becomes \u0020 (same length, so an escaped backslash before it stays one): only
    # numbers are read here.
    "FROM (SELECT run_id AS id, replace(value, '\\u0000', '\\u0020')::json AS v "
    "FROM {s}.runs) AS j WHERE run_id = j.id",
    "CREATE INDEX runs_totals ON {s}.runs (scope, agent, status, created) "
    f"INCLUDE ({', '.join(SUMMED)})",
)
"""The statements of the migration that adds the summed columns and their index."""


def _text(value: str | None) -> str | None:
    return None if value is None else stored_key(value)


_NAMES = ("run_id", "agent", "status", "session", "scope", "created", "updated", "value",
          *SUMMED)
_COLUMNS = ", ".join(_NAMES)
_UPSERT = "ON CONFLICT (run_id) DO UPDATE SET " + ", ".join(
    f"{column} = EXCLUDED.{column}" for column in _NAMES[1:] if column != "created"
)
_TYPES = ("text", "text", "text", "text", "text", "float8", "float8", "text",
          *("bigint",) * (len(SUMMED) - 1), "float8")


def _row(record: RunRecord) -> tuple[object, ...]:
    return (
        stored_key(record.run_id), stored_key(record.agent), stored_key(record.status),
        _text(record.session), stored_key(record.scope), record.created, record.updated,
        dumps(record), *summed(record),
    )


async def put_run(pool: asyncpg.Pool, schema: str, record: RunRecord) -> None:
    """Write ``record`` in one statement; an existing row keeps its ``created``."""
    await pool.execute(
        f'INSERT INTO "{schema}".runs ({_COLUMNS}) VALUES '
        f"({', '.join(f'${n}' for n in range(1, len(_NAMES) + 1))}) {_UPSERT}",
        *_row(record),
    )


async def set_versioned_with_run(
    pool: asyncpg.Pool, schema: str, stored: str, text: str, expected: int, record: RunRecord
) -> asyncpg.Record | None:
    """The compare-and-set of ``PostgresStore.set_versioned`` with ``record`` upserted
    only if it wrote, in one statement (data-modifying CTEs all run, in one snapshot);
    its row is ``(new version or NULL, current version)`` as for the plain write."""
    s = f'"{schema}"'
    if expected == 0:
        write = (f"INSERT INTO {s}.versioned (key, value, version) VALUES ($1, $2, 1) "
                 "ON CONFLICT (key) DO NOTHING RETURNING version")
    else:
        write = (f"UPDATE {s}.versioned SET value = $2, version = version + 1 "
                 f"WHERE key = $1 AND version = ${len(_NAMES) + 3} RETURNING version")
    values = ", ".join(f"${n + 3}::{kind}" for n, kind in enumerate(_TYPES))
    sql = (
        f"WITH written AS ({write}), run AS (INSERT INTO {s}.runs ({_COLUMNS}) "
        f"SELECT {values} FROM written {_UPSERT}) "
        f"SELECT (SELECT version FROM written), (SELECT version FROM {s}.versioned "
        "WHERE key = $1)"
    )
    extra = () if expected == 0 else (expected,)
    return await pool.fetchrow(sql, stored, text, *_row(record), *extra)


async def get_run(pool: asyncpg.Pool, schema: str, run_id: str) -> RunRecord | None:
    """The record of ``run_id``, or None."""
    row = await pool.fetchrow(
        f'SELECT created, value FROM "{schema}".runs WHERE run_id = $1', stored_key(run_id)
    )
    return None if row is None else record_of(run_id, row[0], row[1])


async def list_runs(pool: asyncpg.Pool, schema: str, query: RunQuery) -> RunPage:
    """One page of ``query`` in one indexed statement."""
    where, params = selection(
        query, lambda n: f"${n}", stored_key,
        any_of=lambda column, n: f"{column} = ANY(${n}::text[])",
    )
    rows = await pool.fetch(f'SELECT run_id, created, value FROM "{schema}".runs{where}', *params)
    return page_of([(row[0], row[1], row[2]) for row in rows], query)


async def summarize_runs(pool: asyncpg.Pool, schema: str, query: RunFilter) -> RunSummary:
    """The sums of ``query``'s runs in one aggregate statement."""
    sql, params = totals_selection(
        query, lambda n: f"${n}", "floor(created / 86400)::bigint", stored_key,
        any_of=lambda column, n: f"{column} = ANY(${n}::text[])",
    )
    rows = [list(row) for row in await pool.fetch(sql.format(table=f'"{schema}".runs'), *params)]
    for row in rows:
        if row[0].startswith("\x01") or row[1].startswith("\x01"):
            # An agent or status name stored as its digest: its record has it as given.
            text = await pool.fetchval(
                f'SELECT value FROM "{schema}".runs WHERE agent = $1 AND status = $2 LIMIT 1',
                row[0], row[1],
            )
            record: RunRecord = loads(text, key="run summary")
            row[0], row[1] = record.agent, record.status
    return summary_of_rows(rows)
