"""The six memory commands over any :class:`Files` backend, worded as the contract's
reference implementation words them.

Results and failures follow the ``memory_20250818`` reference implementation (the
Anthropic SDK's local-filesystem memory tool): the two-level listing with sizes, the
numbered file view, ``File created successfully at: ...``, the exact-once rule of
``str_replace`` and its two refusals. Where the reference has no message (a parent that
is a file, a rename into itself, a limit) the wording here is agentkit's own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentkit.tools.files.errors import FileLimitExceeded, FileToolError, format_size
from agentkit.tools.files.paths import DEPTH_CEILING, MAX_DEPTH, MemoryPath
from agentkit.tools.files.ports import Files

__all__ = [
    "FileLimits",
    "check_write",
    "create",
    "delete",
    "insert",
    "rename",
    "str_replace",
    "view",
]

_LINE_NUMBER_WIDTH = 6


@dataclass(frozen=True, slots=True)
class FileLimits:
    """How much the model may keep; a write that would cross a limit is refused."""

    max_file_bytes: int = 256 * 1024
    """The largest one file may be, in bytes of UTF-8 (and the largest ``view`` reads)."""
    max_total_bytes: int = 8 * 1024 * 1024
    """The most all files together may hold."""
    max_files: int = 1000
    """The most files the tree may hold (directories are not counted)."""
    max_depth: int = MAX_DEPTH
    """The most names a path may have below ``/memories`` (at most 64)."""

    def __post_init__(self) -> None:
        for name in ("max_file_bytes", "max_total_bytes", "max_files"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"FileLimits.{name} must be a positive integer, got {value!r}")
        depth = self.max_depth
        if isinstance(depth, bool) or not isinstance(depth, int) or not (
            1 <= depth <= DEPTH_CEILING
        ):
            raise ValueError(
                f"FileLimits.max_depth must be an integer from 1 to {DEPTH_CEILING}, "
                f"got {depth!r}"
            )


# -- helpers ---------------------------------------------------------------------------


def _not_found(path: MemoryPath) -> FileToolError:
    return FileToolError(
        f"The path {path} does not exist. Please provide a valid path.", path=str(path)
    )


def _parent_is_file(error: NotADirectoryError, path: MemoryPath) -> FileToolError:
    blocker = error.filename or str(path.parent)
    return FileToolError(
        f"Cannot create {path}: {blocker} is a file, not a directory.", path=str(path)
    )


async def _read_file(files: Files, path: MemoryPath, limits: FileLimits) -> str:
    """The text of the file at ``path``, or the reference's not-found / not-a-file error."""
    entry = await files.stat(path)
    if entry is None:
        raise _not_found(path)
    if entry.kind != "file":
        raise FileToolError(f"The path {path} is not a file.", path=str(path))
    if entry.size > limits.max_file_bytes:
        raise FileToolError(
            f"The file {path} is {format_size(entry.size)}, over the limit of "
            f"{format_size(limits.max_file_bytes)} for one file, so it was not read.",
            path=str(path),
        )
    try:
        return await files.read(path)
    except FileNotFoundError:
        raise FileToolError(
            f"The file {path} no longer exists (may have been deleted or renamed "
            "concurrently).", path=str(path)
        ) from None
    except UnicodeDecodeError:
        raise FileToolError(f"The file {path} is not UTF-8 text.", path=str(path)) from None


async def check_write(
    files: Files, path: MemoryPath, text: str, limits: FileLimits, *, replacing: int | None
) -> None:
    """Refuse (:class:`FileLimitExceeded`) a write of ``text`` to ``path`` that would
    cross a limit; ``replacing`` is the size of the file it overwrites, None for a new
    file. A write that shrinks a file is allowed even when the total is over.

    The check and the write it guards must run inside one ``files.exclusive()`` span, or
    another writer may take the room between them."""
    if len(path.parts) > limits.max_depth:
        raise FileLimitExceeded(str(path), "depth", limits.max_depth, len(path.parts))
    size = len(text.encode("utf-8"))
    if size > limits.max_file_bytes:
        raise FileLimitExceeded(str(path), "file_bytes", limits.max_file_bytes, size)
    usage = await files.usage()
    if replacing is None and usage.files + 1 > limits.max_files:
        raise FileLimitExceeded(str(path), "files", limits.max_files, usage.files + 1)
    total = usage.bytes - (replacing or 0) + size
    if total > limits.max_total_bytes and size > (replacing or 0):
        raise FileLimitExceeded(str(path), "total_bytes", limits.max_total_bytes, total)


def _numbered(lines: Sequence[str], first: int) -> str:
    return "\n".join(
        f"{str(number).rjust(_LINE_NUMBER_WIDTH)}\t{line}"
        for number, line in enumerate(lines, start=first)
    )


