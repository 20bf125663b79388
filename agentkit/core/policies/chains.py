"""The default middleware chains ``make_ctx`` installs."""

from __future__ import annotations

from agentkit.core.contracts.ports import ChatMiddleware, ToolMiddleware
from agentkit.core.policies.idempotent import idempotent

__all__ = ["default_chat_chain", "default_tool_chain"]


def default_tool_chain() -> list[ToolMiddleware]:
    """The tool chain of a production context, outermost first: ``[idempotent()]``."""
    return [idempotent()]


def default_chat_chain() -> list[ChatMiddleware]:
    """The chat chain of a production context, outermost first (empty for now)."""
    return []
