"""How a cache refuses to keep a call that waits for a person.

``idempotent()`` and ``memoize()`` keep what their producer returns. A call that waits
(a :class:`~agentkit.core.contracts.types.Waiting`) has no result yet and runs again
when the person has answered, so the producer raises :class:`NotKept` instead: the
store keeps nothing (as for a failure) and the cache hands the value on.
"""

from __future__ import annotations

from agentkit.core.contracts.types import Waiting

__all__ = ["NotKept"]


class NotKept(Exception):
    """Carries a value the cache must pass on without storing it."""

    def __init__(self, value: Waiting) -> None:
        self.value = value
        super().__init__(value.what)
