"""Checks on ModelSettings that every provider makes the same way."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentkit.core.contracts.errors import UnsupportedSetting
from agentkit.core.contracts.types import ChatRequest
from agentkit.tools.declarations.adapt import thaw

__all__ = ["extra_fields", "tool_choice"]

_MODES = ("auto", "none", "required")


def tool_choice(request: ChatRequest, provider: str) -> str | None:
    """The request's ``tool_choice`` to send: None when unset, or when it is ``auto`` or
    ``none`` and no tools are offered (there is nothing to choose from). Refuses a
    choice that needs a tool the request does not offer."""
    choice = request.settings.tool_choice
    if choice is None:
        return None
    offered = [schema.name for schema in request.tools]
    if choice in _MODES:
        if not offered:
            if choice == "required":
                raise UnsupportedSetting(
                    provider,
                    "tool_choice",
                    "'required' needs tools, and this request offers none (an agent "
                    "without a tool-calling cognition makes a single call with no tools)",
                )
            return None
        return choice
    if choice not in offered:
        raise UnsupportedSetting(
            provider,
            "tool_choice",
            f"it names tool {choice!r}, which this request does not offer; accepted: "
            f"'auto', 'none', 'required' or one of {offered}",
        )
    return choice


def extra_fields(extra: Mapping[str, Any], params: Mapping[str, Any], provider: str) -> Any:
    """``extra`` as plain JSON fields for the request body, refusing any that would
    overwrite a field agentkit sets from the request itself."""
    clash = sorted(set(extra) & set(params))
    if clash:
        raise UnsupportedSetting(
            provider,
            "extra",
            f"it sets {clash}, which agentkit already sets from the request; use the "
            "ModelSettings field (or the agent's prompt, model and tools) instead",
        )
    return thaw(extra)
