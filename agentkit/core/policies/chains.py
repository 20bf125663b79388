"""The default middleware chains ``make_ctx`` installs.

Tool chain, outermost first::

    tracing()      one span per call, around everything else
    audit()        one record per call, seeing refusals and replays
    egress()       internal URLs refused before anything is spent
    meter()        the budget checked before, charged after
    retry()        transient failures tried again ...
    idempotent()   ... replaying a side effect that already happened

Chat chain: ``tracing()``, ``meter()``, ``retry()``.
"""

from __future__ import annotations

from agentkit.core.contracts.ports import ChatMiddleware, ToolMiddleware
from agentkit.core.policies.audit import audit
from agentkit.core.policies.egress import egress
from agentkit.core.policies.idempotent import idempotent
from agentkit.core.policies.meter import meter
from agentkit.core.policies.retry import retry
from agentkit.core.policies.tracing import tracing

__all__ = ["default_chat_chain", "default_tool_chain"]


def default_tool_chain() -> list[ToolMiddleware]:
    """``[tracing(), audit(), egress(), meter(), retry(), idempotent()]``."""
    return [tracing(), audit(), egress(), meter(), retry(), idempotent()]


def default_chat_chain() -> list[ChatMiddleware]:
    """``[tracing(), meter(), retry()]``."""
    return [tracing(), meter(), retry()]
