"""The table layout of a PostgreSQL store's schema, brought forward by migrations."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentkit.state.stores._postgres_text import lock_id

if TYPE_CHECKING:
    import asyncpg
    from asyncpg.pool import PoolConnectionProxy

    _Connection = PoolConnectionProxy[asyncpg.Record] | asyncpg.Connection[asyncpg.Record]

__all__ = ["Migrations", "migrate"]

Migrations = tuple[tuple[int, tuple[str, ...]], ...]
"""Forward-only migrations: (version, statements), ``{s}`` standing for the schema."""


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
