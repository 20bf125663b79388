"""``agentkit mcp serve MODULE[:ATTR] [--http HOST:PORT] [--name N]``.

MODULE is an importable module name or a path to a ``.py`` file. ATTR names a tool, a
list of tools, a ``ToolRegistry``, or anything holding one as ``.tools`` (a
``ReActCognition``) or ``.cognition.tools`` (an ``Agent``). Without ATTR the module's
globals are scanned for all of those. The module is loaded by
:func:`~agentkit.cli.targets.load_tools`, so its mistakes get the same messages and exit
statuses as under ``agentkit tools inspect``.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from agentkit.cli.errors import UsageError
from agentkit.cli.targets import (
    DEFINITION_PROBLEMS_STATUS,
    LoadedTools,
    load_tools,
    print_problems,
)
from agentkit.core.contracts.ports import Tool
from agentkit.core.contracts.traits import traits_of
from agentkit.integrations.mcp.http_access import check_exposure, transport_security
from agentkit.integrations.mcp.server import parse_host_port, serve

__all__ = ["load_servable", "serve_command"]


def serve_command(
    target: str,
    *,
    http: str | None = None,
    name: str | None = None,
    token_env: str | None = None,
    insecure_no_auth: bool = False,
    allow_hosts: Sequence[str] | None = None,
    allow_origins: Sequence[str] | None = None,
) -> int:
    """Serve the tools at ``target`` over stdio, or streamable HTTP with ``http``.

    Over HTTP, ``token_env`` names the environment variable holding the bearer token
    clients must send. Blocks until the client disconnects (stdio) or the process is
    interrupted.
    """
    token = _http_access(http, token_env, insecure_no_auth, allow_hosts, allow_origins)
    # On stdio, stdout is the protocol: anything the module prints while it is
    # imported would corrupt the first message, so it goes to stderr instead.
    quiet = contextlib.redirect_stdout(sys.stderr) if http is None else contextlib.nullcontext()
    with quiet:
        loaded = load_servable(target)
    if loaded.problems:
        print_problems(loaded.problems)
        return DEFINITION_PROBLEMS_STATUS
    _note_unapprovable(loaded.tools, target)
    serve(
        loaded.registry(),
        name=name or _server_name(loaded),
        http=http,
        auth_token=token,
        insecure_no_auth=insecure_no_auth,
        allowed_hosts=allow_hosts or None,
        allowed_origins=allow_origins or None,
    )
    return 0


def _http_access(
    http: str | None,
    token_env: str | None,
    insecure_no_auth: bool,
    allow_hosts: Sequence[str] | None,
    allow_origins: Sequence[str] | None,
) -> str | None:
    """The bearer token to require, after checking the HTTP options fit together."""
    if http is None:
        if token_env or insecure_no_auth or allow_hosts or allow_origins:
            raise UsageError(
                "--token-env, --insecure-no-auth, --allow-host and --allow-origin apply to "
                "--http only: a stdio server has exactly one client, the process that started it"
            )
        return None
    try:
        host, port = parse_host_port(http)
    except ValueError as exc:
        raise UsageError(f"--http: {exc}") from None
    token = None
    if token_env is not None:
        token = os.environ.get(token_env)
        if not token or not token.strip():
            raise UsageError(
                f"--token-env {token_env}: the environment variable {token_env} is not set "
                "or empty; set it to a long random secret"
            )
    try:  # refused here, before the target is imported, as serve() would refuse it
        check_exposure(host, token, insecure_no_auth)
        transport_security(host, port, allow_hosts or None, allow_origins or None)
    except ValueError as exc:
        raise UsageError(f"--http {http}: {exc}") from None
    return token


def load_servable(target: str) -> LoadedTools:
    """The tools ``agentkit mcp serve`` would serve from ``target``: everything
    :func:`~agentkit.cli.targets.load_tools` finds (``ask_human`` included: its question
    goes to the client's user through elicitation)."""
    return load_tools(target, command="agentkit mcp serve")


def _server_name(loaded: LoadedTools) -> str:
    file = getattr(loaded.module, "__file__", None)
    if file and loaded.module.__name__.startswith("_agentkit_target_"):
        return Path(file).stem
    return loaded.module.__name__.rpartition(".")[2]


def _note_unapprovable(tools: tuple[Tool, ...], target: str) -> None:
    """Say at start-up which tools need a person's approval, and what that means here."""
    held = [tool.name for tool in tools if traits_of(tool).requires_approval]
    if held:
        print(
            f"agentkit mcp serve: {held} need a human's approval: each call is put to the "
            "client's user through elicitation, and refused when the client cannot elicit. To "
            "decide in code, start the server from Python with serve(tools, approve=callback); "
            "to leave them out, name a list "
            f"of the other tools: agentkit mcp serve {target.rpartition(':')[0] or target}:ATTR",
            file=sys.stderr,
        )


