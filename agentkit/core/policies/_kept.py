"""A cache's producer that refuses to keep a call that waits for a person.

``idempotent()`` and ``memoize()`` keep what their producer returns. A call that waits
(a :class:`~agentkit.core.contracts.types.Waiting`) has no result yet and runs again
when the person has answered, so the producer raises :class:`NotKept` instead: the
store keeps nothing (as for a failure) and the cache hands the value on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentkit.core.contracts.ports import ToolHandler
from agentkit.core.contracts.types import ToolRequest, Waiting

if TYPE_CHECKING:
    from agentkit.core.runtime.context import RunContext

__all__ = ["NotKept", "produce"]


class NotKept(Exception):
    """Carries a value the cache must pass on without storing it."""

    def __init__(self, value: Waiting) -> None:
        self.value = value
        super().__init__(value.what)


async def produce(call_next: ToolHandler, request: ToolRequest, ctx: RunContext) -> Any:
    """``call_next``'s value; raises :class:`NotKept` for a call that waits."""
    value = await call_next(request, ctx)
    if type(value) is Waiting:
        raise NotKept(value)
    return value
