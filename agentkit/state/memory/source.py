"""The memory-source seam: what an agent recalls before it starts on a task."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from agentkit.core.runtime.context import RunContext

__all__ = ["MemoryItem", "MemorySource", "WritableMemorySource", "check_memory"]


@dataclass(frozen=True, slots=True)
class MemoryItem:
    """One thing remembered, as a source returns it for a query."""

    content: str
    """The remembered text."""
    source: str
    """Where it came from: a file path, a tool name, a document id."""
    score: float = 1.0
    """How well it matches the query, higher is better; comparable within one source."""


@runtime_checkable
class MemorySource(Protocol):
    """Anything an agent can recall from: ``Agent(memory=...)`` queries it with the task."""

    async def query(
        self, text: str, k: int, ctx: RunContext | None
    ) -> Sequence[MemoryItem]:
        """At most ``k`` items relevant to ``text``, best first."""
        ...


@runtime_checkable
class WritableMemorySource(MemorySource, Protocol):
    """A memory source that can also be told new things."""

    async def write(self, items: Sequence[MemoryItem], ctx: RunContext | None) -> None:
        """Remember ``items``, so later queries can find them."""
        ...


def check_memory(memory: object, k: int) -> None:
    """Check ``Agent(memory=..., memory_k=...)``: a memory source (or None) and how many
    of its items a run recalls."""
    if memory is not None and not isinstance(memory, MemorySource):
        raise TypeError(
            f"Agent(memory=...) takes a memory source (an object with "
            f"`async def query(text, k, ctx)`, e.g. FileMemory), got {memory!r}"
        )
    if k < 1:
        raise ValueError(f"memory_k must be at least 1, got {k}")
