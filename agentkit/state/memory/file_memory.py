"""FileMemory: recall from the note tree FileTool edits.

What the model wrote to ``/memories`` in one run is what a later run recalls: point both
at the same backend (a :class:`~agentkit.tools.LocalFiles` directory or a
:class:`~agentkit.tools.SQLiteFiles` table) and the agent starts each task with its most
relevant notes in the prompt.

Retrieval is deliberately plain and dependency-free: each file is one item, scored by
the share of the query's words (weighted by how rare they are across the notes, and
counting the file's path) that it contains. It finds a note that shares words with the
task; it does not know that "coffee" and "espresso" are related. For meaning-based
recall put an embedding index behind your own :class:`MemorySource`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from agentkit.state.memory.source import MemoryItem
from agentkit.tools.files.commands import FileLimits, check_write
from agentkit.tools.files.errors import FileToolError
from agentkit.tools.files.paths import MemoryPath, parse_path
from agentkit.tools.files.ports import Files

if TYPE_CHECKING:
    from agentkit.core.runtime.context import RunContext

__all__ = ["FileMemory"]

_WORD = re.compile(r"[^\W_]+")
_COMMON_WORDS = """a about an and are as at be by can could did do does for from had has have he her
    here his how i if in into is it its me my no not of on or our she should so than that
    the their then there they this to was we were what when where which who will with
    would you your"""
_STOPWORDS = frozenset(_COMMON_WORDS.split())


def _terms(text: str) -> set[str]:
    """The words of ``text`` that count for matching: runs of letters and digits
    (``user_preferences`` is two words), lower-cased, without stop words and one-letter
    words."""
    return {w for w in _WORD.findall(text.lower()) if len(w) > 1 and w not in _STOPWORDS}


class FileMemory:
    """A :class:`MemorySource` over a :class:`Files` backend: every file under ``under``
    (default ``/memories``) is a candidate, its whole text (up to ``max_chars``) the item.

    ``write`` appends items as lines to ``write_to``, within ``limits``. Files the
    backend refuses (links on disk, files too large, text that is not UTF-8) are skipped.
    """

    __slots__ = ("files", "limits", "max_chars", "under", "write_to")

    def __init__(
        self,
        files: Files,
        *,
        under: str = "/memories",
        max_chars: int = 2000,
        write_to: str = "/memories/remembered.md",
        limits: FileLimits | None = None,
    ) -> None:
        if max_chars < 1:
            raise ValueError(f"max_chars must be at least 1, got {max_chars}")
        self.files = files
        self.under = parse_path(under)
        self.write_to = parse_path(write_to)
        self.max_chars = max_chars
        self.limits = limits if limits is not None else FileLimits()

    async def _notes(self) -> list[tuple[MemoryPath, str]]:
        try:
            entries = await self.files.listing(self.under, None)
        except (FileNotFoundError, NotADirectoryError):
            return []
        notes = []
        for entry in entries:
            if entry.kind != "file" or entry.size > self.limits.max_file_bytes:
                continue
            try:
                notes.append((entry.path, await self.files.read(entry.path)))
            except (FileToolError, OSError, UnicodeDecodeError):
                continue  # refused, or gone since the listing
        return notes

    async def query(self, text: str, k: int, ctx: RunContext | None) -> tuple[MemoryItem, ...]:
        """The ``k`` notes sharing the most (and the rarest) words with ``text``."""
        wanted = _terms(text)
        if k < 1 or not wanted:
            return ()
        notes = await self._notes()
        words = [_terms(content) | _terms(path.key) for path, content in notes]
        weight = {
            term: math.log(1 + len(notes) / df)
            for term in wanted
            if (df := sum(term in w for w in words))
        }
        possible = sum(weight.values())
        if not possible:
            return ()
        scored = sorted(
            (
                (round(sum(weight.get(t, 0.0) for t in wanted & w) / possible, 4), path, content)
                for (path, content), w in zip(notes, words, strict=True)
            ),
            key=lambda item: (-item[0], item[1]),
        )
        return tuple(
            MemoryItem(self._clip(content), str(path), score)
            for score, path, content in scored[:k]
            if score > 0
        )

    def _clip(self, content: str) -> str:
        content = content.strip()
        return content if len(content) <= self.max_chars else content[: self.max_chars] + "…"

    async def write(self, items: Sequence[MemoryItem], ctx: RunContext | None) -> None:
        """Append each item to ``write_to`` as a ``- content`` line."""
        if not items:
            return
        lines = "".join("- " + " ".join(item.content.split()) + "\n" for item in items)
        # Under the tree's write lock, like FileTool's writes, so the limits hold.
        async with self.files.exclusive() as files:
            entry = await files.stat(self.write_to)
            current = await files.read(self.write_to) if entry is not None else ""
            if current and not current.endswith("\n"):
                current += "\n"
            new_text = current + lines
            replacing = None if entry is None else entry.size
            await check_write(files, self.write_to, new_text, self.limits, replacing=replacing)
            await files.write(self.write_to, new_text)

    def __repr__(self) -> str:
        return f"FileMemory({self.files!r}, under={str(self.under)!r})"
