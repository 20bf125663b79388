"""SQLiteFiles: the note tree in its own table of the agents' SQLite file."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from agentkit.state.stores.sqlite import SQLiteStore
from agentkit.tools import FileTool, SQLiteFiles
from agentkit.tools.files import ROOT, FileEntry, FileUsage, parse_path


async def test_it_shares_the_file_of_a_sqlite_store(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    store = SQLiteStore(db)
    files = SQLiteFiles(store)
    try:
        await store.set("k", "v")
        await FileTool(files).run(
            {"command": "create", "path": "/memories/n.md", "file_text": "note"}, None
        )

        assert files.path == store.path
        assert await store.get("k") == "v"
        assert await files.read(parse_path("/memories/n.md")) == "note"
    finally:
        files.close()
        store.close()
    tables = {row[0] for row in sqlite3.connect(db).execute("SELECT name FROM sqlite_master")}
    assert {"kv", "memory_files"} <= tables


async def test_notes_outlive_the_object_and_namespaces_keep_trees_apart(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    async with SQLiteFiles(db, namespace="alice") as alice:
        await alice.write(parse_path("/memories/a/n.md"), "alice's")

    async with SQLiteFiles(db, namespace="alice") as again, SQLiteFiles(db) as other:
        assert await again.listing(ROOT, None) == (
            FileEntry(parse_path("/memories/a"), "directory", 7),
            FileEntry(parse_path("/memories/a/n.md"), "file", 7),
        )
        assert await other.listing(ROOT, None) == ()
        assert repr(other) == f"SQLiteFiles({str(db)!r}, namespace='default')"


async def test_rename_and_delete_touch_only_the_subtree(tmp_path: Path) -> None:
    async with SQLiteFiles(tmp_path / "s.db") as files:
        for raw in ("/memories/a/x.md", "/memories/ab/y.md", "/memories/a_b.md"):
            await files.write(parse_path(raw), "t")

        await files.rename(parse_path("/memories/a"), parse_path("/memories/z"))
        await files.delete(parse_path("/memories/ab"))

        assert [str(e.path) for e in await files.listing(ROOT, None)] == [
            "/memories/a_b.md", "/memories/z", "/memories/z/x.md",
        ]


async def test_a_closed_backend_refuses_work(tmp_path: Path) -> None:
    files = SQLiteFiles(tmp_path / "s.db")
    files.close()
    files.close()

    with pytest.raises(RuntimeError, match="is closed"):
        await files.usage()


async def test_an_exclusive_block_is_one_transaction(tmp_path: Path) -> None:
    """Committed when the block ends, rolled back when it raises; other calls on the
    same object wait for the block instead of joining its transaction."""
    async with SQLiteFiles(tmp_path / "s.db") as files:
        with pytest.raises(RuntimeError, match="boom"):
            async with files.exclusive() as tx:
                await tx.write(parse_path("/memories/a/n.md"), "lost")
                raise RuntimeError("boom")
        assert await files.listing(ROOT, None) == ()

        async with files.exclusive() as tx:
            await tx.write(parse_path("/memories/k.md"), "kept")
            waiting = asyncio.ensure_future(files.usage())  # would fail inside the block
        assert await waiting == FileUsage(1, 4)

        with pytest.raises(RuntimeError) as caught:
            await tx.usage()
        assert str(caught.value) == (
            f"{files!r} was used after its exclusive() block ended; use the object "
            "exclusive() was called on instead"
        )
