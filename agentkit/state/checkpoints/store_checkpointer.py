"""StoreCheckpointer: checkpoints kept in any Store's versioned slots."""

from __future__ import annotations

from typing import Any

from agentkit.core.contracts.ports import Store

__all__ = ["StoreCheckpointer"]


class StoreCheckpointer:
    """Keeps checkpoints in ``store`` under ``checkpoint:<key>``, versioned.

    A run's context uses one over its own store unless given another, so a durable
    store (SQLite) makes every run resumable with nothing more to configure.
    """

    __slots__ = ("store",)

    def __init__(self, store: Store) -> None:
        self.store = store

    async def load(self, key: str) -> tuple[Any, int]:
        """``(state, version)``; ``(None, 0)`` when never saved."""
        return await self.store.get_versioned(f"checkpoint:{key}")

    async def save(self, key: str, state: Any, *, expected_version: int) -> int:
        """Compare-and-set ``state`` over ``expected_version``; the new version."""
        return await self.store.set_versioned(
            f"checkpoint:{key}", state, expected_version=expected_version
        )

    def __repr__(self) -> str:
        return f"StoreCheckpointer({self.store!r})"
