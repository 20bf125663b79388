"""StoreCheckpointer: checkpoints kept in any Store's versioned slots."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentkit.core.contracts.ports import Checkpointer, Store
from agentkit.state.stores.memory import InMemoryStore

if TYPE_CHECKING:
    from agentkit.core.runtime.context import RunContext

__all__ = ["StoreCheckpointer", "checkpointer_for", "missing_checkpoint_hint"]


def checkpointer_for(ctx: RunContext) -> Checkpointer:
    """The context's checkpointer, or one over its store."""
    checkpointer = ctx.checkpointer
    if checkpointer is None:
        return StoreCheckpointer(ctx.store)
    assert hasattr(checkpointer, "save"), f"ctx.checkpointer {checkpointer!r} is not a Checkpointer"
    return checkpointer


def missing_checkpoint_hint(checkpointer: object) -> str:
    """Why no checkpoint was found, when the store explains it (it is in memory, so a
    context made later has a different one); empty otherwise."""
    if isinstance(getattr(checkpointer, "store", None), InMemoryStore):
        return (
            ". If the run was started with another context, that is why: an InMemoryStore "
            "belongs to the context it was made with (make_ctx() and make_test_ctx() make a "
            "new one each time), so resume with the context that started the run, or give "
            "both contexts one durable store, such as make_ctx(llm, store=SQLiteStore(path))"
        )
    return ""


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
