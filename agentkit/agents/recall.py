"""Recall: what an agent's ``memory=`` adds to the system prompt of a run's requests.

When a run starts or resumes, its memory source is queried with the run's task, and
the best items become one block after the agent's prompt. Every engine calls
:func:`recall`: the lifecycle in-process, a Temporal activity on a worker.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from agentkit.core.runtime.context import RunContext

if TYPE_CHECKING:
    from agentkit.state.memory.source import MemoryItem, MemorySource

__all__ = ["Remembering", "memory_prompt", "recall"]


class Remembering(Protocol):
    """What recall reads of an agent."""

    @property
    def name(self) -> str: ...
    @property
    def prompt(self) -> str: ...
    @property
    def memory(self) -> MemorySource | None: ...
    @property
    def memory_k(self) -> int: ...


def _quote(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def memory_prompt(items: Sequence[MemoryItem]) -> str:
    """Recalled items as the block appended to the system prompt ("" for none)."""
    if not items:
        return ""
    blocks = "\n".join(
        f'<memory source="{_quote(item.source)}">\n{item.content}\n</memory>' for item in items
    )
    return (
        "Notes recalled from your memory for this task (they may be out of date):\n"
        f"<memories>\n{blocks}\n</memories>"
    )


async def recall(agent: Remembering, task: str, ctx: RunContext) -> str:
    """The system-prompt addition for ``task``: the memory's best items, or ""."""
    if agent.memory is None:
        return ""
    items = tuple(await agent.memory.query(task, agent.memory_k, ctx))[: agent.memory_k]
    ctx.emit("memory.recalled", agent=agent.name, sources=[item.source for item in items])
    block = memory_prompt(items)
    return ("\n\n" if block and agent.prompt else "") + block
