"""Collecting tool definition errors instead of stopping at the first one.

``@tool`` raises :class:`ToolDefinitionError` at import, which is what a program wants.
A tool *inspector* wants every problem in a module at once, each with its file and
line; inside :func:`collect_definition_problems` the decorator records the problem and
returns a :class:`BrokenTool` placeholder so the import carries on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from agentkit.core.contracts.errors import ToolDefinitionError

__all__ = [
    "BrokenTool",
    "DefinitionProblem",
    "collect_definition_problems",
    "collecting",
    "refuse",
]


@dataclass(frozen=True, slots=True)
class DefinitionProblem:
    """One tool that could not be defined, and where."""

    name: str
    file: str
    line: int
    message: str


_collector: ContextVar[list[DefinitionProblem] | None] = ContextVar(
    "agentkit_definition_problems", default=None
)


@contextmanager
def collect_definition_problems() -> Iterator[list[DefinitionProblem]]:
    """Within the block, ``@tool`` records definition errors instead of raising them."""
    problems: list[DefinitionProblem] = []
    token = _collector.set(problems)
    try:
        yield problems
    finally:
        _collector.reset(token)


class BrokenTool:
    """Stands where a tool failed to define while problems are being collected."""

    __slots__ = ("description", "error", "name")

    schema = None
    output_schema = None
    side_effecting = True
    requires_approval = True

    def __init__(self, name: str, error: ToolDefinitionError) -> None:
        self.name = name
        self.description = ""
        self.error = error

    async def run(self, args: Mapping[str, Any], ctx: object) -> Any:
        """Refuses: the tool was never defined."""
        raise self.error


def collecting() -> bool:
    """True inside :func:`collect_definition_problems`."""
    return _collector.get() is not None


def refuse(error: ToolDefinitionError, fn: Callable[..., Any] | None) -> BrokenTool:
    """Raise ``error``, or record it (with ``fn``'s file and line) when collecting."""
    problems = _collector.get()
    if problems is None:
        raise error
    code = getattr(fn, "__code__", None)
    name = getattr(fn, "__name__", "<tool>")
    problems.append(
        DefinitionProblem(
            name=name,
            file=code.co_filename if code is not None else "<unknown>",
            line=code.co_firstlineno if code is not None else 0,
            message=str(error),
        )
    )
    return BrokenTool(name, error)
