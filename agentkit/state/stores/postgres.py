"""PostgresStore: one store shared by many workers on many hosts, in PostgreSQL.

Key-value state, logs and checkpoints live in tables of one schema (``agentkit`` by
default), created on first use. The guarantees come from the server, not from us:

- ``set_versioned`` is one statement (a conditional ``UPDATE``, or an ``INSERT`` for
  version 0) that also reads the current version, so a checkpoint costs one round trip
  (with the run's registry record, ``set_versioned_with_run``, still one) and two
  workers racing on one version cannot both win.
- ``get_or_set`` is single-flight across processes and hosts through a claim row per
  key (owner and lease, as in SQLiteStore): the first caller inserts it, runs the
  factory holding no connection, then stores the value and deletes the claim in one
  transaction. The producer renews the lease while its factory runs, so only that
  commit, or a producer proven dead (gone from this machine, or its lease lapsed
  unrenewed), ends the claim: the server ending a connection does not, and a nested
  ``get_or_set`` inside a factory never waits for a connection its caller holds.
  Others poll (backing off to ``poll_interval``), each with short statements, so a
  ``statement_timeout`` never cuts a wait, and give up after ``claim_wait`` with
  :class:`SingleFlightTimeout`.
- Expiry is judged by the server's clock, so hosts with skewed clocks agree. Expired
  rows are invisible at once, and deleted on a later write or by :meth:`vacuum`.

Values are stored as agentkit's versioned JSON (:mod:`agentkit.state.codec`), never
pickled: a row written by anyone with access to the database is data, not code, and one
that does not decode raises :class:`CheckpointCorrupt` and is left as it is. The column
is ``text``, not ``jsonb``: the codec's output is kept byte for byte (``jsonb`` would
reorder keys and refuses the ``\u0000`` escapes a Python string may need), and the
server spends nothing parsing values it never queries into. The driver is asyncpg
(``pip install "agentkit-framework[postgres]"``), imported on first use.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

from agentkit.core.contracts.run_totals import RunSummary
from agentkit.core.contracts.runs import RunFilter, RunPage, RunQuery, RunRecord
from agentkit.core.contracts.state_errors import (
    SingleFlightLost,
    SingleFlightTimeout,
    VersionConflict,
)
from agentkit.state.codec import dumps, loads
from agentkit.state.owners import owner_alive, this_owner
from agentkit.state.stores import _postgres_runs as _runs
from agentkit.state.stores._inflight import abandon_inflight, join_inflight
from agentkit.state.stores._postgres_schema import MIGRATIONS, migrate
from agentkit.state.stores._postgres_text import connection_url, lock_id, redact, stored_key

if TYPE_CHECKING:
    import asyncpg

__all__ = ["PostgresStore", "connection_url", "lock_id"]

_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_NOW = "extract(epoch from clock_timestamp())"
_LIVE = f"(expires IS NULL OR expires > {_NOW})"
_CLEAN_EVERY = 256
"""Writes between two bounded sweeps of expired rows."""
_CLEAN_BATCH = 500

def _asyncpg() -> Any:
    try:
        import asyncpg
    except ImportError as error:
        raise ImportError(
            "PostgresStore needs the asyncpg driver, which is not installed: "
            'pip install "agentkit-framework[postgres]"'
        ) from error
    return asyncpg


async def _no_reset(connection: asyncpg.Connection) -> None:
    # asyncpg's default reset costs a round trip per release; nothing we run leaves
    # session state behind (the only advisory locks are transaction-scoped).
    return None


class PostgresStore:
    """A durable :class:`~agentkit.core.contracts.ports.Store` in PostgreSQL.

    ``dsn`` is a URL (``postgresql://user:password@host:5432/db``) or a libpq keyword
    string (``host=db dbname=prod user=agents``). Tables go in ``schema``, which is
    created on first use together with its tables. ``pool_size`` bounds the connections;
    no call holds one while a ``get_or_set`` factory runs. ``claim_lease`` is how long a
    producer's claim outlives its last renewal (renewed every third of it);
    ``claim_wait`` bounds a waiter's wait for another worker's factory;
    ``poll_interval`` is the longest pause between a waiter's looks. Close with
    ``await store.close()`` or use ``async with``.
    """

    def __init__(
        self,
        dsn: str,
        *,
        schema: str = "agentkit",
        pool_size: int = 10,
        claim_lease: float = 30.0,
        claim_wait: float = 300.0,
        poll_interval: float = 0.2,
    ) -> None:
        if not isinstance(schema, str) or not _SCHEMA_NAME.fullmatch(schema):
            raise ValueError(
                f"PostgresStore(schema=...) must be a lower-case SQL identifier (letters, "
                f"digits and '_', not starting with a digit, at most 63), got {schema!r}"
            )
        if isinstance(pool_size, bool) or not isinstance(pool_size, int) or pool_size < 1:
            raise ValueError(f"PostgresStore(pool_size=...) must be a positive integer, "
                             f"got {pool_size!r}")
        for name, seconds in (("claim_lease", claim_lease), ("claim_wait", claim_wait),
                              ("poll_interval", poll_interval)):
            if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not seconds > 0:
                raise ValueError(f"PostgresStore({name}=...) must be a positive number of "
                                 f"seconds, got {seconds!r}")
        self._url = connection_url(dsn)
        _asyncpg()  # a missing driver fails here, not at the first call
        self.dsn = dsn
        self.claim_lease = float(claim_lease)
        self.claim_wait = claim_wait
        self.poll_interval = float(poll_interval)
        # The process's owner id, plus a token so two stores of one process never
        # take each other's claims.
        self._owner = f"{this_owner()}|{uuid.uuid4().hex}"
        self.schema = schema
        self.pool_size = pool_size
        self._pool: asyncpg.Pool | None = None
        self._opening: asyncio.Lock | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._closed = False
        self._writes = 0
        self._inflight: dict[str, asyncio.Future[Any]] = {}
        s = f'"{schema}"'
        self._sql = {
            "get": f"SELECT value FROM {s}.kv WHERE key = $1 AND {_LIVE}",
            "set": (
                f"INSERT INTO {s}.kv (key, value, expires) VALUES ($1, $2, "
                f"CASE WHEN $3::float8 IS NULL THEN NULL ELSE {_NOW} + $3::float8 END) "
                "ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, "
                "expires = EXCLUDED.expires"
            ),
            "delete": f"DELETE FROM {s}.kv WHERE key = $1 RETURNING {_LIVE}",
            "append": f"INSERT INTO {s}.logs (log, value) VALUES ($1, $2)",
            "list": f"SELECT id, value FROM {s}.logs WHERE log = $1 ORDER BY id",
            "get_versioned": f"SELECT value, version FROM {s}.versioned WHERE key = $1",
            "get_versioned_many": (
                f"SELECT key, value, version FROM {s}.versioned WHERE key = ANY($1::text[])"
            ),
            "create_versioned": (
                f"WITH written AS (INSERT INTO {s}.versioned (key, value, version) "
                "VALUES ($1, $2, 1) ON CONFLICT (key) DO NOTHING RETURNING version) "
                f"SELECT (SELECT version FROM written), "
                f"(SELECT version FROM {s}.versioned WHERE key = $1)"
            ),
            "update_versioned": (
                f"WITH written AS (UPDATE {s}.versioned SET value = $2, version = version + 1 "
                "WHERE key = $1 AND version = $3 RETURNING version) "
                f"SELECT (SELECT version FROM written), "
                f"(SELECT version FROM {s}.versioned WHERE key = $1)"
            ),
            "version": f"SELECT version FROM {s}.versioned WHERE key = $1",
            "peek": (  # the value, and the claim with whether its lease still runs
                f"SELECT (SELECT value FROM {s}.kv WHERE key = $1 AND {_LIVE}), "
                f"c.owner, c.lease > {_NOW} FROM (SELECT 1) AS one "
                f"LEFT JOIN {s}.claims AS c ON c.key = $1"
            ),
            "claim": (  # insert, or take over the claim seen ($4) if it is over
                f"INSERT INTO {s}.claims AS c (key, owner, lease) VALUES ($1, $2, {_NOW} + $3) "
                "ON CONFLICT (key) DO UPDATE SET owner = EXCLUDED.owner, lease = EXCLUDED.lease "
                f"WHERE c.owner = $4 AND ($5 OR c.lease <= {_NOW}) RETURNING 1"
            ),
            "renew": (
                f"UPDATE {s}.claims SET lease = {_NOW} + $3 WHERE key = $1 AND owner = $2"
            ),
            "unclaim": f"DELETE FROM {s}.claims WHERE key = $1 AND owner = $2",
            "fulfil": (  # store the value only if the claim was still ours; else its holder
                f"WITH gone AS (DELETE FROM {s}.claims WHERE key = $1 AND owner = $2 "
                f"RETURNING key), put AS (INSERT INTO {s}.kv (key, value, expires) "
                f"SELECT key, $3, CASE WHEN $4::float8 IS NULL THEN NULL "
                f"ELSE {_NOW} + $4::float8 END FROM gone ON CONFLICT (key) DO UPDATE "
                "SET value = EXCLUDED.value, expires = EXCLUDED.expires RETURNING 1) "
                f"SELECT (SELECT count(*) FROM put), "
                f"(SELECT owner FROM {s}.claims WHERE key = $1)"
            ),
            "vacuum": (
                f"WITH gone AS (DELETE FROM {s}.kv WHERE key IN (SELECT key FROM {s}.kv "
                f"WHERE expires <= {_NOW} LIMIT $1 FOR UPDATE SKIP LOCKED) RETURNING 1) "
                "SELECT count(*) FROM gone"
            ),
        }

    # -- connections --------------------------------------------------------------------

    async def connections(self) -> asyncpg.Pool:
        """The store's connection pool, opened (and its schema brought up to date) on
        first use: for components that keep tables of their own in the store's schema,
        such as :class:`~agentkit.tools.files.postgres.PostgresFiles`."""
        return await self._ready()

    async def _ready(self) -> asyncpg.Pool:
        if self._closed:
            raise RuntimeError(f"{self!r} is closed")
        pool = self._pool
        if pool is not None:
            if asyncio.get_running_loop() is not self._loop:
                raise RuntimeError(
                    f"{self!r} was opened on another event loop; make one store per loop"
                )
            return pool
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:
            if self._pool is None:
                await self._open()
        assert self._pool is not None
        return self._pool

    async def _open(self) -> None:
        asyncpg = _asyncpg()
        try:
            pool = await asyncpg.create_pool(
                self._url, min_size=1, max_size=self.pool_size, reset=_no_reset
            )
        except (OSError, asyncpg.PostgresError) as error:
            raise ConnectionError(
                f"{self!r} could not connect: {error}. Check that the server is up and "
                "that the connection string names its host, port, database and user"
            ) from error
        try:
            async with pool.acquire() as connection:
                await migrate(connection, self.schema, MIGRATIONS)
        except BaseException:
            await pool.close()
            raise
        self._loop = asyncio.get_running_loop()
        self._pool = pool

    async def close(self) -> None:
        """Close every connection; later calls raise a clear error."""
        self._closed = True
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    async def __aenter__(self) -> PostgresStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- key-value ------------------------------------------------------------------------

    async def get(self, key: str) -> Any | None:
        """The value under ``key``, or None when absent or expired."""
        pool = await self._ready()
        text = await pool.fetchval(self._sql["get"], stored_key(key))
        return None if text is None else loads(text, key=key)

    @staticmethod
    def _check_ttl(ttl: float | None) -> float | None:
        if ttl is not None and ttl <= 0:
            raise ValueError(f"ttl must be a positive number of seconds, got {ttl!r}")
        return None if ttl is None else float(ttl)

    async def set(self, key: str, value: Any, *, ttl: float | None = None) -> None:
        """Store ``value``; with ``ttl`` seconds it expires."""
        seconds = self._check_ttl(ttl)
        text = dumps(value)
        pool = await self._ready()
        await pool.execute(self._sql["set"], stored_key(key), text, seconds)
        await self._after_write(pool)

    async def delete(self, key: str) -> bool:
        """Remove ``key``; True when something was there."""
        pool = await self._ready()
        return bool(await pool.fetchval(self._sql["delete"], stored_key(key)))

    async def vacuum(self) -> int:
        """Delete every expired key-value row now; the number deleted.

        Expired rows are never returned, and writes sweep a bounded batch of them now
        and then; call this from a scheduled job to keep a large table small.
        """
        pool = await self._ready()
        total = 0
        while True:
            gone = int(await pool.fetchval(self._sql["vacuum"], 10 * _CLEAN_BATCH))
            total += gone
            if gone < 10 * _CLEAN_BATCH:
                return total

    async def _after_write(self, pool: asyncpg.Pool) -> None:
        self._writes += 1
        if self._writes % _CLEAN_EVERY == 0:
            await pool.fetchval(self._sql["vacuum"], _CLEAN_BATCH)

    # -- single flight ------------------------------------------------------------------

    async def get_or_set(
        self,
        key: str,
        factory: Callable[[], Awaitable[Any]],
        *,
        ttl: float | None = None,
    ) -> tuple[Any, bool]:
        """Return ``(value, created)``; across tasks, processes and hosts one
        ``factory()`` runs per key at a time, and a factory that raises stores nothing.

        Raises :class:`SingleFlightTimeout` after waiting ``claim_wait`` for another
        worker's factory, and :class:`SingleFlightLost` when this worker's claim was
        taken over while its factory ran (its value is then not stored).
        """
        seconds = self._check_ttl(ttl)  # refuse a bad ttl before any work starts
        stored = stored_key(key)
        found, value = await self._claim(key, stored)
        if found:
            return value, False
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            renewer = asyncio.create_task(self._renew(stored))
            try:
                value = await factory()
                text = dumps(value)
            finally:
                renewer.cancel()
                await asyncio.wait([renewer])  # not `await renewer`: keeps our own cancel
            await self._fulfil(key, stored, text, seconds)
        except BaseException as error:
            await asyncio.shield(self._unclaim(stored))
            abandon_inflight(future, error)
            raise
        else:
            future.set_result(value)
            return value, True
        finally:
            del self._inflight[key]

    async def _claim(self, key: str, stored: str) -> tuple[bool, Any]:
        """``(True, value)`` when the value is there (or another task of this process
        made it), ``(False, None)`` once this store holds the key's claim."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.claim_wait
        pause = 0.005
        while True:
            pending = self._inflight.get(key)
            if pending is not None:  # another task in this process is computing it
                joined, value = await join_inflight(pending)
                if joined:
                    return True, value
                continue
            pool = await self._ready()
            row = await pool.fetchrow(self._sql["peek"], stored)
            assert row is not None  # a SELECT from one row always has one
            text, holder, live = row
            if text is not None:
                return True, loads(text, key=key)
            dead = holder is not None and owner_alive(holder) is False
            if holder is None or not live or dead:
                if key in self._inflight:
                    continue  # a task of ours claimed it while we looked
                if await pool.fetchval(
                    self._sql["claim"], stored, self._owner, self.claim_lease, holder, dead
                ):
                    break
                continue  # another worker claimed it first: look again
            left = deadline - loop.time()
            if left <= 0:
                raise SingleFlightTimeout(key, self.claim_wait, holder)
            await asyncio.sleep(min(pause, left))
            pause = min(pause * 2, self.poll_interval)
        # Claimed; read again: whoever held the claim before may have stored the value.
        text = await pool.fetchval(self._sql["get"], stored)
        if text is None:
            return False, None
        await self._unclaim(stored)
        return True, loads(text, key=key)

    async def _renew(self, stored: str) -> None:
        """Keep this store's claim on ``stored`` alive until cancelled."""
        while True:
            await asyncio.sleep(self.claim_lease / 3)
            try:
                pool = await self._ready()
                await pool.execute(self._sql["renew"], stored, self._owner, self.claim_lease)
            except Exception:  # a lost connection: the next renewal tries again
                continue

    async def _fulfil(self, key: str, stored: str, text: str, seconds: float | None) -> None:
        """Store the value and end the claim in one statement, if the claim is ours."""
        pool = await self._ready()
        row = await pool.fetchrow(self._sql["fulfil"], stored, self._owner, text, seconds)
        assert row is not None  # a SELECT of two scalar subqueries always has one row
        stored_now, holder = row
        if not stored_now:
            raise SingleFlightLost(key, holder)
        await self._after_write(pool)

    async def _unclaim(self, stored: str) -> None:
        """Let go of the claim (the factory failed) so the next caller tries."""
        try:
            pool = await self._ready()
            await pool.execute(self._sql["unclaim"], stored, self._owner)
        except Exception:  # an unreachable server: the claim's lease lapses instead
            pass

    # -- logs -----------------------------------------------------------------------------

    async def append(self, log: str, value: Any) -> None:
        """Append ``value`` to the log named ``log``."""
        text = dumps(value)
        pool = await self._ready()
        await pool.execute(self._sql["append"], stored_key(log), text)

    async def list(self, log: str) -> tuple[Any, ...]:
        """Every value appended to ``log``, oldest first."""
        pool = await self._ready()
        rows = await pool.fetch(self._sql["list"], stored_key(log))
        return tuple(loads(value, key=f"{log}[{row_id}]") for row_id, value in rows)

    # -- versioned ------------------------------------------------------------------------

    async def get_versioned(self, key: str) -> tuple[Any, int]:
        """``(value, version)``; ``(None, 0)`` when never written."""
        pool = await self._ready()
        row = await pool.fetchrow(self._sql["get_versioned"], stored_key(key))
        if row is None:
            return None, 0
        return loads(row[0], key=key), int(row[1])

    async def get_versioned_many(self, keys: Sequence[str]) -> tuple[tuple[Any, int], ...]:
        """``get_versioned`` of each of ``keys``, in their order, in one statement."""
        if not keys:
            return ()
        pool = await self._ready()
        stored = [stored_key(key) for key in keys]
        rows = await pool.fetch(self._sql["get_versioned_many"], stored)
        found = {key: (value, int(version)) for key, value, version in rows}
        return tuple(
            (loads(found[at][0], key=key), found[at][1]) if at in found else (None, 0)
            for key, at in zip(keys, stored, strict=True)
        )

    async def set_versioned(self, key: str, value: Any, *, expected_version: int) -> int:
        """Write ``value`` if the version is still ``expected_version``; the new version.

        One statement, one round trip: the write is conditional on the version, so the
        check and the write cannot be split by another worker.
        """
        return await self._versioned(key, dumps(value), expected_version, None)

    async def set_versioned_with_run(self, key: str, value: Any, *, expected_version: int,
                                     record: RunRecord) -> int:
        """``set_versioned``, and ``put_run(record)`` only if it wrote: one statement."""
        return await self._versioned(key, dumps(value), expected_version, record)

    async def _versioned(self, key: str, text: str, expected: int, run: RunRecord | None) -> int:
        pool = await self._ready()
        stored = stored_key(key)
        if run is not None:
            row = await _runs.set_versioned_with_run(pool, self.schema, stored, text, expected, run)
        elif expected == 0:
            row = await pool.fetchrow(self._sql["create_versioned"], stored, text)
        else:
            row = await pool.fetchrow(self._sql["update_versioned"], stored, text, expected)
        assert row is not None  # a SELECT of two scalar subqueries always has one row
        written, current = row
        if written is not None:
            return int(written)
        actual = 0 if current is None else int(current)
        if actual == expected:
            # The row changed while this statement waited for it; its snapshot still
            # showed the old version, so read the one that won.
            actual = int(await pool.fetchval(self._sql["version"], stored) or 0)
        raise VersionConflict(key, expected, actual)

    # -- run registry (the statements are in _postgres_runs) -----------------------------

    async def put_run(self, record: RunRecord) -> None:
        """Write the registry record of a run; an existing record's ``created`` is kept."""
        await _runs.put_run(await self._ready(), self.schema, record)

    async def get_run(self, run_id: str) -> RunRecord | None:
        """The registry record of ``run_id``, or None."""
        return await _runs.get_run(await self._ready(), self.schema, run_id)

    async def list_runs(self, query: RunQuery) -> RunPage:
        """One page of runs matching ``query``, newest first, in one indexed statement."""
        return await _runs.list_runs(await self._ready(), self.schema, query)

    async def summarize_runs(self, query: RunFilter) -> RunSummary:
        """The sums of the runs matching ``query``: one aggregate over a covering index."""
        return await _runs.summarize_runs(await self._ready(), self.schema, query)

    def __repr__(self) -> str:
        return f"PostgresStore({redact(self.dsn)!r}, schema={self.schema!r})"

