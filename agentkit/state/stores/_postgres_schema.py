"""The table layout of a PostgreSQL store's schema, brought forward by migrations."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentkit.state.stores._postgres_runs import RUNS_MIGRATION, TOTALS_MIGRATION
from agentkit.state.stores._postgres_text import lock_id

if TYPE_CHECKING:
    import asyncpg
    from asyncpg.pool import PoolConnectionProxy

    _Connection = PoolConnectionProxy[asyncpg.Record] | asyncpg.Connection[asyncpg.Record]

__all__ = ["MIGRATIONS", "Migrations", "migrate"]

Migrations = tuple[tuple[int, tuple[str, ...]], ...]
"""Forward-only migrations: (version, statements), ``{s}`` standing for the schema."""

# Forward-only migrations: (version, statements). A release that changes the tables
# appends one; a database made by an older release is brought up to date on first use,
# and one made by a newer release is refused rather than misread.
MIGRATIONS: Migrations = (
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
    (
        2,
        (
            "CREATE TABLE {s}.claims (key text PRIMARY KEY, owner text NOT NULL, "
            "lease float8 NOT NULL)",
            # Notes may hold NUL, which text refuses, and paths may pass the 2,704-byte
            # index entry limit, which their digest does not.
            "ALTER TABLE {s}.memory_files ALTER COLUMN content TYPE bytea "
            "USING convert_to(content, 'UTF8')",
            "ALTER TABLE {s}.memory_files DROP CONSTRAINT memory_files_pkey",
            "CREATE UNIQUE INDEX memory_files_by_path ON {s}.memory_files "
            "(namespace, md5(path))",
        ),
    ),
    (3, RUNS_MIGRATION),
    (4, TOTALS_MIGRATION),
)


async def migrate(connection: _Connection, schema: str, migrations: Migrations) -> int:
    """Bring ``schema`` to the latest table layout of ``migrations`` in one transaction;
    its version.

    Concurrent first uses from several processes queue on an advisory lock, so only one
    creates the tables. A schema written by a newer release is refused.
    """
    s = f'"{schema}"'
    latest = migrations[-1][0]
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
        for version, statements in migrations:
            if version <= current:
                continue
            for statement in statements:
                await connection.execute(statement.format(s=s))
            await connection.execute(
                f"INSERT INTO {s}.schema_version (version) VALUES ($1)", version
            )
    return latest
