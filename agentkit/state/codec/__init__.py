"""The store format, under the name it has always had: :mod:`agentkit.core.codec`
defines it (in the core, so that the in-memory store below every context can use it)."""

from agentkit.core.codec import FORMAT_VERSION, dumps, loads, register

__all__ = ["FORMAT_VERSION", "dumps", "loads", "register"]
