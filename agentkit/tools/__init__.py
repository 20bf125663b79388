"""Tools: how an agent does something other than talk."""

from typing import TYPE_CHECKING, Any

from agentkit.core.contracts.errors import (
    ToolArgumentError,
    ToolDefinitionError,
    ToolNotFoundError,
    ToolShapeError,
)
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.media import Audio, File, Image
from agentkit.core.contracts.ports import Tool
from agentkit.core.contracts.traits import ToolTraits, traits_of
from agentkit.tools.as_tool import as_tool, render_result
from agentkit.tools.ask_human import ask_human
from agentkit.tools.file_tool import FileTool
from agentkit.tools.files import Files, FileToolError, InMemoryFiles, LocalFiles
from agentkit.tools.function_tool import FunctionTool, tool
from agentkit.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from agentkit.tools.files.postgres import PostgresFiles
    from agentkit.tools.files.sqlite import SQLiteFiles

__all__ = [
    "Audio",
    "File",
    "FileTool",
    "FileToolError",
    "Files",
    "FrozenDict",
    "FunctionTool",
    "Image",
    "InMemoryFiles",
    "LocalFiles",
    "PostgresFiles",
    "SQLiteFiles",
    "Tool",
    "ToolArgumentError",
    "ToolDefinitionError",
    "ToolNotFoundError",
    "ToolRegistry",
    "ToolShapeError",
    "ToolTraits",
    "as_tool",
    "ask_human",
    "render_result",
    "tool",
    "traits_of",
]


def __getattr__(name: str) -> Any:
    # SQLiteFiles pulls in sqlite3 and a thread pool; only pay for it when asked.
    if name == "SQLiteFiles":
        from agentkit.tools.files.sqlite import SQLiteFiles

        return SQLiteFiles
    if name == "PostgresFiles":
        from agentkit.tools.files.postgres import PostgresFiles

        return PostgresFiles
    raise AttributeError(f"module 'agentkit.tools' has no attribute {name!r}")
