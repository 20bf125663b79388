"""PostgresFiles: the note tree in a PostgreSQL table, shared by workers on many hosts.

One row per file or directory in ``memory_files``, keyed by ``(namespace, path)``, in the
schema of a :class:`~agentkit.state.stores.postgres.PostgresStore` (whose migrations
create the table). Every operation is one transaction. An :meth:`~PostgresFiles.exclusive`
block is one transaction on one connection that first takes a transaction-scoped
advisory lock on the namespace: on any number of hosts, one block of a tree runs at a
time, so FileTool's limit check and the write it guards see the tree as it is and
concurrent writers cannot take it past a limit. The lock goes with the transaction —
committed, rolled back, or ended by the server when a worker dies. Single writes outside
a block take the same lock; reads take none and each sees one consistent snapshot.
"""

from __future__ import annotations

import copy
import errno
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from agentkit.tools.files._rows import entries_below, path_of
from agentkit.tools.files.paths import MemoryPath
from agentkit.tools.files.ports import FileEntry, Files, FileUsage

if TYPE_CHECKING:
    from agentkit.state.stores.postgres import PostgresStore

__all__ = ["PostgresFiles"]

_T = TypeVar("_T")

_AT_PATH = "md5(path) = md5($2) AND path = $2"
"""The row at path ``$2``, found through the ``(namespace, md5(path))`` index: a deep
path can pass the 2,704 bytes a B-tree entry may hold, its digest cannot."""


