"""SQLiteFiles: the note tree in a table of a SQLite file — the agents' durable store file
or any other — shared by every process on the machine that opens it.

One row per file or directory, keyed by ``(namespace, path)``; several trees can share a
file under different namespaces. Each operation is one ``BEGIN IMMEDIATE`` transaction,
so a write is all-or-nothing and two processes never interleave inside one; an
:meth:`~SQLiteFiles.exclusive` block is one such transaction around several operations
(a limit check and the write it guards), committed when the block ends and rolled back
if it raises. Database calls run on a worker thread owned by this object, in WAL mode
with a busy timeout, the same way :class:`~agentkit.state.stores.sqlite.SQLiteStore`
works.
"""

from __future__ import annotations

import asyncio
import copy
import errno
import os
import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, TypeVar

from agentkit.state.stores.sqlite_worker import SQLiteWorker
from agentkit.tools.files._rows import entries_below, path_of
from agentkit.tools.files.paths import MemoryPath
from agentkit.tools.files.ports import FileEntry, Files, FileUsage

if TYPE_CHECKING:
    from agentkit.state.stores.sqlite import SQLiteStore

__all__ = ["SQLiteFiles"]

_T = TypeVar("_T")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS memory_files (
    namespace TEXT NOT NULL,
    path TEXT NOT NULL,
    is_dir INTEGER NOT NULL,
    content TEXT,
    size INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (namespace, path)
);
"""
# Everything at or below a path: the path itself, or a key starting with "path/".
_SUBTREE = "namespace = ? AND (path = ? OR substr(path, 1, ?) = ?)"


def _subtree(namespace: str, key: str) -> tuple[str, str, int, str]:
    return namespace, key, len(key) + 1, key + "/"


def _begin(conn: sqlite3.Connection) -> None:
    conn.execute("BEGIN IMMEDIATE")


def _commit(conn: sqlite3.Connection) -> None:
    conn.execute("COMMIT")


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        conn.execute("ROLLBACK")


class SQLiteFiles:
    """A :class:`~agentkit.tools.files.Files` backend in the ``memory_files`` table.

    ``SQLiteFiles(store)`` uses the file of a :class:`SQLiteStore` (the agents' durable
    store); ``SQLiteFiles("state.db")`` opens or creates a file. Call :meth:`close` (or
    use ``async with``) when done.
    """

    def __init__(
        self,
        store: SQLiteStore | str | os.PathLike[str],
        *,
        namespace: str = "default",
        busy_timeout: float = 30.0,
    ) -> None:
        self.path = os.fspath(store if isinstance(store, str | os.PathLike) else store.path)
        self.namespace = namespace
        self._worker = SQLiteWorker(
            self.path, schema=_SCHEMA, owner="SQLiteFiles", busy_timeout=busy_timeout
        )
        # Set on the view an exclusive() block works through: [True] while the block runs.
        self._span: list[bool] | None = None
        self._lock: asyncio.Lock | None = None
        self._lock_loop: asyncio.AbstractEventLoop | None = None

    def _serial(self) -> asyncio.Lock:
        """The lock that keeps this object's one connection out of an open block's
        transaction: operations wait while an exclusive() block runs."""
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock_loop is not loop:
            self._lock, self._lock_loop = asyncio.Lock(), loop
        return self._lock

    async def _transaction(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        if self._span is not None:
            if not self._span[0]:
                raise RuntimeError(
                    f"{self!r} was used after its exclusive() block ended; use the object "
                    "exclusive() was called on instead"
                )
            return await self._worker.run(fn)  # inside the block's transaction
        async with self._serial():
            return await self._worker.transaction(fn)

    @asynccontextmanager
    async def exclusive(self) -> AsyncIterator[Files]:
        """One ``BEGIN IMMEDIATE`` transaction for the block: no other writer of the file
        (object, thread or process) writes until it ends; committed when the block
        ends, rolled back if it raises."""
        if self._span is not None:
            raise RuntimeError("SQLiteFiles.exclusive() blocks do not nest")
        async with self._serial():
            span = copy.copy(self)
            span._span = [True]
            try:
                await self._worker.run(_begin)
                yield span
                await self._worker.run(_commit)
            except BaseException:
                # The worker runs calls in order, so this comes after any still running.
                await self._worker.run(_rollback)
                raise
            finally:
                span._span[0] = False

    def close(self) -> None:
        """Close the connection and stop the worker thread."""
        if self._span is None:  # a block's view shares its owner's connection
            self._worker.close()

    async def __aenter__(self) -> SQLiteFiles:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    # -- rows --------------------------------------------------------------------------

    def _kind(self, conn: sqlite3.Connection, path: MemoryPath) -> str | None:
        if path.is_root:
            return "directory"
        row = conn.execute(
            "SELECT is_dir FROM memory_files WHERE namespace = ? AND path = ?",
            (self.namespace, path.key),
        ).fetchone()
        if row is None:
            return None
        return "directory" if row[0] else "file"

    def _rows(self, conn: sqlite3.Connection, path: MemoryPath) -> list[tuple[str, int, int]]:
        if path.is_root:
            return conn.execute(
                "SELECT path, is_dir, size FROM memory_files WHERE namespace = ?",
                (self.namespace,),
            ).fetchall()
        return conn.execute(
            f"SELECT path, is_dir, size FROM memory_files WHERE {_SUBTREE}",
            _subtree(self.namespace, path.key),
        ).fetchall()

    def _make_parents(self, conn: sqlite3.Connection, path: MemoryPath) -> None:
        for depth in range(1, len(path.parts)):
            parent = MemoryPath(path.parts[:depth])
            kind = self._kind(conn, parent)
            if kind == "file":
                raise NotADirectoryError(errno.ENOTDIR, "Not a directory", str(parent))
            if kind is None:
                conn.execute(
                    "INSERT INTO memory_files (namespace, path, is_dir) VALUES (?, ?, 1)",
                    (self.namespace, parent.key),
                )

    # -- the Files protocol --------------------------------------------------------------

    async def stat(self, path: MemoryPath) -> FileEntry | None:
        """The entry at ``path``, or None."""

        def stat(conn: sqlite3.Connection) -> FileEntry | None:
            kind = self._kind(conn, path)
            if kind is None:
                return None
            size = sum(size for _, is_dir, size in self._rows(conn, path) if not is_dir)
            return FileEntry(path, "file" if kind == "file" else "directory", size)

        return await self._transaction(stat)

    async def listing(self, path: MemoryPath, depth: int | None) -> tuple[FileEntry, ...]:
        """Entries below ``path``, depth-first, names sorted."""

        def listing(conn: sqlite3.Connection) -> tuple[FileEntry, ...]:
            kind = self._kind(conn, path)
            if kind is None:
                raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(path))
            if kind == "file":
                raise NotADirectoryError(errno.ENOTDIR, "Not a directory", str(path))
            rows = [(path_of(key), bool(d), size) for key, d, size in self._rows(conn, path)]
            return entries_below(path, rows, depth)

        return await self._transaction(listing)

    async def read(self, path: MemoryPath) -> str:
        """The text of the file at ``path``."""

        def read(conn: sqlite3.Connection) -> str:
            if path.is_root:
                raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
            row = conn.execute(
                "SELECT is_dir, content FROM memory_files WHERE namespace = ? AND path = ?",
                (self.namespace, path.key),
            ).fetchone()
            if row is None:
                raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(path))
            if row[0]:
                raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
            return str(row[1])

        return await self._transaction(read)

    async def write(self, path: MemoryPath, text: str, *, exclusive: bool = False) -> None:
        """Store ``text`` at ``path`` in one transaction."""
        size = len(text.encode("utf-8"))

        def write(conn: sqlite3.Connection) -> None:
            kind = self._kind(conn, path)
            if kind is not None and exclusive:
                raise FileExistsError(errno.EEXIST, "File exists", str(path))
            if kind == "directory":
                raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
            self._make_parents(conn, path)
            conn.execute(
                "INSERT OR REPLACE INTO memory_files (namespace, path, is_dir, content, size) "
                "VALUES (?, ?, 0, ?, ?)",
                (self.namespace, path.key, text, size),
            )

        await self._transaction(write)

    async def delete(self, path: MemoryPath) -> None:
        """Remove ``path`` and everything below it."""

        def delete(conn: sqlite3.Connection) -> None:
            if path.is_root or self._kind(conn, path) is None:
                raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(path))
            conn.execute(
                f"DELETE FROM memory_files WHERE {_SUBTREE}", _subtree(self.namespace, path.key)
            )

        await self._transaction(delete)

    async def rename(self, old: MemoryPath, new: MemoryPath) -> None:
        """Move ``old`` and everything below it to ``new``."""

        def rename(conn: sqlite3.Connection) -> None:
            if old.is_root or self._kind(conn, old) is None:
                raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(old))
            if self._kind(conn, new) is not None:
                raise FileExistsError(errno.EEXIST, "File exists", str(new))
            self._make_parents(conn, new)
            conn.execute(
                f"UPDATE memory_files SET path = ? || substr(path, ?) WHERE {_SUBTREE}",
                (new.key, len(old.key) + 1, *_subtree(self.namespace, old.key)),
            )

        await self._transaction(rename)

    async def usage(self) -> FileUsage:
        """Files held and their total size."""

        def usage(conn: sqlite3.Connection) -> FileUsage:
            count, total = conn.execute(
                "SELECT count(*), coalesce(sum(size), 0) FROM memory_files "
                "WHERE namespace = ? AND is_dir = 0",
                (self.namespace,),
            ).fetchone()
            return FileUsage(int(count), int(total))

        return await self._transaction(usage)

    def __repr__(self) -> str:
        return f"SQLiteFiles({self.path!r}, namespace={self.namespace!r})"
