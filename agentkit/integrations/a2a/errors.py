"""What can go wrong talking to a remote A2A agent, by who can fix it.

::

    AgentkitError
    ├── A2ACardError (ValueError)    the card cannot be used: no transport this client
    │                                speaks, a security scheme it cannot satisfy; or
    │                                it could not be read (at construction)
    ├── RemoteError                  the remote answered a JSON-RPC error (code, message)
    └── RemoteTaskFailed             the remote task ended failed, cancelled or rejected
    ConnectionError
    └── RemoteUnreachable            no answer: refused, dropped, timed out

``RemoteUnreachable`` is a ``ConnectionError`` and deliberately not an
``AgentkitError``: :func:`~agentkit.core.contracts.errors.is_transient` counts it as
transient, so ``retry()`` tries again, within its own rule that a side-effecting call
is repeated only when it is idempotent (or under an ``idempotent()`` layer).
"""

from __future__ import annotations

from typing import Any

from agentkit.core.contracts.errors import AgentkitError

__all__ = ["A2ACardError", "RemoteError", "RemoteTaskFailed", "RemoteUnreachable"]


class A2ACardError(AgentkitError, ValueError):
    """The remote agent's card cannot be read or used; nothing was sent to the agent."""

    def __init__(self, url: str, problem: str) -> None:
        self.url = url
        self.problem = problem
        super().__init__(f"A2A agent card {url}: {problem}")


class RemoteError(AgentkitError):
    """The remote agent answered a request with a JSON-RPC error."""

    def __init__(self, agent: str, method: str, code: int | None, message: str,
                 data: Any = None) -> None:
        self.agent, self.method, self.code = agent, method, code
        self.remote_message, self.data = message, data
        super().__init__(f"A2A agent {agent!r} refused {method} (JSON-RPC error {code}): "
                         f"{message}")


class RemoteTaskFailed(AgentkitError):
    """The remote task ended without an answer (failed, cancelled, rejected, or asking
    for authentication this client cannot give)."""

    def __init__(self, agent: str, task_id: str, state: str, detail: str) -> None:
        self.agent, self.task_id, self.state, self.detail = agent, task_id, state, detail
        super().__init__(f"A2A agent {agent!r}: task {task_id!r} ended {state}"
                         + (f": {detail}" if detail else ""))


class RemoteUnreachable(ConnectionError):
    """The remote agent could not be reached, or the connection ended mid-request."""

    def __init__(self, agent: str, url: str, detail: str) -> None:
        self.agent, self.url, self.detail = agent, url, detail
        super().__init__(f"A2A agent {agent!r} at {url} is unreachable: {detail}")
