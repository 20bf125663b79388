"""SQLiteStore: the embedded durable store — key-value state, logs and checkpoints in
one SQLite file that several processes on one machine may share.

Every database call runs on one worker thread per store (so the event loop never
blocks on disk), in WAL mode with a busy timeout so processes wait for each other's
locks instead of failing. Atomicity across processes comes from SQLite itself:

- ``set_versioned`` is a single conditional ``UPDATE`` (or an ``INSERT`` for version 0),
  so two workers racing on one checkpoint version cannot both win;
- ``get_or_set`` first claims the key in a ``claims`` table (a primary-key insert only
  one process can make), runs the factory, then stores the value and drops the claim in
  one transaction. Other processes poll until the value appears; a claim whose holder
  died is taken over at once when that process is gone from this machine, else once its
  lease expires.

Values are stored as versioned JSON (:mod:`agentkit.state.codec`), never pickled:
whoever can write a row can make a read fail with :class:`CheckpointCorrupt`, but
cannot make a worker import or run anything. A row that does not decode is left as it
is.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any, TypeVar

from agentkit.core.contracts.run_totals import RunSummary
from agentkit.core.contracts.runs import RunFilter, RunPage, RunQuery, RunRecord
from agentkit.core.contracts.state_errors import VersionConflict
from agentkit.state.codec import dumps, loads
from agentkit.state.owners import owner_alive, this_owner
from agentkit.state.stores._inflight import abandon_inflight, join_inflight
from agentkit.state.stores._run_rows import (
    page_of,
    record_of,
    selection,
    summary_of_rows,
    totals_selection,
)
from agentkit.state.stores._sqlite_runs import PUT_RUN, run_row, upgrade_runs
from agentkit.state.stores.sqlite_worker import SQLiteWorker

__all__ = ["SQLiteStore"]

_T = TypeVar("_T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value TEXT NOT NULL, expires REAL);
CREATE TABLE IF NOT EXISTS claims (key TEXT PRIMARY KEY, owner TEXT NOT NULL, lease REAL NOT NULL);
CREATE TABLE IF NOT EXISTS logs (id INTEGER PRIMARY KEY AUTOINCREMENT, log TEXT NOT NULL,
                                 value TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS logs_by_name ON logs (log, id);
CREATE TABLE IF NOT EXISTS versioned (key TEXT PRIMARY KEY, value TEXT NOT NULL,
                                      version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS runs (run_id TEXT PRIMARY KEY, agent TEXT NOT NULL,
                                 status TEXT NOT NULL, session TEXT, scope TEXT NOT NULL,
                                 created REAL NOT NULL, updated REAL NOT NULL,
                                 value TEXT NOT NULL, input_tokens INTEGER NOT NULL DEFAULT 0,
                                 output_tokens INTEGER NOT NULL DEFAULT 0,
                                 cache_read_tokens INTEGER NOT NULL DEFAULT 0,
                                 cache_write_tokens INTEGER NOT NULL DEFAULT 0,
                                 reasoning_tokens INTEGER NOT NULL DEFAULT 0,
                                 requests INTEGER NOT NULL DEFAULT 0, cost_usd REAL);
CREATE INDEX IF NOT EXISTS runs_by_created ON runs (created, run_id);
CREATE INDEX IF NOT EXISTS runs_by_agent ON runs (agent, created, run_id);
CREATE INDEX IF NOT EXISTS runs_by_status ON runs (status, created, run_id);
CREATE INDEX IF NOT EXISTS runs_by_session ON runs (session, created, run_id);
CREATE INDEX IF NOT EXISTS runs_by_scope ON runs (scope, created, run_id);
"""

_MISSING = object()

def _holder_alive(owner: str) -> bool:
    """False only when ``owner`` is a process on this machine that is known to be gone
    (see :mod:`agentkit.state.owners`: a PID alone would make a restarted container,
    PID 1 again, wait out the whole lease): a worker killed mid-factory must not block
    recovery. Anything remote or unknowable counts as alive until its lease ends."""
    return owner_alive(owner) is not False


