"""Stores: key-value state with single-flight claims, append-only logs and versioned
slots for checkpoints."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentkit.state.stores.memory import InMemoryStore

if TYPE_CHECKING:
    from agentkit.state.stores.postgres import PostgresStore
    from agentkit.state.stores.sqlite import SQLiteStore

__all__ = ["InMemoryStore", "PostgresStore", "SQLiteStore"]


def __getattr__(name: str) -> Any:
    # SQLiteStore pulls in sqlite3 and a thread pool, PostgresStore its driver; only pay
    # for them when asked.
    if name == "SQLiteStore":
        from agentkit.state.stores.sqlite import SQLiteStore

        return SQLiteStore
    if name == "PostgresStore":
        from agentkit.state.stores.postgres import PostgresStore

        return PostgresStore
    raise AttributeError(f"module 'agentkit.state.stores' has no attribute {name!r}")
