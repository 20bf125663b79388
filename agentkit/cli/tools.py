"""``agentkit tools inspect``: show exactly what a model is told about each tool."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from agentkit.cli.targets import (
    DEFINITION_PROBLEMS_STATUS,
    load_tools,
    print_problems,
    short_path,
    source_of,
)
from agentkit.core.contracts.ports import Tool
from agentkit.core.contracts.traits import traits_of
from agentkit.tools.registry import is_bare_function_tool

__all__ = ["ToolReport", "inspect_command", "report"]


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
    bare_function: bool = False

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
            "bare_function": self.bare_function,
        }


def report(tool: Tool) -> ToolReport:
    """What the model is shown of ``tool``."""
    schema = tool.schema
    traits = traits_of(tool)
    return ToolReport(
        name=tool.name,
        description=schema.description if schema is not None else tool.description,
        parameters=dict(schema.parameters) if schema is not None else None,
        side_effecting=traits.side_effecting,
        idempotent=traits.idempotent,
        requires_approval=traits.requires_approval,
        advertised=schema is not None,
        source=source_of(tool),
        bare_function=is_bare_function_tool(tool),
    )


_BARE_NOTE = (
    "  [plain function: taken as side_effecting=False; declare it with "
    "@tool(side_effecting=...)]"
)


def _print_human(reports: Iterable[ToolReport]) -> None:
    for item in reports:
        flags = (
            f"side_effecting={item.side_effecting} idempotent={item.idempotent} "
            f"requires_approval={item.requires_approval}"
        )
        print(f"{item.name}  ({item.source})")
        print(f"  {flags}{'' if item.advertised else '  [not advertised: schema is None]'}")
        if item.bare_function:
            print(_BARE_NOTE)
        print(f"  description ({len(item.description)} chars):")
        for line in item.description.splitlines() or [""]:
            print(f"    {line}" if line else "")
        if item.parameters is not None:
            print(f"  parameters: {json.dumps(item.parameters)}")
        print()


def inspect_command(target: str, *, as_json: bool = False) -> int:
    """Print every tool found at ``target``; status 1 if any is defined wrongly."""
    loaded = load_tools(target, command="agentkit tools inspect")
    reports = [report(t) for t in loaded.tools]
    if as_json:
        print(json.dumps(
            {
                "tools": [r.as_json() for r in reports],
                "errors": [
                    {
                        "tool": p.name,
                        "file": short_path(p.file),
                        "line": p.line,
                        "message": p.message,
                    }
                    for p in loaded.problems
                ],
            },
            indent=2,
        ))
    else:
        _print_human(reports)
        print_problems(loaded.problems)
    return DEFINITION_PROBLEMS_STATUS if loaded.problems else 0