def _lines_of(text: str) -> list[str]:
    """Lines split on LF (a CR stays), without the empty tail a final newline leaves."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


# -- the commands ------------------------------------------------------------------------


async def view(
    files: Files, path: MemoryPath, view_range: tuple[int, int] | None, limits: FileLimits
) -> str:
    """A directory listing two levels deep with sizes, or a file with line numbers."""
    entry = await files.stat(path)
    if entry is None:
        raise _not_found(path)
    if entry.kind == "directory":
        lines = [f"{format_size(entry.size)}\t{path}"]
        for item in await files.listing(path, 2):
            shown = str(item.path) + ("/" if item.kind == "directory" else "")
            lines.append(f"{format_size(item.size)}\t{shown}")
        return (
            f"Here're the files and directories up to 2 levels deep in {path}, "
            "excluding hidden items:\n" + "\n".join(lines)
        )
    lines = (await _read_file(files, path, limits)).split("\n")
    first = 1
    if view_range is not None:
        start, end = view_range
        if not 1 <= start <= len(lines):
            raise FileToolError(
                f"Invalid `view_range` parameter: [{start}, {end}]. Its first element "
                f"`{start}` should be within the range of lines of the file: [1, {len(lines)}].",
                path=str(path),
            )
        if end != -1 and end < start:
            raise FileToolError(
                f"Invalid `view_range` parameter: [{start}, {end}]. Its second element "
                f"`{end}` should be -1 (to the end) or at least its first element `{start}`.",
                path=str(path),
            )
        lines = lines[start - 1:] if end == -1 else lines[start - 1:end]
        first = start
    return f"Here's the content of {path} with line numbers:\n" + _numbered(lines, first)


async def create(files: Files, path: MemoryPath, file_text: str, limits: FileLimits) -> str:
    """A new file holding ``file_text``; an existing file or directory is refused."""
    if await files.stat(path) is not None:
        raise FileToolError(f"File {path} already exists", path=str(path))
    await check_write(files, path, file_text, limits, replacing=None)
    try:
        await files.write(path, file_text, exclusive=True)
    except FileExistsError:
        raise FileToolError(f"File {path} already exists", path=str(path)) from None
    except NotADirectoryError as exc:
        raise _parent_is_file(exc, path) from None
    return f"File created successfully at: {path}"


async def str_replace(
    files: Files, path: MemoryPath, old_str: str, new_str: str, limits: FileLimits
) -> str:
    """Replace ``old_str``, which must appear exactly once, and show the lines around it."""
    text = await _read_file(files, path, limits)
    starts: list[int] = []
    found = text.find(old_str)
    while found != -1:
        starts.append(found)
        found = text.find(old_str, found + 1)
    if not starts:
        raise FileToolError(
            f"No replacement was performed, old_str `{old_str}` did not appear verbatim "
            f"in {path}.", path=str(path)
        )
    if len(starts) > 1:
        numbers = sorted({text.count("\n", 0, start) + 1 for start in starts})
        raise FileToolError(
            f"No replacement was performed. Multiple occurrences of old_str `{old_str}` in "
            f"lines: {', '.join(map(str, numbers))}. Please ensure it is unique",
            path=str(path),
        )
    start = starts[0]
    new_text = text[:start] + new_str + text[start + len(old_str):]
    await check_write(files, path, new_text, limits, replacing=len(text.encode("utf-8")))
    await files.write(path, new_text)
    changed = text.count("\n", 0, start)
    new_lines = new_text.split("\n")
    first = max(0, changed - 2)
    snippet = new_lines[first:min(len(new_lines), changed + 3)]
    return (
        "The memory file has been edited. Here is the snippet showing the change (with "
        "line numbers):\n" + _numbered(snippet, first + 1)
    )


async def insert(
    files: Files, path: MemoryPath, insert_line: int, insert_text: str, limits: FileLimits
) -> str:
    """Insert ``insert_text`` after line ``insert_line`` (0: at the top)."""
    text = await _read_file(files, path, limits)
    lines = _lines_of(text)
    if not 0 <= insert_line <= len(lines):
        raise FileToolError(
            f"Invalid `insert_line` parameter: {insert_line}. It should be within the "
            f"range [0, {len(lines)}].", path=str(path)
        )
    lines.insert(insert_line, insert_text.rstrip("\n"))
    new_text = "\n".join(lines) + "\n"
    await check_write(files, path, new_text, limits, replacing=len(text.encode("utf-8")))
    await files.write(path, new_text)
    return f"The file {path} has been edited."


async def delete(files: Files, path: MemoryPath) -> str:
    """Remove a file, or a directory and everything in it."""
    if path.is_root:
        raise FileToolError("Cannot delete the /memories directory itself", path=str(path))
    try:
        await files.delete(path)
    except (FileNotFoundError, NotADirectoryError):
        raise FileToolError(f"The path {path} does not exist", path=str(path)) from None
    return f"Successfully deleted {path}"


async def _check_move(
    files: Files, old: MemoryPath, new: MemoryPath, kind: str, limits: FileLimits
) -> None:
    """Refuse a move that would put anything below ``old`` deeper than ``max_depth``.
    A move that makes nothing deeper is always allowed, so an over-deep tree can be
    tidied up."""
    if len(new.parts) <= len(old.parts):
        return
    below = 0
    if kind == "directory":
        below = max(
            (len(e.path.parts) - len(old.parts) for e in await files.listing(old, None)),
            default=0,
        )
    deepest = len(new.parts) + below
    if deepest > limits.max_depth:
        raise FileLimitExceeded(
            str(new), "depth", limits.max_depth, deepest, moving=str(old)
        )


async def rename(files: Files, old: MemoryPath, new: MemoryPath, limits: FileLimits) -> str:
    """Move a file or directory; the destination must not exist, and nothing it holds may
    end up deeper than the depth limit."""
    if old.is_root:
        raise FileToolError("Cannot rename the /memories directory itself", path=str(old))
    entry = await files.stat(old)
    if entry is None:
        raise FileToolError(f"The path {old} does not exist", path=str(old))
    if await files.stat(new) is not None:
        raise FileToolError(f"The destination {new} already exists", path=str(new))
    if new.is_within(old):
        raise FileToolError(
            f"Cannot move {old} into itself ({new}); choose a destination outside it.",
            path=str(new),
        )
    await _check_move(files, old, new, entry.kind, limits)
    try:
        await files.rename(old, new)
    except FileNotFoundError:
        raise FileToolError(f"The path {old} does not exist", path=str(old)) from None
    except FileExistsError:
        raise FileToolError(f"The destination {new} already exists", path=str(new)) from None
    except NotADirectoryError as exc:
        raise _parent_is_file(exc, new) from None
    return f"Successfully renamed {old} to {new}"
