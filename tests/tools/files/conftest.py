"""Every FileTool behaviour is checked on every backend: the ``files`` fixture is each
of InMemoryFiles, LocalFiles (in a temporary directory), SQLiteFiles and PostgresFiles
(on the session's real server) in turn."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentkit.tools import Files, InMemoryFiles, LocalFiles, PostgresFiles, SQLiteFiles

BACKENDS = ["memory", "local", "sqlite", "postgres"]


def make_files(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest | None = None
) -> Files:
    """A backend over the test's tree: two calls in one test give two objects over the
    same tree. ``request`` is needed for ``postgres`` (the session's server)."""
    if kind == "memory":
        return InMemoryFiles()
    if kind == "local":
        return LocalFiles(tmp_path / "memories")
    if kind == "postgres":
        assert request is not None, "make_files('postgres', ...) needs the fixture request"
        # One schema for the session (its tables are made once), a namespace per test.
        return PostgresFiles(
            request.getfixturevalue("postgres_dsn"),
            schema=request.getfixturevalue("postgres_shared_schema"),
            namespace=tmp_path.name,
        )
    return SQLiteFiles(tmp_path / "state.db")


@pytest.fixture(params=BACKENDS)
async def files(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Files]:
    backend = make_files(request.param, tmp_path, request)
    yield backend
    if isinstance(backend, SQLiteFiles):
        backend.close()
    elif isinstance(backend, PostgresFiles):
        await backend.close()
