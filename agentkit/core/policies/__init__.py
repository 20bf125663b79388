"""Policies: the middlewares a tool or model call passes through."""

from agentkit.core.contracts.errors import (
    BudgetExceeded,
    EgressRefused,
    UnpricedModel,
    is_transient,
)
from agentkit.core.policies.audit import AuditRecord, DecisionRecord, audit, audit_log_of
from agentkit.core.policies.budget import Budget
from agentkit.core.policies.chains import default_chat_chain, default_tool_chain
from agentkit.core.policies.circuit import CircuitOpen, circuit_breaker
from agentkit.core.policies.egress import check_url, egress
from agentkit.core.policies.idempotent import idempotent
from agentkit.core.policies.memoize import memoize
from agentkit.core.policies.meter import meter, metered
from agentkit.core.policies.prices import DEFAULT_PRICES, ModelPrice, PriceTable
from agentkit.core.policies.retry import exponential_backoff, retry, under_retry
from agentkit.core.policies.tracing import tracing

__all__ = [
    "DEFAULT_PRICES",
    "AuditRecord",
    "Budget",
    "BudgetExceeded",
    "CircuitOpen",
    "DecisionRecord",
    "EgressRefused",
    "ModelPrice",
    "PriceTable",
    "UnpricedModel",
    "audit",
    "audit_log_of",
    "check_url",
    "circuit_breaker",
    "default_chat_chain",
    "default_tool_chain",
    "egress",
    "exponential_backoff",
    "idempotent",
    "is_transient",
    "memoize",
    "meter",
    "metered",
    "retry",
    "tracing",
    "under_retry",
]
