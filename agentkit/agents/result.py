"""What an agent run returns: AgentResult, and Suspended when it waits for a human."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agentkit.core.contracts._slot_init import slot_init
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.types import Message, ToolCall, Usage
from agentkit.core.guardrails.running import GuardrailTrip

__all__ = ["AgentResult", "StopReason", "Suspended"]

StopReason = Literal[
    "complete", "suspended", "max_iterations", "cancelled", "budget_exceeded", "guardrail",
    "error",
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
    """Why: a gated tool call, a question for the human (``ask_human``, or a tool's
    question mid-call), or a call a crash interrupted whose outcome is unknown
    (``"approve"`` runs it again, ``"reject"`` does not). With several kinds waiting, the
    first of ``outcome_unknown``, ``awaiting_input``, ``awaiting_approval``."""
    questions: Mapping[str, Any] = field(default_factory=FrozenDict)
    """Questions tools asked mid-call (an MCP server's elicitation), by call id: each
    has ``message``, ``schema`` (the JSON Schema of the answer, or None), ``tool`` and
    ``source``. Answer with ``{"action": "accept", "content": {...}}``, ``{"action":
    "decline"}``, ``{"action": "cancel"}``, or ``{"answer": "..."}`` for a one-field
    form."""
    # kinds and agents annotate the pending calls; two records with the same calls and
    # reason are equal whether or not they carry them (workflow gates, older checkpoints).
    kinds: Mapping[str, str] = field(default_factory=FrozenDict, kw_only=True, compare=False)
    """Per pending call id, what it waits for: ``"approval"``, ``"input"`` (an
    ``ask_human`` question: decide with ``{"answer": ...}``), ``"elicitation"`` (a
    tool's question mid-call, see ``questions``) or ``"unknown_outcome"``."""
    agents: Mapping[str, tuple[str, ...]] = field(
        default_factory=FrozenDict, kw_only=True, compare=False
    )
    """Per pending call id, the agents from the top-level run down to the one whose call
    waits, which is the last: ``("support", "billing")`` for ``"c1/s3"``, the call
    ``s3`` of billing, delegated to by support's call ``c1``."""

    def asked_by(self, call_id: str) -> str:
        """The name of the agent (or workflow) whose call ``call_id`` waits."""
        chain = self.agents.get(call_id)
        if chain is None:
            raise KeyError(
                f"call {call_id!r} is not pending; pending calls: {[c.id for c in self.pending]}"
            )
        return chain[-1]


@slot_init
@dataclass(frozen=True, slots=True)
class AgentResult:
    """The outcome of ``agent.run`` or ``agent.resume``."""

    output: Any
    """The answer: text, or the ``Agent(output=...)`` type; None when the run did not
    complete."""
    stop_reason: StopReason
    """Why the run stopped: ``complete`` (it answered), ``suspended`` (it waits for a
    human: see :attr:`suspended`), ``max_iterations``, ``cancelled``, ``budget_exceeded``,
    ``guardrail`` (see :attr:`guardrail`) or ``error`` (``evals["error"]`` holds it)."""
    usage: Usage = field(default_factory=Usage)
    """Tokens and cost of the whole run so far."""
    usage_by_model: Mapping[str, Usage] = field(default_factory=FrozenDict, kw_only=True)
    """The same, per model that answered (as the provider names it), each priced at its
    own model's price: with a :class:`~agentkit.providers.FallbackLLM`, which model
    answered how often."""
    evals: Mapping[str, Any] = field(default_factory=FrozenDict)
    """Signals about the run: ``"suspended"`` holds a :class:`Suspended`; ``"error"``
    the error that stopped it."""
    messages: tuple[Message, ...] = ()
    """The transcript, oldest first (without the system prompt)."""
    run_id: str = ""
    """The run's id."""
    steps: int = 0
    """Model calls made."""
    guardrail: GuardrailTrip | None = field(default=None, kw_only=True)
    """When ``stop_reason == "guardrail"``: which guardrail tripped, where (``"input"``,
    ``"output"``, ``"tool <name> arguments"`` / ``"tool <name> result"``) and why."""

    @property
    def suspended(self) -> Suspended | None:
        """What the run waits for when ``stop_reason == "suspended"``, else None (the same
        :class:`Suspended` as ``evals["suspended"]``, which keeps working)."""
        value = self.evals.get("suspended")
        return value if isinstance(value, Suspended) else None
