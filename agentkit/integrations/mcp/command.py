"""``agentkit mcp serve MODULE[:ATTR] [--http HOST:PORT] [--name N]``.

MODULE is an importable module name or a path to a ``.py`` file. ATTR names a tool, a
list of tools, a ``ToolRegistry``, or anything holding one as ``.tools`` (a
``ReActCognition``) or ``.cognition.tools`` (an ``Agent``). Without ATTR the module's
globals are scanned for all of those. Mistakes in the target are one-line
:class:`~agentkit.cli.UsageError` messages.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from agentkit.cli import UsageError
from agentkit.core.contracts.ports import Tool
from agentkit.integrations.mcp.http_access import check_exposure, transport_security
from agentkit.integrations.mcp.server import parse_host_port, serve
from agentkit.tools.registry import ToolRegistry

__all__ = ["find_tools", "load_target", "serve_command"]


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
        module, attr = load_target(target)
        tools = find_tools(module, attr, target)
    serve(
        tools,
        name=name or module.__name__.rpartition(".")[2],
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


def _split(target: str) -> tuple[str, str | None]:
    module, sep, attr = target.rpartition(":")
    # "C:\\tools.py" and "tools.py" have no ATTR; "pkg.mod:registry" does.
    if sep and module and attr and all(part.isidentifier() for part in attr.split(".")):
        return module, attr
    return target, None


def load_target(target: str) -> tuple[ModuleType, str | None]:
    """Import the module (or file) ``target`` names; returns it and the ATTR, if any."""
    spec, attr = _split(target)
    if not spec:
        raise UsageError(f"no module in target {target!r}; expected MODULE[:ATTR]")
    if spec.endswith(".py") or os.sep in spec or "/" in spec:
        return _import_file(Path(spec)), attr
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # as `python -m` does: modules next to you import
    try:
        return importlib.import_module(spec), attr
    except ModuleNotFoundError as exc:
        if exc.name is not None and spec.startswith(exc.name):
            raise UsageError(
                f"cannot import {spec!r}: no module named {exc.name!r} (run from the directory "
                "that holds it, or pass the path to a .py file)"
            ) from None
        raise UsageError(_import_failed(spec, exc)) from None
    except Exception as exc:
        raise UsageError(_import_failed(spec, exc)) from None


def _import_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise UsageError(f"cannot serve {str(path)!r}: no such file")
    name = path.stem if path.stem.isidentifier() else "agentkit_mcp_target"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot import {str(path)!r}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.resolve().parent))  # its sibling modules import
    sys.modules[name] = module  # dataclasses look their module up while it executes
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise UsageError(_import_failed(str(path), exc)) from None
    return module


def _import_failed(what: str, exc: BaseException) -> str:
    detail = " ".join(str(exc).split())
    return f"importing {what!r} failed: {type(exc).__name__}: {detail}"


def find_tools(module: ModuleType, attr: str | None, target: str) -> ToolRegistry:
    """The tools at ``module.attr``, or every tool the module defines at top level."""
    if attr is not None:
        value: Any = module
        for part in attr.split("."):
            if not hasattr(value, part):
                raise UsageError(f"{module.__name__!r} has no attribute {attr!r}")
            value = getattr(value, part)
        tools = _tools_in(value)
        if tools is None:
            raise UsageError(
                f"{target!r} is a {type(value).__name__}, not tools: point at a tool, a list "
                "of tools, a ToolRegistry, a ReActCognition or an Agent"
            )
    else:
        tools = []
        for name, value in vars(module).items():
            if not name.startswith("_") and not isinstance(value, ModuleType):
                tools.extend(_tools_in(value, scanning=True) or ())
    registry = ToolRegistry()
    for tool in tools:
        if tool.name in registry:
            if registry.get(tool.name) is tool:
                continue
            raise UsageError(
                f"{target!r} holds two different tools named {tool.name!r}; name the one to "
                f"serve: agentkit mcp serve {target}:ATTR"
            )
        registry.register(tool)
    if not len(registry):
        raise UsageError(
            f"no tools found in {target!r}: define tools with @tool at module level, or name "
            f"the object that holds them: agentkit mcp serve {target}:ATTR"
        )
    return registry


def _tools_in(value: Any, *, scanning: bool = False) -> list[Tool] | None:
    """The servable tools ``value`` is or holds, or None when it holds none.

    ``ask_human`` is served too: the server puts the question to the client's user
    through elicitation.
    """
    return _held(value, scanning)


def _held(value: Any, scanning: bool) -> list[Tool] | None:
    if isinstance(value, Tool):
        return [value]
    if isinstance(value, ToolRegistry):
        return list(value)
    try:
        holders = (getattr(value, "tools", None), getattr(getattr(value, "cognition", None),
                                                           "tools", None))
    except Exception:  # a module global whose attribute lookup misbehaves holds no tools
        return None
    for holder in holders:
        if isinstance(holder, ToolRegistry):
            return list(holder)
    if not scanning and isinstance(value, Iterable) and not isinstance(value, str | bytes):
        items = list(value)
        if items and all(isinstance(item, Tool) for item in items):
            return items
    return None
