"""FileTool's errors: a command that could not be carried out, told to the model.

::

    FileToolError (AgentkitError)      the command failed; the message is the tool result
    ├── PathRefused (ValueError)       the path is not a safe place inside /memories
    └── FileLimitExceeded              the write or move would cross a configured limit

They are tool errors, not argument errors: the arguments had the right shape, but the
file system (or the safety rules around it) said no. The agent loop renders the message
as an error result the model reads on its next turn; nothing is retried.
"""

from __future__ import annotations

from typing import Literal

from agentkit.core.contracts.errors import AgentkitError

__all__ = ["FileLimitExceeded", "FileToolError", "PathRefused", "format_size"]

LimitName = Literal["file_bytes", "total_bytes", "files", "depth"]


def format_size(size: int) -> str:
    """``0B``, ``512B``, ``1.5K``, ``4K``, ``2.3M``: the size notation of the listings."""
    if size <= 0:
        return "0B"
    units = ("B", "K", "M", "G")
    power = min((size.bit_length() - 1) // 10, len(units) - 1)
    scaled = size / 1024**power
    if scaled == int(scaled):
        return f"{int(scaled)}{units[power]}"
    return f"{scaled:.1f}{units[power]}"


class FileToolError(AgentkitError):
    """A memory command failed; ``str(exc)`` is what the model is told.

    ``path`` is the memory path the failure is about, when there is one.
    """

    def __init__(self, message: str, *, path: str | None = None) -> None:
        self.path = path
        super().__init__(message)


class PathRefused(FileToolError, ValueError):
    """A path that is not a safe place inside ``/memories``; nothing was read or written.

    ``raw`` is the path as the model sent it (or as found on disk), ``reason`` why it was
    refused.
    """

    def __init__(self, raw: str, reason: str) -> None:
        self.raw = raw
        self.reason = reason
        super().__init__(f"Path {_show(raw)} is refused: {reason}", path=raw)


class FileLimitExceeded(FileToolError):
    """A write or a move that would take a file, or the whole memory directory, over a limit.

    ``limit`` names the limit, ``maximum`` is its value and ``would_be`` what the command
    would have made it; nothing was written or moved. For a refused move ``path`` is the
    destination and ``moving`` what was to be moved.
    """

    def __init__(
        self,
        path: str,
        limit: LimitName,
        maximum: int,
        would_be: int,
        *,
        moving: str | None = None,
    ) -> None:
        self.limit = limit
        self.maximum = maximum
        self.would_be = would_be
        self.moving = moving
        if limit == "depth":
            if moving is not None:
                message = (
                    f"Cannot move {moving} to {path}: what it holds would reach {would_be} "
                    f"levels below /memories, over the limit of {maximum}. Choose a "
                    "destination nearer /memories."
                )
            else:
                message = (
                    f"Cannot write {path}: it would be {would_be} levels below /memories, over "
                    f"the limit of {maximum}. Choose a shallower path."
                )
            super().__init__(message, path=path)
            return
        if limit == "file_bytes":
            detail = (
                f"the file would be {format_size(would_be)} ({would_be} bytes), over the "
                f"limit of {format_size(maximum)} ({maximum} bytes) for one file. "
                "Keep notes short, or split this one into several files"
            )
        elif limit == "total_bytes":
            detail = (
                f"the memory directory would hold {format_size(would_be)} ({would_be} "
                f"bytes), over its limit of {format_size(maximum)} ({maximum} bytes). "
                "Delete or condense notes you no longer need first"
            )
        else:
            detail = (
                f"the memory directory would hold {would_be} files, over its limit of "
                f"{maximum}. Delete or merge notes you no longer need first"
            )
        super().__init__(f"Cannot write {path}: {detail}.", path=path)


def _show(raw: str) -> str:
    """``raw`` as written when it is plain printable text, else its ``repr`` so control
    and invisible characters are visible in the message."""
    return raw if raw.isprintable() and raw.strip() == raw and raw else repr(raw)
