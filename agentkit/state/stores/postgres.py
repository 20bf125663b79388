"""PostgresStore: one store shared by many workers on many hosts, in PostgreSQL.

Key-value state, logs and checkpoints live in tables of one schema (``agentkit`` by
default), created on first use. The guarantees come from the server, not from us:

- ``set_versioned`` is one statement (a conditional ``UPDATE``, or an ``INSERT`` for
  version 0) that also reads the current version, so a checkpointed step costs one round
  trip and two workers racing on one version cannot both win.
- ``get_or_set`` is single-flight across processes and hosts through a session-level
  advisory lock per key: the first caller takes it, runs the factory, stores the value
  and then lets go; the others wait inside the server (no polling) and then read the
  value. A producer that dies loses its connection and with it the lock, so the next
  caller goes ahead at once, with no lease to wait out. Lock connections come from a
  pool of their own, so a factory that itself uses the store never starves them.
- Expiry is judged by the server's clock, so hosts with skewed clocks agree. Expired
  rows are invisible at once, and deleted on a later write or by :meth:`vacuum`.

Values are stored as agentkit's versioned JSON (:mod:`agentkit.state.codec`), never
pickled: a row written by anyone with access to the database is data, not code, and one
that does not decode raises :class:`CheckpointCorrupt` and is left as it is. The column
is ``text``, not ``jsonb``: the codec's output is kept byte for byte (``jsonb`` would
reorder keys and refuses the ``\u0000`` escapes a Python string may need), and the
server spends nothing parsing values it never queries into.

The driver is asyncpg (``pip install "agentkit-framework[postgres]"``), imported on
first use. Connection poolers in transaction mode (PgBouncer) break session advisory
locks: connect the store to the server or to a session-mode pooler.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from agentkit.core.contracts.errors import VersionConflict
from agentkit.state.codec import dumps, loads
from agentkit.state.stores._inflight import abandon_inflight, join_inflight

if TYPE_CHECKING:
    import asyncpg
    from asyncpg.pool import PoolConnectionProxy

    _Connection = PoolConnectionProxy[asyncpg.Record] | asyncpg.Connection[asyncpg.Record]

__all__ = ["PostgresStore"]

_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_NOW = "extract(epoch from clock_timestamp())"
_LIVE = f"(expires IS NULL OR expires > {_NOW})"
_CLEAN_EVERY = 256
"""Writes between two bounded sweeps of expired rows."""
_CLEAN_BATCH = 500

# Forward-only migrations: (version, statements). A release that changes the tables
# appends one; a database made by an older release is brought up to date on first use,
# and one made by a newer release is refused rather than misread.
MIGRATIONS: tuple[tuple[int, tuple[str, ...]], ...] = (
    (
        1,
        (
            "CREATE TABLE {s}.kv (key text PRIMARY KEY, value text NOT NULL, expires float8)",
            "CREATE INDEX kv_expires ON {s}.kv (expires) WHERE expires IS NOT NULL",
            "CREATE TABLE {s}.logs (id bigserial PRIMARY KEY, log text NOT NULL, "
            "value text NOT NULL)",
            "CREATE INDEX logs_by_name ON {s}.logs (log, id)",
            "CREATE TABLE {s}.versioned (key text PRIMARY KEY, value text NOT NULL, "
            "version bigint NOT NULL)",
            "CREATE TABLE {s}.memory_files (namespace text NOT NULL, path text NOT NULL, "
            "is_dir boolean NOT NULL, content text, size bigint NOT NULL DEFAULT 0, "
            "PRIMARY KEY (namespace, path))",
        ),
    ),
)


def _asyncpg() -> Any:
    try:
        import asyncpg
    except ImportError as error:
        raise ImportError(
            "PostgresStore needs the asyncpg driver, which is not installed: "
            'pip install "agentkit-framework[postgres]"'
        ) from error
    return asyncpg


def lock_id(*parts: str) -> int:
    """A 64-bit advisory-lock id for ``parts`` (signed, as PostgreSQL wants it)."""
    digest = hashlib.blake2b("\0".join(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


async def _no_reset(connection: asyncpg.Connection) -> None:
    # asyncpg's default reset costs a round trip per release; nothing we run leaves
    # session state behind (advisory locks are released explicitly, or the connection
    # is terminated when that is in doubt).
    return None


class PostgresStore:
    """A durable :class:`~agentkit.core.contracts.ports.Store` in PostgreSQL.

    ``dsn`` is a libpq connection string or URL
    (``postgresql://user:password@host:5432/db``). Tables go in ``schema``, which is
    created on first use together with its tables. ``pool_size`` bounds the connections
    for ordinary calls; ``get_or_set`` holds one more per key being computed, from a
    second pool of the same size. Close with ``await store.close()`` or use
    ``async with``.
    """

    def __init__(self, dsn: str, *, schema: str = "agentkit", pool_size: int = 10) -> None:
        if not isinstance(schema, str) or not _SCHEMA_NAME.fullmatch(schema):
            raise ValueError(
                f"PostgresStore(schema=...) must be a lower-case SQL identifier (letters, "
                f"digits and '_', not starting with a digit, at most 63), got {schema!r}"
            )
        if isinstance(pool_size, bool) or not isinstance(pool_size, int) or pool_size < 1:
            raise ValueError(f"PostgresStore(pool_size=...) must be a positive integer, "
                             f"got {pool_size!r}")
        _asyncpg()  # a missing driver fails here, not at the first call
        self.dsn = dsn
        self.schema = schema
        self.pool_size = pool_size
        self._pool: asyncpg.Pool | None = None
        self._locks: asyncpg.Pool | None = None
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
                self.dsn, min_size=1, max_size=self.pool_size, reset=_no_reset
            )
        except (OSError, asyncpg.PostgresError) as error:
            raise ConnectionError(
                f"{self!r} could not connect: {error}. Check that the server is up and "
                "that the connection string names its host, port, database and user"
            ) from error
        try:
            async with pool.acquire() as connection:
                await migrate(connection, self.schema)
            locks = await asyncpg.create_pool(
                self.dsn, min_size=0, max_size=self.pool_size, reset=_no_reset
            )
        except BaseException:
            await pool.close()
            raise
        self._loop = asyncio.get_running_loop()
        self._pool, self._locks = pool, locks

    async def close(self) -> None:
        """Close every connection; later calls raise a clear error."""
        self._closed = True
        pools = [p for p in (self._pool, self._locks) if p is not None]
        self._pool = self._locks = None
        for pool in pools:
            await pool.close()

    async def __aenter__(self) -> PostgresStore:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- key-value ------------------------------------------------------------------------

    async def get(self, key: str) -> Any | None:
        """The value under ``key``, or None when absent or expired."""
        pool = await self._ready()
        text = await pool.fetchval(self._sql["get"], key)
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
        await pool.execute(self._sql["set"], key, text, seconds)
        await self._after_write(pool)

    async def delete(self, key: str) -> bool:
        """Remove ``key``; True when something was there."""
        pool = await self._ready()
        return bool(await pool.fetchval(self._sql["delete"], key))

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

    @asynccontextmanager
    async def _exclusive(self, key: str) -> AsyncIterator[_Connection]:
        """A connection holding the advisory lock for ``key`` until the block ends."""
        assert self._locks is not None
        lock = lock_id(self.schema, "kv", key)
        connection = await self._locks.acquire()
        try:
            try:
                await connection.execute("SELECT pg_advisory_lock($1)", lock)
            except BaseException:
                # Cancelled or failed while waiting: whether the server granted the lock
                # is unknown, so end the session, which releases it for certain.
                connection.terminate()
                raise
            try:
                yield connection
            except Exception:
                # The factory failed: let go of the key so the next caller tries.
                try:
                    await connection.execute("SELECT pg_advisory_unlock($1)", lock)
                except BaseException:
                    connection.terminate()
                    raise
                raise
            except BaseException:
                connection.terminate()  # cancelled: end the session, which lets go
                raise
            try:
                await connection.execute("SELECT pg_advisory_unlock($1)", lock)
            except BaseException:
                connection.terminate()
                raise
        finally:
            await self._locks.release(connection)

    async def get_or_set(
        self,
        key: str,
        factory: Callable[[], Awaitable[Any]],
        *,
        ttl: float | None = None,
    ) -> tuple[Any, bool]:
        """Return ``(value, created)``; across tasks, processes and hosts one
        ``factory()`` runs per key at a time, and a factory that raises stores nothing."""
        seconds = self._check_ttl(ttl)  # refuse a bad ttl before any work starts
        while True:
            pending = self._inflight.get(key)
            if pending is not None:  # another task in this process is computing it
                joined, value = await join_inflight(pending)
                if joined:
                    return value, False
                continue
            pool = await self._ready()
            text = await pool.fetchval(self._sql["get"], key)
            if text is not None:
                return loads(text, key=key), False
            if key not in self._inflight:
                break
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            async with self._exclusive(key) as connection:
                # Read again under the lock: whoever held it before may have stored it.
                text = await connection.fetchval(self._sql["get"], key)
                if text is not None:
                    value, created = loads(text, key=key), False
                else:
                    value = await factory()
                    # Stored before the lock is released, so the next holder sees it;
                    # the ttl runs from here, not from when the work began.
                    await connection.execute(self._sql["set"], key, dumps(value), seconds)
                    created = True
        except BaseException as error:
            abandon_inflight(future, error)
            raise
        else:
            future.set_result(value)
            if created:
                await self._after_write(pool)
            return value, created
        finally:
            del self._inflight[key]

    # -- logs -----------------------------------------------------------------------------

    async def append(self, log: str, value: Any) -> None:
        """Append ``value`` to the log named ``log``."""
        text = dumps(value)
        pool = await self._ready()
        await pool.execute(self._sql["append"], log, text)

    async def list(self, log: str) -> tuple[Any, ...]:
        """Every value appended to ``log``, oldest first."""
        pool = await self._ready()
        rows = await pool.fetch(self._sql["list"], log)
        return tuple(loads(value, key=f"{log}[{row_id}]") for row_id, value in rows)

    # -- versioned ------------------------------------------------------------------------

    async def get_versioned(self, key: str) -> tuple[Any, int]:
        """``(value, version)``; ``(None, 0)`` when never written."""
        pool = await self._ready()
        row = await pool.fetchrow(self._sql["get_versioned"], key)
        if row is None:
            return None, 0
        return loads(row[0], key=key), int(row[1])

    async def get_versioned_many(self, keys: Sequence[str]) -> tuple[tuple[Any, int], ...]:
        """``get_versioned`` of each of ``keys``, in their order, in one statement."""
        if not keys:
            return ()
        pool = await self._ready()
        rows = await pool.fetch(self._sql["get_versioned_many"], list(keys))
        found = {key: (value, int(version)) for key, value, version in rows}
        return tuple(
            (loads(found[key][0], key=key), found[key][1]) if key in found else (None, 0)
            for key in keys
        )

    async def set_versioned(self, key: str, value: Any, *, expected_version: int) -> int:
        """Write ``value`` if the version is still ``expected_version``; the new version.

        One statement, one round trip: the write is conditional on the version, so the
        check and the write cannot be split by another worker.
        """
        text = dumps(value)
        pool = await self._ready()
        if expected_version == 0:
            row = await pool.fetchrow(self._sql["create_versioned"], key, text)
        else:
            row = await pool.fetchrow(self._sql["update_versioned"], key, text, expected_version)
        assert row is not None  # a SELECT of two scalar subqueries always has one row
        written, current = row
        if written is not None:
            return int(written)
        actual = 0 if current is None else int(current)
        if actual == expected_version:
            # The row changed while this statement waited for it; its snapshot still
            # showed the old version, so read the one that won.
            actual = int(await pool.fetchval(self._sql["version"], key) or 0)
        raise VersionConflict(key, expected_version, actual)

    def __repr__(self) -> str:
        return f"PostgresStore({_redact(self.dsn)!r}, schema={self.schema!r})"


def _redact(dsn: str) -> str:
    """``dsn`` without its password, for messages and reprs."""
    redacted = re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", dsn)
    return re.sub(r"(password\s*=\s*)\S+", r"\1***", redacted)


async def migrate(connection: _Connection, schema: str) -> int:
    """Bring ``schema`` to the latest table layout in one transaction; its version.

    Concurrent first uses from several processes queue on an advisory lock, so only one
    creates the tables. A schema written by a newer release is refused.
    """
    s = f'"{schema}"'
    latest = MIGRATIONS[-1][0]
    async with connection.transaction():
        await connection.execute(
            "SELECT pg_advisory_xact_lock($1)", lock_id(schema, "schema_version")
        )
        await connection.execute(f"CREATE SCHEMA IF NOT EXISTS {s}")
        await connection.execute(
            f"CREATE TABLE IF NOT EXISTS {s}.schema_version (version integer PRIMARY KEY, "
            "applied_at timestamptz NOT NULL DEFAULT now())"
        )
        current = int(
            await connection.fetchval(f"SELECT coalesce(max(version), 0) FROM {s}.schema_version")
        )
        if current > latest:
            raise RuntimeError(
                f"schema {schema!r} is at version {current}, made by a newer agentkit; this "
                f"release knows versions up to {latest}: upgrade agentkit on this worker"
            )
        for version, statements in MIGRATIONS:
            if version <= current:
                continue
            for statement in statements:
                await connection.execute(statement.format(s=s))
            await connection.execute(
                f"INSERT INTO {s}.schema_version (version) VALUES ($1)", version
            )
    return latest
