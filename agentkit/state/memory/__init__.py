"""Memory sources: what an agent recalls before it starts on a task.

``Agent(memory=source)`` queries the source with the task and puts what it finds into
the system prompt of every model request of that run.
"""

from agentkit.state.memory.file_memory import FileMemory
from agentkit.state.memory.source import MemoryItem, MemorySource, WritableMemorySource
from agentkit.state.memory.tool_memory import ToolMemory

__all__ = ["FileMemory", "MemoryItem", "MemorySource", "ToolMemory", "WritableMemorySource"]
