"""Session-wide fixtures: one real PostgreSQL server for every test that asks for it.

The server starts on first request (tests that never touch Postgres never pay for it)
and stops when the session ends. With ``AGENTKIT_TEST_POSTGRES_DSN`` set, that server
is used instead; each test then works in a schema of its own, dropped at the end.
"""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import postgres_server
from node_tools import NodeTools, install

DSN_VARIABLE = "AGENTKIT_TEST_POSTGRES_DSN"


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """A DSN of a running PostgreSQL server for this session."""
    given = os.environ.get(DSN_VARIABLE)
    if given:
        yield given
        return
    server = postgres_server.start()
    try:
        yield server.dsn
    finally:
        server.stop()


@pytest.fixture(scope="session")
def _schemas_made(postgres_dsn: str) -> Iterator[list[str]]:
    made: list[str] = []
    yield made
    if made and os.environ.get(DSN_VARIABLE):
        asyncio.run(_drop(postgres_dsn, made))


async def _drop(dsn: str, schemas: list[str]) -> None:
    import asyncpg

    connection = await asyncpg.connect(dsn)
    try:
        for schema in schemas:
            await connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await connection.close()


@pytest.fixture
def postgres_schema(_schemas_made: list[str]) -> str:
    """A schema name no other test uses (so tests never see each other's rows)."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    _schemas_made.append(name)
    return name


@pytest.fixture(scope="session")
def postgres_shared_schema(_schemas_made: list[str]) -> str:
    """One schema for tests that isolate themselves another way (a namespace)."""
    name = f"t_shared_{uuid.uuid4().hex[:12]}"
    _schemas_made.append(name)
    return name


@pytest.fixture(scope="session")
def temporal_address() -> Iterator[str]:
    """The address of a Temporal dev server for this session, started on first use."""
    from temporal_server import DevServer

    server = DevServer()
    try:
        yield server.address
    finally:
        server.stop()


@pytest.fixture(scope="session")
def node_tools() -> NodeTools:
    """The npm packages pinned in ``tests/node`` (tests/node_tools.py), installed once."""
    return install()
