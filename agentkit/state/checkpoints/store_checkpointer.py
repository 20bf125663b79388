"""StoreCheckpointer: checkpoints kept in any Store's versioned slots."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from agentkit.core.contracts.ports import Checkpointer, Store
from agentkit.state.media_refs import by_reference, by_value, holds_media
from agentkit.state.stores.memory import InMemoryStore

if TYPE_CHECKING:
    from agentkit.core.contracts.runs import RunRecord
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
        state, version = await self.store.get_versioned(f"checkpoint:{key}")
        return await by_value(self.store, state), version

    async def save(self, key: str, state: Any, *, expected_version: int) -> int:
        """Compare-and-set ``state`` over ``expected_version``; the new version.

        Media in the state's messages are written once, as blobs the checkpoint refers
        to (:mod:`agentkit.state.media_refs`), not again at every step; a state without
        any is written as it is, without a coroutine to find that out."""
        stored = await by_reference(self.store, state) if holds_media(state) else state
        return await self.store.set_versioned(
            f"checkpoint:{key}", stored, expected_version=expected_version
        )

    def save_with_run(
        self, key: str, state: Any, *, expected_version: int, record: RunRecord
    ) -> Awaitable[int]:
        """:meth:`save`, with the run's registry record written in the same write (its
        store's ``set_versioned_with_run``: one round trip on PostgreSQL, one
        transaction on SQLite); the record is written only if the checkpoint is.

        A run's claim and end come here: a state without media is handed to the store's
        own write (its awaitable, not a coroutine around it: a frame less)."""
        write: Callable[..., Awaitable[int]] = self.store.set_versioned_with_run  # type: ignore[attr-defined]
        if holds_media(state):
            return self._with_media(write, key, state, expected_version, record)
        return write(f"checkpoint:{key}", state, expected_version=expected_version, record=record)

    async def _with_media(
        self, write: Callable[..., Awaitable[int]], key: str, state: Any,
        expected_version: int, record: RunRecord,
    ) -> int:
        stored = await by_reference(self.store, state)
        return await write(
            f"checkpoint:{key}", stored, expected_version=expected_version, record=record
        )

    def __repr__(self) -> str:
        return f"StoreCheckpointer({self.store!r})"
