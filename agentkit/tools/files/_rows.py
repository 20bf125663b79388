"""What the database backends (SQLite, PostgreSQL) share: a tree kept as rows, one per
file or directory, keyed by the path's parts joined with ``/``."""

from __future__ import annotations

from collections.abc import Iterable

from agentkit.tools.files.paths import MemoryPath
from agentkit.tools.files.ports import FileEntry

__all__ = ["entries_below", "path_of"]


def path_of(key: str) -> MemoryPath:
    """The path a row's key names (``""`` is the root)."""
    return MemoryPath(tuple(key.split("/")) if key else ())


def entries_below(
    path: MemoryPath, rows: Iterable[tuple[MemoryPath, bool, int]], depth: int | None
) -> tuple[FileEntry, ...]:
    """The listing of directory ``path`` from its rows ``(path, is_dir, size)`` (the
    directory's own row included), at most ``depth`` levels down; a directory's size is
    the bytes of every file below it."""
    rows = list(rows)
    totals: dict[MemoryPath, int] = {}
    for p, is_dir, size in rows:
        if not is_dir:
            for cut in range(len(path.parts), len(p.parts)):
                parent = MemoryPath(p.parts[:cut])
                totals[parent] = totals.get(parent, 0) + size
    return tuple(
        FileEntry(p, "directory" if is_dir else "file", totals.get(p, 0) if is_dir else n)
        for p, is_dir, n in sorted(rows)
        if p != path and (depth is None or len(p.parts) - len(path.parts) <= depth)
    )
