"""InMemoryStore, under the name it has always had: :mod:`agentkit.core.stores.memory`
defines it (in the core, so that ``make_ctx()`` can default to it)."""

from agentkit.core.stores.memory import InMemoryStore

__all__ = ["InMemoryStore"]
