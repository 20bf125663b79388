"""``agentkit tools inspect``: show exactly what a model is told about each tool."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import sys
import traceback
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from agentkit.core.contracts.ports import Tool
from agentkit.tools.definition_problems import (
    BrokenTool,
    DefinitionProblem,
    collect_definition_problems,
)
from agentkit.tools.registry import ToolRegistry

__all__ = ["ToolReport", "find_tools", "inspect_command", "load_target"]


@dataclass(frozen=True, slots=True)
class ToolReport:
    """What the model sees of one tool, plus its declarations."""

    name: str
    description: str
    parameters: Any
    side_effecting: bool
    idempotent: bool
    requires_approval: bool
    advertised: bool
    source: str

    def as_json(self) -> dict[str, Any]:
        """The report as JSON-ready data."""
        return {
            "name": self.name,
            "description": self.description,
            "description_chars": len(self.description),
            "parameters": self.parameters,
            "side_effecting": self.side_effecting,
            "idempotent": self.idempotent,
            "requires_approval": self.requires_approval,
            "advertised": self.advertised,
            "source": self.source,
        }


def _usage_error(message: str) -> Exception:
    from agentkit.cli import UsageError

    return UsageError(message)


def _import(module_part: str) -> ModuleType:
    path = Path(module_part)
    if module_part.endswith(".py") or path.is_file():
        if not path.is_file():
            raise _usage_error(f"no such file: {module_part}")
        name = f"_agentkit_inspected_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise _usage_error(f"cannot load {module_part} as Python")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        sys.path.insert(0, str(path.resolve().parent))
        try:
            spec.loader.exec_module(module)
        finally:
            sys.path.remove(str(path.resolve().parent))
        return module
    if "" not in sys.path and "." not in sys.path:
        sys.path.insert(0, "")
    try:
        return importlib.import_module(module_part)
    except ModuleNotFoundError as exc:
        if exc.name and module_part.startswith(exc.name):
            raise _usage_error(f"no module named {module_part!r}") from None
        raise


def load_target(target: str) -> tuple[Any, ModuleType]:
    """Import ``MODULE[:ATTR]`` (a dotted module or a ``.py`` file) and return the object
    named (the module itself without ``:ATTR``) and the module."""
    module_part, _, attr = target.partition(":")
    if not module_part:
        raise _usage_error(f"expected MODULE[:ATTR], got {target!r}")
    try:
        module = _import(module_part)
    except Exception as exc:
        if type(exc).__name__ == "UsageError":
            raise
        frame = traceback.extract_tb(exc.__traceback__)[-1]
        raise _usage_error(
            f"importing {module_part} failed at {frame.filename}:{frame.lineno}: "
            f"{type(exc).__name__}: {exc}"
        ) from None
    obj: Any = module
    for part in filter(None, attr.split(".")):
        if not hasattr(obj, part):
            raise _usage_error(f"{module_part} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return obj, module


def find_tools(obj: Any) -> Iterator[Tool]:
    """The tools in ``obj``: a Tool, a ToolRegistry, something with a ``.tools`` registry
    (a cognition), a list of those, or a module (its globals, in definition order)."""
    seen: set[int] = set()

    def walk(item: Any, depth: int) -> Iterator[Tool]:
        if id(item) in seen or depth > 3:
            return
        seen.add(id(item))
        if isinstance(item, Tool | BrokenTool):
            yield item  # type: ignore[misc]
        elif isinstance(item, ToolRegistry):
            yield from item
        elif isinstance(getattr(item, "tools", None), ToolRegistry):
            yield from item.tools
        elif isinstance(getattr(getattr(item, "cognition", None), "tools", None), ToolRegistry):
            yield from item.cognition.tools  # an Agent
        elif isinstance(item, list | tuple):
            for element in item:
                yield from walk(element, depth + 1)
        elif isinstance(item, ModuleType):
            for value in vars(item).values():
                if not isinstance(value, ModuleType):
                    yield from walk(value, depth + 1)

    yield from walk(obj, 0)


def _source(tool: Any) -> str:
    fn = getattr(tool, "fn", None) or type(tool)
    try:
        file = inspect.getsourcefile(fn) or "<unknown>"
        line = inspect.getsourcelines(fn)[1]
    except (OSError, TypeError):
        return "<unknown>"
    return f"{_short(file)}:{line}"


def _short(file: str) -> str:
    try:
        return str(Path(file).resolve().relative_to(Path.cwd()))
    except ValueError:
        return file


def report(tool: Tool) -> ToolReport:
    """What the model is shown of ``tool``."""
    schema = tool.schema
    return ToolReport(
        name=tool.name,
        description=schema.description if schema is not None else tool.description,
        parameters=dict(schema.parameters) if schema is not None else None,
        side_effecting=bool(tool.side_effecting),
        idempotent=bool(getattr(tool, "idempotent", False)),
        requires_approval=bool(tool.requires_approval),
        advertised=schema is not None,
        source=_source(tool),
    )


def _print_human(reports: Iterable[ToolReport], problems: list[DefinitionProblem]) -> None:
    for item in reports:
        flags = (
            f"side_effecting={item.side_effecting} idempotent={item.idempotent} "
            f"requires_approval={item.requires_approval}"
        )
        print(f"{item.name}  ({item.source})")
        print(f"  {flags}{'' if item.advertised else '  [not advertised: schema is None]'}")
        print(f"  description ({len(item.description)} chars):")
        for line in item.description.splitlines() or [""]:
            print(f"    {line}" if line else "")
        if item.parameters is not None:
            print(f"  parameters: {json.dumps(item.parameters)}")
        print()
    for problem in problems:
        print(f"error: {_short(problem.file)}:{problem.line}: {problem.message}", file=sys.stderr)


def inspect_command(target: str, *, as_json: bool = False) -> int:
    """Print every tool found at ``target``; exit 1 if any tool failed to define."""
    with collect_definition_problems() as problems:
        obj, _ = load_target(target)
    tools = [t for t in find_tools(obj) if not isinstance(t, BrokenTool)]
    reports = [report(t) for t in tools]
    if not reports and not problems:
        raise _usage_error(f"no tools found in {target}")
    if as_json:
        print(json.dumps(
            {
                "tools": [r.as_json() for r in reports],
                "errors": [
                    {"tool": p.name, "file": _short(p.file), "line": p.line, "message": p.message}
                    for p in problems
                ],
            },
            indent=2,
        ))
    else:
        _print_human(reports, problems)
    return 1 if problems else 0
