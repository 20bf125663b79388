"""The store every context can default to: :class:`InMemoryStore`, in the core so that
``make_ctx()`` and ``make_test_ctx()`` need nothing from ``agentkit.state``
(``agentkit.state.stores`` re-exports it beside the durable stores)."""

from agentkit.core.stores.memory import InMemoryStore

__all__ = ["InMemoryStore"]
