"""The ``agentkit`` command: the demo, tool inspection, the MCP server, Temporal workers.

:mod:`~agentkit.cli.command` parses the command line and hands each command to its own
module (``tools``, ``mcp``, ``temporal``), which calls the library; ``targets`` loads the
``MODULE[:ATTR]`` they point at. A user's mistake is a :class:`UsageError`.
"""

from agentkit.cli.command import main
from agentkit.cli.errors import UsageError

__all__ = ["UsageError", "main"]