class PostgresFiles:
    """A :class:`~agentkit.tools.files.Files` backend in PostgreSQL.

    ``PostgresFiles(store)`` shares the connections of a :class:`PostgresStore` (the
    agents' store); ``PostgresFiles("postgresql://...")`` opens its own. Several trees
    share the table under different namespaces. Close with ``await files.close()`` or
    ``async with``; a store passed in is left open.
    """

    def __init__(
        self,
        store_or_dsn: PostgresStore | str,
        *,
        namespace: str = "default",
        schema: str = "agentkit",
    ) -> None:
        from agentkit.state.stores.postgres import PostgresStore

        if isinstance(store_or_dsn, PostgresStore):
            self._store, self._owned = store_or_dsn, False
        elif isinstance(store_or_dsn, str):
            self._store, self._owned = PostgresStore(store_or_dsn, schema=schema), True
        else:
            raise TypeError(
                "PostgresFiles(...) takes a PostgresStore or a connection string, got "
                f"{store_or_dsn!r}"
            )
        if not isinstance(namespace, str) or not namespace:
            raise ValueError(f"PostgresFiles(namespace=...) must be a non-empty string, "
                             f"got {namespace!r}")
        self.namespace = namespace
        # On the view an exclusive() block works through: its connection, and [True]
        # while the block runs.
        self._connection: Any = None
        self._span: list[bool] | None = None
        self._table = f'"{self._store.schema}".memory_files'
        from agentkit.state.stores.postgres import lock_id

        self._lock = lock_id(self._store.schema, "memory_files", namespace)

    async def close(self) -> None:
        """Close the connections, unless they belong to a store passed in."""
        if self._owned and self._span is None:  # a block's view shares its owner's
            await self._store.close()

    async def __aenter__(self) -> PostgresFiles:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- transactions ------------------------------------------------------------------

    @asynccontextmanager
    async def exclusive(self) -> AsyncIterator[Files]:
        """One transaction holding the namespace's write lock for the block: no other
        writer of the tree (object, process or host) writes until it ends; committed
        when the block ends, rolled back if it raises."""
        if self._span is not None:
            raise RuntimeError("PostgresFiles.exclusive() blocks do not nest")
        pool = await self._store.connections()
        async with pool.acquire() as connection, connection.transaction():
            await connection.execute("SELECT pg_advisory_xact_lock($1)", self._lock)
            span = copy.copy(self)
            span._connection, span._span = connection, [True]
            try:
                yield span
            finally:
                span._span[0] = False

    def _in_span(self) -> Any:
        if self._span is None:
            return None
        if not self._span[0]:
            raise RuntimeError(
                f"{self!r} was used after its exclusive() block ended; use the object "
                "exclusive() was called on instead"
            )
        return self._connection

    async def _read(self, fn: Callable[[Any], Awaitable[_T]]) -> _T:
        connection = self._in_span()
        if connection is not None:
            return await fn(connection)
        pool = await self._store.connections()
        async with pool.acquire() as connection, connection.transaction(
            isolation="repeatable_read", readonly=True
        ):
            return await fn(connection)

    async def _write(self, fn: Callable[[Any], Awaitable[_T]]) -> _T:
        connection = self._in_span()
        if connection is not None:
            return await fn(connection)
        pool = await self._store.connections()
        async with pool.acquire() as connection, connection.transaction():
            await connection.execute("SELECT pg_advisory_xact_lock($1)", self._lock)
            return await fn(connection)

    # -- rows ----------------------------------------------------------------------------

    async def _kind(self, c: Any, path: MemoryPath) -> str | None:
        if path.is_root:
            return "directory"
        is_dir = await c.fetchval(
            f"SELECT is_dir FROM {self._table} WHERE namespace = $1 AND {_AT_PATH}",
            self.namespace, path.key,
        )
        if is_dir is None:
            return None
        return "directory" if is_dir else "file"

    async def _rows(self, c: Any, path: MemoryPath) -> list[tuple[str, bool, int]]:
        if path.is_root:
            rows = await c.fetch(
                f"SELECT path, is_dir, size FROM {self._table} WHERE namespace = $1",
                self.namespace,
            )
        else:
            rows = await c.fetch(
                f"SELECT path, is_dir, size FROM {self._table} WHERE namespace = $1 "
                "AND (path = $2 OR starts_with(path, $2 || '/'))",
                self.namespace, path.key,
            )
        return [(r[0], r[1], int(r[2])) for r in rows]

    async def _make_parents(self, c: Any, path: MemoryPath) -> None:
        for depth in range(1, len(path.parts)):
            parent = MemoryPath(path.parts[:depth])
            kind = await self._kind(c, parent)
            if kind == "file":
                raise NotADirectoryError(errno.ENOTDIR, "Not a directory", str(parent))
            if kind is None:
                await c.execute(
                    f"INSERT INTO {self._table} (namespace, path, is_dir) VALUES ($1, $2, true)",
                    self.namespace, parent.key,
                )

    async def _usage(self, c: Any) -> FileUsage:
        count, total = await c.fetchrow(
            f"SELECT count(*), coalesce(sum(size), 0) FROM {self._table} "
            "WHERE namespace = $1 AND NOT is_dir",
            self.namespace,
        )
        return FileUsage(int(count), int(total))

    # -- the Files protocol --------------------------------------------------------------

    async def stat(self, path: MemoryPath) -> FileEntry | None:
        """The entry at ``path``, or None."""

        async def stat(c: Any) -> FileEntry | None:
            kind = await self._kind(c, path)
            if kind is None:
                return None
            size = sum(size for _, is_dir, size in await self._rows(c, path) if not is_dir)
            return FileEntry(path, "file" if kind == "file" else "directory", size)

        return await self._read(stat)

    async def listing(self, path: MemoryPath, depth: int | None) -> tuple[FileEntry, ...]:
        """Entries below ``path``, depth-first, names sorted."""

        async def listing(c: Any) -> tuple[FileEntry, ...]:
            kind = await self._kind(c, path)
            if kind is None:
                raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(path))
            if kind == "file":
                raise NotADirectoryError(errno.ENOTDIR, "Not a directory", str(path))
            rows = [(path_of(key), d, size) for key, d, size in await self._rows(c, path)]
            return entries_below(path, rows, depth)

        return await self._read(listing)

    async def read(self, path: MemoryPath) -> str:
        """The text of the file at ``path``."""

        async def read(c: Any) -> str:
            if path.is_root:
                raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
            row = await c.fetchrow(
                f"SELECT is_dir, content FROM {self._table} WHERE namespace = $1 "
                f"AND {_AT_PATH}",
                self.namespace, path.key,
            )
            if row is None:
                raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(path))
            if row[0]:
                raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
            return bytes(row[1]).decode("utf-8")

        return await self._read(read)

    async def write(self, path: MemoryPath, text: str, *, exclusive: bool = False) -> None:
        """Store ``text`` at ``path`` in one transaction."""
        encoded = text.encode("utf-8")
        size = len(encoded)

        async def write(c: Any) -> None:
            kind = await self._kind(c, path)
            if kind is not None and exclusive:
                raise FileExistsError(errno.EEXIST, "File exists", str(path))
            if kind == "directory":
                raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
            await self._make_parents(c, path)
            await c.execute(
                f"INSERT INTO {self._table} (namespace, path, is_dir, content, size) "
                "VALUES ($1, $2, false, $3, $4) ON CONFLICT (namespace, md5(path)) DO UPDATE "
                "SET is_dir = false, content = EXCLUDED.content, size = EXCLUDED.size",
                self.namespace, path.key, encoded, size,
            )

        await self._write(write)

    async def delete(self, path: MemoryPath) -> None:
        """Remove ``path`` and everything below it."""

        async def delete(c: Any) -> None:
            if path.is_root or await self._kind(c, path) is None:
                raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(path))
            await c.execute(
                f"DELETE FROM {self._table} WHERE namespace = $1 "
                "AND (path = $2 OR starts_with(path, $2 || '/'))",
                self.namespace, path.key,
            )

        await self._write(delete)

    async def rename(self, old: MemoryPath, new: MemoryPath) -> None:
        """Move ``old`` and everything below it to ``new``."""

        async def rename(c: Any) -> None:
            if old.is_root or await self._kind(c, old) is None:
                raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(old))
            if await self._kind(c, new) is not None:
                raise FileExistsError(errno.EEXIST, "File exists", str(new))
            await self._make_parents(c, new)
            await c.execute(
                f"UPDATE {self._table} SET path = $3 || substr(path, $4) WHERE namespace = $1 "
                "AND (path = $2 OR starts_with(path, $2 || '/'))",
                self.namespace, old.key, new.key, len(old.key) + 1,
            )

        await self._write(rename)

    async def usage(self) -> FileUsage:
        """Files held and their total size."""
        return await self._read(self._usage)

    def __repr__(self) -> str:
        return f"PostgresFiles({self._store!r}, namespace={self.namespace!r})"
