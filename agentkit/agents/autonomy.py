"""Which tool calls pause for a human: the autonomy tier meets the tool's declarations."""

from __future__ import annotations

from agentkit.core.contracts.ports import Tool
from agentkit.core.contracts.traits import traits_of
from agentkit.core.contracts.types import Autonomy, ToolCall

__all__ = ["Autonomy", "key_step", "should_gate"]


def should_gate(autonomy: Autonomy | str, requires_approval: bool, key_step: bool) -> bool:
    """True when a call must wait for a human decision.

    ============  ==========================================================
    ``manual``    every call pauses
    ``gated``     side-effecting calls (``key_step``) and approval-requiring ones pause
    ``auto``      only tools that declare ``requires_approval=True`` pause
    ============  ==========================================================

    An author's ``requires_approval=True`` is honoured at every tier: autonomy only adds
    gating, it never removes it.
    """
    tier = Autonomy(autonomy)
    if requires_approval:
        return True
    if tier is Autonomy.MANUAL:
        return True
    if tier is Autonomy.GATED:
        return key_step
    return False


def key_step(tool: Tool, call: ToolCall) -> bool:
    """Whether this call changes the world: the tool's declaration, unless the tool can
    tell that this particular call only reads (as FileTool's ``view`` does)."""
    traits = traits_of(tool)
    return traits.side_effecting and not traits.is_read_only_call(call.arguments)
