"""Every FileTool behaviour is checked on every backend: the ``files`` fixture is each
of InMemoryFiles, LocalFiles (in a temporary directory) and SQLiteFiles in turn."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentkit.tools import Files, InMemoryFiles, LocalFiles, SQLiteFiles

BACKENDS = ["memory", "local", "sqlite"]


def make_files(kind: str, tmp_path: Path) -> Files:
    if kind == "memory":
        return InMemoryFiles()
    if kind == "local":
        return LocalFiles(tmp_path / "memories")
    return SQLiteFiles(tmp_path / "state.db")


@pytest.fixture(params=BACKENDS)
def files(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Files]:
    backend = make_files(request.param, tmp_path)
    yield backend
    if isinstance(backend, SQLiteFiles):
        backend.close()
