"""What an agent run returns: AgentResult, and Suspended when it waits for a human."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.types import Message, ToolCall, Usage

__all__ = ["AgentResult", "StopReason", "Suspended"]

StopReason = Literal[
    "complete", "suspended", "max_iterations", "cancelled", "budget_exceeded", "error"
]
"""Why a run stopped; docs/agents.md says what each value means."""


@dataclass(frozen=True, slots=True)
class Suspended:
    """A run paused for a human; resume it with ``agent.resume(run_id, decisions, ctx)``."""

    run_id: str
    """The run to resume."""
    pending: tuple[ToolCall, ...]
    """The calls waiting for a decision, with the exact (frozen) arguments to approve."""
    reason: Literal["awaiting_approval", "awaiting_input", "outcome_unknown"] = (
        "awaiting_approval"
    )
    """Why: a gated tool call, a question for the human (``ask_human``), or a call a
    crash interrupted whose outcome is unknown (``"approve"`` runs it again,
    ``"reject"`` does not)."""


@dataclass(frozen=True, slots=True)
class AgentResult:
    """The outcome of ``agent.run`` or ``agent.resume``."""

    output: Any
    """The answer: text, or the ``Agent(output=...)`` type; None when the run did not
    complete."""
    stop_reason: StopReason
    """Why the run stopped: ``complete`` (it answered), ``suspended`` (it waits for a
    human: see :attr:`suspended`), ``max_iterations``, ``cancelled``, ``budget_exceeded``
    or ``error`` (``evals["error"]`` holds it)."""
    usage: Usage = field(default_factory=Usage)
    """Tokens and cost of the whole run so far."""
    evals: Mapping[str, Any] = field(default_factory=FrozenDict)
    """Signals about the run: ``"suspended"`` holds a :class:`Suspended`; ``"error"``
    the error that stopped it."""
    messages: tuple[Message, ...] = ()
    """The transcript, oldest first (without the system prompt)."""
    run_id: str = ""
    """The run's id."""
    steps: int = 0
    """Model calls made."""

    @property
    def suspended(self) -> Suspended | None:
        """What the run waits for when ``stop_reason == "suspended"``, else None (the same
        :class:`Suspended` as ``evals["suspended"]``, which keeps working)."""
        value = self.evals.get("suspended")
        return value if isinstance(value, Suspended) else None
