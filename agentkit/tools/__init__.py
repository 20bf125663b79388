"""Tools: how an agent does something other than talk."""

from agentkit.core.contracts.errors import (
    ToolArgumentError,
    ToolDefinitionError,
    ToolNotFoundError,
    ToolShapeError,
)
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.ports import Tool
from agentkit.tools.as_tool import as_tool, render_result
from agentkit.tools.ask_human import ask_human
from agentkit.tools.function_tool import FunctionTool, tool
from agentkit.tools.registry import ToolRegistry

__all__ = [
    "FrozenDict",
    "FunctionTool",
    "Tool",
    "ToolArgumentError",
    "ToolDefinitionError",
    "ToolNotFoundError",
    "ToolRegistry",
    "ToolShapeError",
    "as_tool",
    "ask_human",
    "render_result",
    "tool",
]
