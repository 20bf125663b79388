"""Loading the tools a command line names: ``MODULE[:ATTR]``, for every command that
takes one (``agentkit tools inspect``, ``agentkit mcp serve``).

One loader, so every command judges a module the same way, with the same messages and
exit statuses: a target that cannot be used (no such file, a directory, an import that
fails, an ATTR that holds no tools, no tools at all) is a
:class:`~agentkit.cli.errors.UsageError`, one line and status 2; tools that are defined wrongly
(a ``@tool`` mistake, two tools under one name) are
:class:`~agentkit.tools.definition_problems.DefinitionProblem` entries, each printed as
``error: FILE:LINE: message``, and status 1.

The module is imported with ``@tool`` collecting its definition errors instead of
raising the first, so every problem in the file is reported at once.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from agentkit.cli.errors import UsageError
from agentkit.core.contracts.ports import Tool
from agentkit.tools.definition_problems import (
    BrokenTool,
    DefinitionProblem,
    collect_definition_problems,
)
from agentkit.tools.registry import ToolRegistry

__all__ = [
    "DEFINITION_PROBLEMS_STATUS",
    "LoadedTools",
    "load_target",
    "load_tools",
    "print_problems",
    "short_path",
    "source_of",
]

DEFINITION_PROBLEMS_STATUS = 1
"""Exit status when the target's tools are defined wrongly (a :class:`UsageError` is
status 2, set where the command line prints it)."""


@dataclass(frozen=True, slots=True)
class LoadedTools:
    """The tools a ``MODULE[:ATTR]`` target holds, and what is wrong with them."""

    target: str
    """The target as given."""
    module: ModuleType
    """The imported module."""
    tools: tuple[Tool, ...]
    """Every tool found, in definition order, each once (two tools may share a name:
    see ``problems``)."""
    problems: tuple[DefinitionProblem, ...]
    """Tools that failed to define, and names taken by two different tools."""

    def registry(self) -> ToolRegistry:
        """The tools as a registry; only call it when ``problems`` is empty."""
        return ToolRegistry.from_tools(self.tools)


def load_tools(
    target: str, *, command: str, keep: Callable[[Tool], bool] | None = None
) -> LoadedTools:
    """Import ``target`` (``MODULE[:ATTR]``; MODULE a dotted name or a ``.py`` path) and
    find its tools. ``command`` (``"agentkit mcp serve"``) is named in hints; ``keep``
    leaves out tools the command cannot use.

    Raises :class:`UsageError` when the target cannot be used.
    """
    spec, attr = _split(target)
    with collect_definition_problems() as collected:
        module = _import(spec)
    if attr is None:
        found = _scan(module)
    else:
        value = _attribute(module, spec, attr)
        held = _held(value, scanning=False)
        if held is None:
            raise UsageError(
                f"{target!r} is {_a(type(value).__name__)}, not tools: point at a tool, a list "
                "of tools, a ToolRegistry, a ReActCognition or an Agent"
            )
        found = held
    tools = _unique(t for t in found if keep is None or keep(t))
    problems = [*collected, *_duplicates(tools, spec, command)]
    if not tools and not problems:
        raise UsageError(
            f"no tools found in {target!r}: define tools with @tool at module level, or name "
            f"the object that holds them: {command} {spec}:ATTR"
        )
    return LoadedTools(target, module, tools, tuple(problems))


def load_target(target: str) -> tuple[ModuleType, Any]:
    """Import ``target`` (``MODULE[:ATTR]``) as :func:`load_tools` does, for a command
    that looks for something other than tools (``agentkit temporal worker``): the module,
    and the object ATTR names (None without ATTR).

    Raises :class:`UsageError` when the target cannot be used.
    """
    spec, attr = _split(target)
    module = _import(spec)
    return module, None if attr is None else _attribute(module, spec, attr)


def print_problems(problems: Iterable[DefinitionProblem]) -> None:
    """Each problem as ``error: FILE:LINE: message`` on stderr."""
    for problem in problems:
        where = f"{short_path(problem.file)}:{problem.line}"
        print(f"error: {where}: {problem.message}", file=sys.stderr)


def source_of(tool: Any) -> str:
    """``FILE:LINE`` where ``tool`` is defined (relative to the working directory when
    under it), or ``<unknown>``."""
    fn = getattr(tool, "fn", None) or type(tool)
    try:
        file = inspect.getsourcefile(fn) or "<unknown>"
        line = inspect.getsourcelines(fn)[1]
    except (OSError, TypeError):
        return "<unknown>"
    return f"{short_path(file)}:{line}"


# -- the target ----------------------------------------------------------------------


def _split(target: str) -> tuple[str, str | None]:
    spec, sep, attr = target.rpartition(":")
    # "C:\\tools.py" and "tools.py" have no ATTR; "pkg.mod:registry" does.
    if not (sep and spec and attr and all(part.isidentifier() for part in attr.split("."))):
        return _checked(target, target), None
    return _checked(spec, target), attr


def _checked(spec: str, target: str) -> str:
    if not spec:
        raise UsageError(f"expected MODULE[:ATTR] (a module name or a .py file), got {target!r}")
    return spec


def _import(spec: str) -> ModuleType:
    path = Path(spec)
    if path.is_dir():
        raise UsageError(
            f"{spec!r} is a directory: pass a .py file (such as {os.path.join(spec, 'tools.py')}"
            ") or an importable module name (such as package.tools)"
        )
    if spec.endswith(".py") or os.sep in spec or "/" in spec:
        return _import_file(path, spec)
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())  # as `python -m` does: modules next to you import
    try:
        return importlib.import_module(spec)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (spec == exc.name or spec.startswith(exc.name + ".")):
            raise UsageError(
                f"no module named {spec!r} (run from the directory that holds it, or pass "
                "the path to a .py file)"
            ) from None
        raise UsageError(_import_failed(spec, exc)) from None
    except Exception as exc:
        raise UsageError(_import_failed(spec, exc)) from None


def _import_file(path: Path, spec: str) -> ModuleType:
    if not path.is_file():
        raise UsageError(f"no such file: {spec!r}")
    name = path.stem
    if not name.isidentifier() or name in sys.modules:
        name = f"_agentkit_target_{abs(hash(str(path.resolve())))}"
    loader_spec = importlib.util.spec_from_file_location(name, path)
    if loader_spec is None or loader_spec.loader is None:
        raise UsageError(f"cannot import {spec!r}: not a Python file")
    module = importlib.util.module_from_spec(loader_spec)
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # its sibling modules import, now and later
    sys.modules[name] = module  # dataclasses look their module up while it executes
    try:
        loader_spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise UsageError(_import_failed(spec, exc)) from None
    return module


def _import_failed(what: str, exc: BaseException) -> str:
    if isinstance(exc, SyntaxError) and exc.filename:
        where = f"{exc.filename}:{exc.lineno}"
        detail = exc.msg
    else:
        # The innermost frame of the user's code, not importlib's own machinery.
        frames = [
            frame for frame in traceback.extract_tb(exc.__traceback__)
            if not frame.filename.startswith("<frozen ")
        ]
        where = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "<unknown>"
        detail = str(exc)
    detail = " ".join(detail.split())
    return f"importing {what!r} failed at {where}: {type(exc).__name__}: {detail}"


def _attribute(module: ModuleType, spec: str, attr: str) -> Any:
    value: Any = module
    for part in attr.split("."):
        if not hasattr(value, part):
            raise UsageError(f"{spec!r} has no attribute {attr!r}")
        value = getattr(value, part)
    return value


def _a(noun: str) -> str:
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


# -- finding tools -------------------------------------------------------------------


def _scan(module: ModuleType) -> list[Tool]:
    """Every tool the module's public globals are or hold, in definition order."""
    found: list[Tool] = []
    for name, value in vars(module).items():
        if not name.startswith("_") and not isinstance(value, ModuleType):
            found.extend(_held(value, scanning=True) or ())
    return found


