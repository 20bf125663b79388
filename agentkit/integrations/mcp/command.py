"""``agentkit mcp serve MODULE[:ATTR] [--http HOST:PORT] [--name N]``.

MODULE is an importable module name or a path to a ``.py`` file. ATTR names a tool, a
list of tools, a ``ToolRegistry``, or anything holding one as ``.tools`` (a
``ReActCognition``) or ``.cognition.tools`` (an ``Agent``). Without ATTR the module's
globals are scanned for all of those. The module is loaded by
:func:`~agentkit.tool_modules.load_tools`, so its mistakes get the same messages and exit
statuses as under ``agentkit tools inspect``.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

from agentkit.cli import UsageError
from agentkit.core.contracts.ports import Tool
from agentkit.integrations.mcp.server import parse_host_port, serve
from agentkit.tool_modules import (
    DEFINITION_PROBLEMS_STATUS,
    LoadedTools,
    load_tools,
    print_problems,
)

__all__ = ["load_servable", "serve_command"]


def serve_command(target: str, *, http: str | None = None, name: str | None = None) -> int:
    """Serve the tools at ``target`` over stdio, or streamable HTTP with ``http``.

    Blocks until the client disconnects (stdio) or the process is interrupted.
    """
    if http is not None:
        try:
            parse_host_port(http)
        except ValueError as exc:
            raise UsageError(f"--http: {exc}") from None
    # On stdio, stdout is the protocol: anything the module prints while it is
    # imported would corrupt the first message, so it goes to stderr instead.
    quiet = contextlib.redirect_stdout(sys.stderr) if http is None else contextlib.nullcontext()
    with quiet:
        loaded = load_servable(target)
    if loaded.problems:
        print_problems(loaded.problems)
        return DEFINITION_PROBLEMS_STATUS
    _note_unapprovable(loaded.tools, target)
    serve(loaded.registry(), name=name or _server_name(loaded), http=http)
    return 0


def load_servable(target: str) -> LoadedTools:
    """The tools ``agentkit mcp serve`` would serve from ``target``: everything
    :func:`~agentkit.tool_modules.load_tools` finds except ``ask_human``."""
    return load_tools(target, command="agentkit mcp serve", keep=_servable)


def _server_name(loaded: LoadedTools) -> str:
    file = getattr(loaded.module, "__file__", None)
    if file and loaded.module.__name__.startswith("_agentkit_target_"):
        return Path(file).stem
    return loaded.module.__name__.rpartition(".")[2]


def _note_unapprovable(tools: tuple[Tool, ...], target: str) -> None:
    """Say at start-up which tools every call of will be refused, and what to do."""
    held = [tool.name for tool in tools if tool.requires_approval]
    if held:
        print(
            f"agentkit mcp serve: {held} need a human's approval, which this command cannot "
            "ask for, so every call to them will be refused. To serve them, start the server "
            "from Python with serve(tools, approve=callback); to leave them out, name a list "
            f"of the other tools: agentkit mcp serve {target.rpartition(':')[0] or target}:ATTR",
            file=sys.stderr,
        )


def _servable(tool: Tool) -> bool:
    # ask_human is answered by suspending an agent loop; an MCP call has no loop to
    # suspend, so it is never served.
    return not getattr(tool, "asks_human", False)
