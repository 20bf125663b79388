"""InMemoryFiles: the note tree in a dict, FileTool's default backend."""

from __future__ import annotations

import asyncio
import errno
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager

from agentkit.tools.files.paths import ROOT, MemoryPath, parse_path
from agentkit.tools.files.ports import FileEntry, Files, FileUsage

__all__ = ["InMemoryFiles"]


def _missing(path: MemoryPath) -> FileNotFoundError:
    return FileNotFoundError(errno.ENOENT, "No such file or directory", str(path))


class InMemoryFiles:
    """A process-local note tree, gone when the process ends.

    ``InMemoryFiles({"/memories/prefs.md": "Prefers tea."})`` starts with those files.
    Every method completes without awaiting anything, so each is atomic on the event loop;
    :meth:`exclusive` is an :class:`asyncio.Lock`, for the span of a whole command. Use
    one from one event loop at a time.
    """

    __slots__ = ("_dirs", "_files", "_lock", "_lock_loop", "_sizes")

    def __init__(self, files: Mapping[str, str] | None = None) -> None:
        self._files: dict[MemoryPath, str] = {}
        self._sizes: dict[MemoryPath, int] = {}
        self._dirs: set[MemoryPath] = {ROOT}
        self._lock: asyncio.Lock | None = None
        self._lock_loop: asyncio.AbstractEventLoop | None = None
        for raw, text in (files or {}).items():
            self._put(parse_path(raw), text, exclusive=True)

    @asynccontextmanager
    async def exclusive(self) -> AsyncIterator[Files]:
        """Hold this tree's lock for the block; blocks on this object run one at a time."""
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock_loop is not loop:
            self._lock, self._lock_loop = asyncio.Lock(), loop
        async with self._lock:
            yield self

    def _kind(self, path: MemoryPath) -> str | None:
        if path in self._files:
            return "file"
        return "directory" if path in self._dirs else None

    def _totals(self, path: MemoryPath) -> dict[MemoryPath, int]:
        """Bytes of every file at or below ``path``, and of every directory there."""
        totals: dict[MemoryPath, int] = {}
        for p, size in self._sizes.items():
            if p.is_within(path):
                totals[p] = size
                for cut in range(len(path.parts), len(p.parts)):
                    parent = MemoryPath(p.parts[:cut])
                    totals[parent] = totals.get(parent, 0) + size
        return totals

    def _make_parents(self, path: MemoryPath) -> None:
        parents = [MemoryPath(path.parts[:i]) for i in range(1, len(path.parts))]
        for parent in parents:
            if parent in self._files:
                raise NotADirectoryError(errno.ENOTDIR, "Not a directory", str(parent))
        self._dirs.update(parents)

    def _put(self, path: MemoryPath, text: str, *, exclusive: bool) -> None:
        kind = self._kind(path)
        if kind == "directory":
            if exclusive:
                raise FileExistsError(errno.EEXIST, "File exists", str(path))
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
        if kind == "file" and exclusive:
            raise FileExistsError(errno.EEXIST, "File exists", str(path))
        self._make_parents(path)
        self._files[path] = text
        self._sizes[path] = len(text.encode("utf-8"))

    async def stat(self, path: MemoryPath) -> FileEntry | None:
        """The entry at ``path``, or None."""
        kind = self._kind(path)
        if kind is None:
            return None
        size = self._totals(path).get(path, 0)
        return FileEntry(path, "file" if kind == "file" else "directory", size)

    async def listing(self, path: MemoryPath, depth: int | None) -> tuple[FileEntry, ...]:
        """Entries below ``path``, depth-first, names sorted."""
        kind = self._kind(path)
        if kind is None:
            raise _missing(path)
        if kind == "file":
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", str(path))
        totals = self._totals(path)
        below = sorted(
            p for p in (*self._files, *self._dirs)
            if p != path and p.is_within(path)
            and (depth is None or len(p.parts) - len(path.parts) <= depth)
        )
        return tuple(
            FileEntry(p, "file" if p in self._files else "directory", totals.get(p, 0))
            for p in below
        )

    async def read(self, path: MemoryPath) -> str:
        """The text at ``path``."""
        if path in self._files:
            return self._files[path]
        if path in self._dirs:
            raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
        raise _missing(path)

    async def write(self, path: MemoryPath, text: str, *, exclusive: bool = False) -> None:
        """Store ``text`` at ``path``."""
        self._put(path, text, exclusive=exclusive)

    async def delete(self, path: MemoryPath) -> None:
        """Remove ``path`` and everything below it."""
        if self._kind(path) is None:
            raise _missing(path)
        self._files = {p: t for p, t in self._files.items() if not p.is_within(path)}
        self._sizes = {p: n for p, n in self._sizes.items() if not p.is_within(path)}
        self._dirs = {p for p in self._dirs if p.is_root or not p.is_within(path)}

    async def rename(self, old: MemoryPath, new: MemoryPath) -> None:
        """Move ``old`` and everything below it to ``new``."""
        if self._kind(old) is None:
            raise _missing(old)
        if self._kind(new) is not None:
            raise FileExistsError(errno.EEXIST, "File exists", str(new))
        self._make_parents(new)

        def moved(p: MemoryPath) -> MemoryPath:
            return MemoryPath(new.parts + p.parts[len(old.parts):]) if p.is_within(old) else p

        self._files = {moved(p): t for p, t in self._files.items()}
        self._sizes = {moved(p): n for p, n in self._sizes.items()}
        self._dirs = {moved(p) for p in self._dirs}

    async def usage(self) -> FileUsage:
        """Files held and their total size."""
        return FileUsage(len(self._files), sum(self._sizes.values()))

    def __repr__(self) -> str:
        return f"InMemoryFiles({len(self._files)} files)"
