"""The ``agentkit`` command: the demo, tool inspection, the MCP server, evals, Temporal
workers.

:mod:`~agentkit.cli.command` parses the command line and hands each command to its own
module (``tools``, ``mcp``, ``evals``, ``temporal``), which calls the library;
``targets`` loads the ``MODULE[:ATTR]`` they point at. A user's mistake is a
:class:`UsageError`.
"""

from agentkit.cli.command import main
from agentkit.cli.errors import UsageError

__all__ = ["UsageError", "main"]
