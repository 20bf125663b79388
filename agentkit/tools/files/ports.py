"""The Files seam: where FileTool keeps its note tree.

A backend stores text files and directories under ``/memories`` and nothing else: the
six commands, their wording, the limits and the path rules all live above it
(:mod:`agentkit.tools.files.commands`, :mod:`agentkit.tools.files.paths`), so every
backend behaves the same to the model.

Limits hold because every command that writes runs inside one :meth:`Files.exclusive`
span: the limit check (which counts the whole tree with :meth:`Files.usage`, or measures
a moved subtree with :meth:`Files.listing`) and the write it guards happen under one
lock that no other writer of the same tree — another object, thread or process — can
hold at the same time.

Backends report ordinary conditions with the builtin exceptions a file system would
raise — :class:`FileNotFoundError`, :class:`FileExistsError`, :class:`IsADirectoryError`,
:class:`NotADirectoryError` (``filename`` set to the memory path concerned) — and a path
they will not touch (a symbolic link, a file with other hard links) with
:class:`~agentkit.tools.files.errors.PathRefused`.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from agentkit.tools.files.paths import MemoryPath

__all__ = ["FileEntry", "FileKind", "FileUsage", "Files"]

FileKind = Literal["file", "directory"]


@dataclass(frozen=True, slots=True)
class FileEntry:
    """One file or directory in the tree."""

    path: MemoryPath
    """Where it is."""
    kind: FileKind
    """``file`` or ``directory``."""
    size: int
    """Bytes of UTF-8 text for a file; for a directory, the bytes of every file below it."""


@dataclass(frozen=True, slots=True)
class FileUsage:
    """How much the whole tree holds, for the limits."""

    files: int
    """Number of files (directories are not counted)."""
    bytes: int
    """Total size of every file."""


@runtime_checkable
class Files(Protocol):
    """A note tree: text files in directories, all below ``/memories``.

    Writes are atomic: a reader (or a crash) sees the old text or the new, never a mix.
    Hidden names (starting with ``.``) are never listed or counted. ``listing`` and
    ``usage`` see every file, however deep it lies.
    """

    def exclusive(self) -> AbstractAsyncContextManager[Files]:
        """The tree's write lock, held for the ``async with`` block, which gets a
        :class:`Files` to work through.

        While one block holds it, no other ``exclusive()`` block on the same tree runs —
        whether it was entered through this object, another object over the same
        storage, or another process. Operations outside any block are not held back
        (except where a backend must, to keep its own connection consistent). Blocks do
        not nest. A backend that can (SQL) makes the block one transaction, rolled back
        when the block raises.
        """
        ...

    async def stat(self, path: MemoryPath) -> FileEntry | None:
        """The entry at ``path``, or None when nothing is there."""
        ...

    async def listing(self, path: MemoryPath, depth: int | None) -> tuple[FileEntry, ...]:
        """Entries below the directory ``path``, at most ``depth`` levels down (None: all),
        depth-first with names sorted, each directory before its contents."""
        ...

    async def read(self, path: MemoryPath) -> str:
        """The text of the file at ``path``."""
        ...

    async def write(self, path: MemoryPath, text: str, *, exclusive: bool = False) -> None:
        """Put ``text`` at ``path``, creating missing parent directories; with
        ``exclusive`` an existing entry raises :class:`FileExistsError` instead."""
        ...

    async def delete(self, path: MemoryPath) -> None:
        """Remove the file, or the directory and everything in it, at ``path``."""
        ...

    async def rename(self, old: MemoryPath, new: MemoryPath) -> None:
        """Move ``old`` (a file or a directory) to ``new``, creating missing parent
        directories; an existing ``new`` raises :class:`FileExistsError`."""
        ...

    async def usage(self) -> FileUsage:
        """How many files the tree holds and how many bytes they take, at any depth."""
        ...