def _held(value: Any, *, scanning: bool) -> list[Tool] | None:
    """The tools ``value`` is or holds, or None when it is nothing that holds tools."""
    if isinstance(value, BrokenTool):
        return []  # its problem is already collected
    if isinstance(value, Tool):
        return [value]
    if isinstance(value, ToolRegistry):
        return list(value)
    try:
        holders = (
            getattr(value, "tools", None),
            getattr(getattr(value, "cognition", None), "tools", None),
        )
    except Exception:  # a global whose attribute lookup misbehaves holds no tools
        return None
    for holder in holders:
        if isinstance(holder, ToolRegistry):
            return list(holder)
    if isinstance(value, list | tuple) or (
        not scanning and isinstance(value, Iterable) and not isinstance(value, str | bytes)
    ):
        items = list(value)
        if items and all(isinstance(item, Tool | BrokenTool) for item in items):
            return [item for item in items if isinstance(item, Tool)]
    return None


def _unique(tools: Iterable[Tool]) -> tuple[Tool, ...]:
    seen: set[int] = set()
    unique = []
    for tool in tools:
        if id(tool) not in seen:
            seen.add(id(tool))
            unique.append(tool)
    return tuple(unique)


def _duplicates(tools: tuple[Tool, ...], spec: str, command: str) -> list[DefinitionProblem]:
    first: dict[str, Tool] = {}
    problems = []
    for tool in tools:
        other = first.setdefault(tool.name, tool)
        if other is tool:
            continue
        file, _, line = source_of(tool).rpartition(":")
        problems.append(DefinitionProblem(
            name=tool.name,
            file=file or "<unknown>",
            line=int(line) if line.isdigit() else 0,
            message=(
                f"two different tools are named {tool.name!r} (the other is at "
                f"{source_of(other)}): rename one with @tool(name=...), or name the one to "
                f"use: {command} {spec}:ATTR"
            ),
        ))
    return problems


def short_path(file: str) -> str:
    """``file`` relative to the working directory when it is under it."""
    try:
        return str(Path(file).resolve().relative_to(Path.cwd()))
    except ValueError:
        return file
