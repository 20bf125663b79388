"""Stores: key-value state with single-flight claims and append-only logs."""

from agentkit.state.stores.memory import InMemoryStore

__all__ = ["InMemoryStore"]
