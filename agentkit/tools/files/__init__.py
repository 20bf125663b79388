"""Where FileTool keeps notes: the Files seam, its backends, and the path rules."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentkit.tools.files.commands import FileLimits
from agentkit.tools.files.errors import FileLimitExceeded, FileToolError, PathRefused
from agentkit.tools.files.in_memory import InMemoryFiles
from agentkit.tools.files.local import LocalFiles
from agentkit.tools.files.paths import ROOT, MemoryPath, parse_path
from agentkit.tools.files.ports import FileEntry, FileKind, Files, FileUsage

if TYPE_CHECKING:
    from agentkit.tools.files.postgres import PostgresFiles
    from agentkit.tools.files.sqlite import SQLiteFiles

__all__ = [
    "ROOT",
    "FileEntry",
    "FileKind",
    "FileLimitExceeded",
    "FileLimits",
    "FileToolError",
    "FileUsage",
    "Files",
    "InMemoryFiles",
    "LocalFiles",
    "MemoryPath",
    "PathRefused",
    "PostgresFiles",
    "SQLiteFiles",
    "parse_path",
]


def __getattr__(name: str) -> Any:
    # SQLiteFiles pulls in sqlite3 and a thread pool; only pay for it when asked.
    if name == "SQLiteFiles":
        from agentkit.tools.files.sqlite import SQLiteFiles

        return SQLiteFiles
    if name == "PostgresFiles":
        from agentkit.tools.files.postgres import PostgresFiles

        return PostgresFiles
    raise AttributeError(f"module 'agentkit.tools.files' has no attribute {name!r}")
