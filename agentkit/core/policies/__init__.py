"""Policies: the middlewares a tool or model call passes through."""

from agentkit.core.policies.chains import default_chat_chain, default_tool_chain
from agentkit.core.policies.idempotent import idempotent
from agentkit.core.policies.memoize import memoize

__all__ = ["default_chat_chain", "default_tool_chain", "idempotent", "memoize"]
