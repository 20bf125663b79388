"""SQLiteStore's run registry rows: the upsert of a record, and the upgrade that gives a
file made before run summaries its usage columns.

A file written by an older release has a ``runs`` table without the summed columns
(:data:`~agentkit.state.stores._run_rows.SUMMED`). On first open the upgrade adds them
and fills them from each row's record, in one ``BEGIN IMMEDIATE`` transaction, so two
processes opening one old file together upgrade it once; a record that no longer
decodes keeps zeros (it is refused when read, as before). Then the summary's covering
index is made, so a summary reads the index and never the records.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from agentkit.core.contracts.runs import RunRecord
from agentkit.state.codec import dumps, loads
from agentkit.state.stores._run_rows import SUMMED, summed

__all__ = ["PUT_RUN", "run_row", "upgrade_runs"]

_COLUMNS = ("run_id", "agent", "status", "session", "scope", "created", "updated", "value",
            *SUMMED)

PUT_RUN = (
    f"INSERT INTO runs ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))}) "
    "ON CONFLICT (run_id) DO UPDATE SET "
    + ", ".join(f"{column} = excluded.{column}" for column in _COLUMNS[1:] if column != "created")
)
"""Write a record; an existing row keeps its ``created``."""

_TOTALS_INDEX = (
    "CREATE INDEX IF NOT EXISTS runs_totals ON runs "
    f"(scope, agent, status, created, {', '.join(SUMMED)})"
)
_ADDED = {column: "INTEGER NOT NULL DEFAULT 0" for column in SUMMED[:-1]} | {"cost_usd": "REAL"}


def run_row(record: RunRecord) -> tuple[Any, ...]:
    """The values of :data:`PUT_RUN` for ``record``."""
    return (record.run_id, record.agent, record.status, record.session, record.scope,
            record.created, record.updated, dumps(record), *summed(record))


def _missing(conn: sqlite3.Connection) -> list[str]:
    present = {row[1] for row in conn.execute("PRAGMA table_info(runs)")}
    return [column for column in SUMMED if column not in present]


def _backfill(conn: sqlite3.Connection) -> None:
    updates = []
    for run_id, text in conn.execute("SELECT run_id, value FROM runs").fetchall():
        try:
            record: RunRecord = loads(text, key=f"run {run_id}")
        except Exception:  # a corrupt record is refused when read, not here
            continue
        updates.append((*summed(record), run_id))
    conn.executemany(
        f"UPDATE runs SET {', '.join(f'{column} = ?' for column in SUMMED)} WHERE run_id = ?",
        updates,
    )


def upgrade_runs(conn: sqlite3.Connection) -> None:
    """Bring the ``runs`` table of ``conn``'s file up to this release's layout."""
    if not _missing(conn):
        conn.execute(_TOTALS_INDEX)
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        missing = _missing(conn)  # another process may have upgraded it meanwhile
        for column in missing:
            conn.execute(f"ALTER TABLE runs ADD COLUMN {column} {_ADDED[column]}")
        if missing:
            _backfill(conn)
        conn.execute(_TOTALS_INDEX)
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