class SQLiteStore:
    """A durable :class:`~agentkit.core.contracts.ports.Store` in one SQLite file.

    ``claim_lease`` bounds how long a ``get_or_set`` claim blocks other processes if its
    holder dies mid-factory; ``poll_interval`` is the longest wait between looks at a
    key another process is computing.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        claim_lease: float = 300.0,
        poll_interval: float = 0.05,
        busy_timeout: float = 30.0,
    ) -> None:
        self.path = os.fspath(path)
        self.claim_lease = claim_lease
        self.poll_interval = poll_interval
        # The process's owner id, plus a token so two stores of one process never
        # release each other's claims.
        self._owner = f"{this_owner()}|{uuid.uuid4().hex}"
        self._inflight: dict[str, asyncio.Future[Any]] = {}
        self._worker = SQLiteWorker(
            self.path, schema=_SCHEMA, owner="SQLiteStore", busy_timeout=busy_timeout,
            upgrade=upgrade_runs,
        )

    async def _db(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        return await self._worker.run(fn)

    def close(self) -> None:
        """Close the connection and stop the worker thread."""
        self._worker.close()

    async def __aenter__(self) -> SQLiteStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    # -- key-value ------------------------------------------------------------------

    @staticmethod
    def _read(conn: sqlite3.Connection, key: str) -> Any:
        row = conn.execute("SELECT value, expires FROM kv WHERE key = ?", (key,)).fetchone()
        if row is None:
            return _MISSING
        value, expires = row
        if expires is not None and time.time() >= expires:
            conn.execute("DELETE FROM kv WHERE key = ? AND expires = ?", (key, expires))
            return _MISSING
        return loads(value, key=key)

    async def get(self, key: str) -> Any | None:
        """The value under ``key``, or None when absent or expired."""
        value = await self._db(partial(self._read, key=key))
        return None if value is _MISSING else value

    @staticmethod
    def _expiry(ttl: float | None) -> float | None:
        if ttl is None:
            return None
        if ttl <= 0:
            raise ValueError(f"ttl must be a positive number of seconds, got {ttl!r}")
        return time.time() + ttl

    async def set(self, key: str, value: Any, *, ttl: float | None = None) -> None:
        """Store ``value``; with ``ttl`` seconds it expires."""
        blob = dumps(value)
        expires = self._expiry(ttl)
        await self._db(
            lambda c: c.execute(
                "INSERT OR REPLACE INTO kv (key, value, expires) VALUES (?, ?, ?)",
                (key, blob, expires),
            )
        )

    async def delete(self, key: str) -> bool:
        """Remove ``key``; True when something was there."""

        def remove(conn: sqlite3.Connection) -> bool:
            # Not decoded: deleting is how a corrupt row is cleared.
            cursor = conn.execute(
                "DELETE FROM kv WHERE key = ? AND (expires IS NULL OR expires > ?)",
                (key, time.time()),
            )
            conn.execute("DELETE FROM kv WHERE key = ?", (key,))
            return cursor.rowcount > 0

        return await self._db(remove)

    # -- single flight --------------------------------------------------------------

    def _try_claim(self, conn: sqlite3.Connection, key: str) -> tuple[bool, Any]:
        """(claimed, value): the value if already stored, else whether we hold the claim."""
        conn.execute("BEGIN IMMEDIATE")
        try:
            value = self._read(conn, key)
            if value is not _MISSING:
                return False, value
            now = time.time()
            row = conn.execute(
                "SELECT owner, lease FROM claims WHERE key = ?", (key,)
            ).fetchone()
            if row is not None and row[1] > now and _holder_alive(row[0]):
                return False, _MISSING
            conn.execute(
                "INSERT OR REPLACE INTO claims (key, owner, lease) VALUES (?, ?, ?)",
                (key, self._owner, now + self.claim_lease),
            )
            return True, _MISSING
        finally:
            conn.execute("COMMIT")

    def _fulfil(
        self, conn: sqlite3.Connection, key: str, blob: str, expires: float | None
    ) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(
                "INSERT OR REPLACE INTO kv (key, value, expires) VALUES (?, ?, ?)",
                (key, blob, expires),
            )
            conn.execute("DELETE FROM claims WHERE key = ? AND owner = ?", (key, self._owner))
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def _release(self, conn: sqlite3.Connection, key: str) -> None:
        conn.execute("DELETE FROM claims WHERE key = ? AND owner = ?", (key, self._owner))

    async def get_or_set(
        self,
        key: str,
        factory: Callable[[], Awaitable[Any]],
        *,
        ttl: float | None = None,
    ) -> tuple[Any, bool]:
        """Return ``(value, created)``; across tasks and processes one ``factory()`` runs
        per key at a time, and a factory that raises stores nothing."""
        self._expiry(ttl)  # refuse a bad ttl before any work starts
        while True:
            pending = self._inflight.get(key)
            if pending is not None:  # another task in this process is computing it
                joined, value = await join_inflight(pending)
                if joined:
                    return value, False
                continue
            claimed, value = await self._db(partial(self._try_claim, key=key))
            if value is not _MISSING:
                return value, False
            if claimed:
                break
            await asyncio.sleep(self.poll_interval)  # another process holds the claim
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            value = await factory()
            blob = dumps(value)
            # The ttl runs from when the value is stored, not from when the work began.
            expires = self._expiry(ttl)
            await self._db(partial(self._fulfil, key=key, blob=blob, expires=expires))
        except BaseException as error:
            await asyncio.shield(self._db(partial(self._release, key=key)))
            abandon_inflight(future, error)
            raise
        else:
            future.set_result(value)
            return value, True
        finally:
            del self._inflight[key]

    # -- logs -----------------------------------------------------------------------

    async def append(self, log: str, value: Any) -> None:
        """Append ``value`` to the log named ``log``."""
        blob = dumps(value)
        await self._db(
            lambda c: c.execute("INSERT INTO logs (log, value) VALUES (?, ?)", (log, blob))
        )

    async def list(self, log: str) -> tuple[Any, ...]:
        """Every value appended to ``log``, oldest first."""
        rows = await self._db(
            lambda c: c.execute(
                "SELECT id, value FROM logs WHERE log = ? ORDER BY id", (log,)
            ).fetchall()
        )
        return tuple(loads(value, key=f"{log}[{row_id}]") for row_id, value in rows)

    # -- versioned ------------------------------------------------------------------

    async def get_versioned(self, key: str) -> tuple[Any, int]:
        """``(value, version)``; ``(None, 0)`` when never written."""
        row = await self._db(
            lambda c: c.execute(
                "SELECT value, version FROM versioned WHERE key = ?", (key,)
            ).fetchone()
        )
        if row is None:
            return None, 0
        return loads(row[0], key=key), int(row[1])

    async def get_versioned_many(self, keys: Sequence[str]) -> tuple[tuple[Any, int], ...]:
        """``get_versioned`` of each of ``keys``, in their order, in one query."""
        wanted = list(dict.fromkeys(keys))

        def read(conn: sqlite3.Connection) -> dict[str, tuple[str, int]]:
            found: dict[str, tuple[str, int]] = {}
            # SQLite binds at most 999 parameters in older builds: ask in chunks.
            for at in range(0, len(wanted), 500):
                chunk = wanted[at : at + 500]
                marks = ",".join("?" * len(chunk))
                for key, value, version in conn.execute(
                    f"SELECT key, value, version FROM versioned WHERE key IN ({marks})", chunk
                ):
                    found[key] = (value, int(version))
            return found

        rows = await self._db(read) if wanted else {}
        return tuple(
            (loads(rows[key][0], key=key), rows[key][1]) if key in rows else (None, 0)
            for key in keys
        )

    async def set_versioned(self, key: str, value: Any, *, expected_version: int) -> int:
        """Write ``value`` if the version is still ``expected_version``; the new version.

        One statement either way, so the check and the write cannot be split by another
        process.
        """
        blob = dumps(value)
        return await self._db(partial(_write_versioned, key=key, blob=blob,
                                      expected_version=expected_version))

    async def set_versioned_with_run(
        self, key: str, value: Any, *, expected_version: int, record: RunRecord
    ) -> int:
        """``set_versioned``, and ``put_run(record)`` only if it wrote, in one transaction."""
        blob, row = dumps(value), run_row(record)

        def write(conn: sqlite3.Connection) -> int:
            version = _write_versioned(conn, key, blob, expected_version)
            conn.execute(PUT_RUN, row)
            return version

        return await self._worker.transaction(write)

    # -- run registry -------------------------------------------------------------------

    async def put_run(self, record: RunRecord) -> None:
        """Write the registry record of a run; an existing record's ``created`` is kept."""
        row = run_row(record)
        await self._db(lambda c: c.execute(PUT_RUN, row))

    async def get_run(self, run_id: str) -> RunRecord | None:
        """The registry record of ``run_id``, or None."""
        row = await self._db(
            lambda c: c.execute(
                "SELECT run_id, created, value FROM runs WHERE run_id = ?", (run_id,)
            ).fetchone()
        )
        return None if row is None else record_of(*row)

    async def list_runs(self, query: RunQuery) -> RunPage:
        """One page of runs matching ``query``, newest first, in one indexed query."""
        where, params = selection(query, lambda n: "?")
        sql = f"SELECT run_id, created, value FROM runs{where}"
        return page_of(await self._db(lambda c: c.execute(sql, params).fetchall()), query)

    async def summarize_runs(self, query: RunFilter) -> RunSummary:
        """The sums of the runs matching ``query``, in total, per agent, per day and by
        status: one aggregate query over the record's usage columns."""
        # created is seconds since the epoch, never negative, so truncation is the floor.
        sql, params = totals_selection(query, lambda n: "?", "CAST(created / 86400 AS INTEGER)")
        sql = sql.format(table="runs")
        return summary_of_rows(await self._db(lambda c: c.execute(sql, params).fetchall()))

    def __repr__(self) -> str:
        return f"SQLiteStore({self.path!r})"


def _write_versioned(conn: sqlite3.Connection, key: str, blob: str, expected_version: int) -> int:
    """The compare-and-set of ``set_versioned`` on ``conn``: one statement either way."""
    if expected_version == 0:
        try:
            conn.execute("INSERT INTO versioned (key, value, version) VALUES (?, ?, 1)",
                         (key, blob))
            return 1
        except sqlite3.IntegrityError:
            pass
    else:
        cursor = conn.execute(
            "UPDATE versioned SET value = ?, version = version + 1 WHERE key = ? AND version = ?",
            (blob, key, expected_version),
        )
        if cursor.rowcount == 1:
            return expected_version + 1
    row = conn.execute("SELECT version FROM versioned WHERE key = ?", (key,)).fetchone()
    raise VersionConflict(key, expected_version, 0 if row is None else int(row[0]))
