"""A2A (the Agent2Agent protocol): remote A2A agents as agentkit tools.

``A2AAgent(url, token=...)`` reads a remote agent's card; ``.as_tool()`` makes it a
tool whose remote ``input-required`` suspends the calling run (see ``docs/a2a.md``).
The wire format both directions share is :mod:`agentkit.integrations.a2a.protocol`.
httpx (the ``a2a`` extra) is imported when an agent is made, not with this package.
"""

from __future__ import annotations

from agentkit.integrations.a2a.errors import (
    A2ACardError,
    RemoteError,
    RemoteTaskFailed,
    RemoteUnreachable,
)
from agentkit.integrations.a2a.remote import GENERIC_CALL, A2AAgent, A2AResult

__all__ = [
    "GENERIC_CALL",
    "A2AAgent",
    "A2ACardError",
    "A2AResult",
    "RemoteError",
    "RemoteTaskFailed",
    "RemoteUnreachable",
]
