"""The single-flight wait every store shares, defined with the in-memory store in the
core (:mod:`agentkit.core.stores.inflight`)."""

from agentkit.core.stores.inflight import abandon_inflight, join_inflight

__all__ = ["abandon_inflight", "join_inflight"]
