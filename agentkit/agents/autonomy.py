"""Which tool calls pause for a human: the autonomy tier meets the tool's declarations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from agentkit.agents.decisions import PendingKind
from agentkit.agents.nested import refuse_path_id
from agentkit.core.contracts.ports import Tool
from agentkit.core.contracts.traits import traits_of
from agentkit.core.contracts.types import Autonomy, ToolCall

if TYPE_CHECKING:
    from agentkit.tools.registry import ToolRegistry

__all__ = ["Autonomy", "gated_calls", "key_step", "should_gate"]


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
    # An Autonomy already is one; only a str goes through the enum's (slow) lookup.
    tier = autonomy if type(autonomy) is Autonomy else Autonomy(autonomy)
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


def gated_calls(
    calls: Sequence[ToolCall], registry: ToolRegistry, autonomy: Autonomy | str
) -> dict[str, PendingKind]:
    """The calls of a turn that must wait for a human, by call id: ``input`` for a
    question to a person, ``approval`` for a gated call."""
    pending: dict[str, PendingKind] = {}
    for call in calls:
        if call.name not in registry or refuse_path_id(call) is not None:
            continue  # becomes an error result the model reads; nothing to approve
        traits = traits_of(registry.get(call.name))
        changes = not traits.is_read_only_call(call.arguments)
        if traits.asks_human:
            pending[call.id] = "input"
        elif should_gate(autonomy, traits.requires_approval, changes):
            pending[call.id] = "approval"
    return pending
