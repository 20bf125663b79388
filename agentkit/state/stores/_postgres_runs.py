"""PostgresStore's run registry: the ``runs`` table, its migration and its statements.

Text columns hold :func:`~agentkit.state.stores._postgres_text.stored_key` forms, as the
store's keys do, so a run id or session id with NUL or past the index limit is kept
(and still found by equality); the record itself, in ``value``, keeps them as given.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentkit.core.contracts.runs import RunPage, RunQuery, RunRecord
from agentkit.state.codec import dumps
from agentkit.state.stores._postgres_text import stored_key
from agentkit.state.stores._run_rows import INDEXED, page_of, record_of, selection

if TYPE_CHECKING:
    import asyncpg

__all__ = ["RUNS_MIGRATION", "get_run", "list_runs", "put_run", "set_versioned_with_run"]

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


def _text(value: str | None) -> str | None:
    return None if value is None else stored_key(value)


_COLUMNS = "run_id, agent, status, session, scope, created, updated, value"
_UPSERT = (
    "ON CONFLICT (run_id) DO UPDATE SET agent = EXCLUDED.agent, status = EXCLUDED.status, "
    "session = EXCLUDED.session, scope = EXCLUDED.scope, updated = EXCLUDED.updated, "
    "value = EXCLUDED.value"
)


def _row(record: RunRecord) -> tuple[object, ...]:
    return (
        stored_key(record.run_id), stored_key(record.agent), stored_key(record.status),
        _text(record.session), stored_key(record.scope), record.created, record.updated,
        dumps(record),
    )


async def put_run(pool: asyncpg.Pool, schema: str, record: RunRecord) -> None:
    """Write ``record`` in one statement; an existing row keeps its ``created``."""
    await pool.execute(
        f'INSERT INTO "{schema}".runs ({_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) '
        + _UPSERT,
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
                 "WHERE key = $1 AND version = $11 RETURNING version")
    sql = (
        f"WITH written AS ({write}), run AS (INSERT INTO {s}.runs ({_COLUMNS}) "
        "SELECT $3::text, $4::text, $5::text, $6::text, $7::text, $8::float8, $9::float8, "
        f"$10::text FROM written {_UPSERT}) "
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
