"""What a model thought: the reasoning setting, the reasoning parts of a message, the delta.

Reasoning models return two things besides their answer: readable text (a summary of
their thinking, where the provider gives one) and opaque state (Anthropic's thinking
signatures and redacted thinking, OpenAI's reasoning items with ``encrypted_content``,
Gemini's thought signatures on function calls). The opaque state must go back to the
provider, unchanged, on the later requests of a tool-use turn, or the provider refuses
the turn or forgets what it was doing. Each :class:`ReasoningPart` is tagged with the
provider that produced it, and a provider sends back only its own parts: opaque state
from one provider is never sent to another (a run that switches provider drops it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agentkit.core.contracts.frozen import FrozenDict, freeze_arguments

__all__ = ["Effort", "Reasoning", "ReasoningDelta", "ReasoningPart"]

Effort = Literal["low", "medium", "high"]
_EFFORTS = ("low", "medium", "high")


@dataclass(frozen=True, slots=True, kw_only=True)
class Reasoning:
    """``ModelSettings(reasoning=...)``: think before answering, and how hard.

    Each provider maps it to its own parameter (Anthropic ``thinking`` with a token
    budget, OpenAI ``reasoning.effort`` and ``summary``); a provider or model that has
    no such parameter refuses the request with :class:`UnsupportedSetting`.
    """

    effort: Effort = "medium"
    """How much to think: ``"low"``, ``"medium"`` or ``"high"``."""
    budget_tokens: int | None = None
    """An explicit thinking budget in tokens, for providers that take one (Anthropic);
    None derives it from ``effort``."""
    summary: bool = False
    """Ask for a readable summary of the thinking, where the provider makes one."""

    def __post_init__(self) -> None:
        if self.effort not in _EFFORTS:
            raise ValueError(
                f"Reasoning.effort must be 'low', 'medium' or 'high', got {self.effort!r}"
            )
        budget = self.budget_tokens
        if budget is not None and (
            isinstance(budget, bool) or not isinstance(budget, int) or budget < 1
        ):
            raise ValueError(
                f"Reasoning.budget_tokens must be a positive int or None, got {budget!r}"
            )
        if not isinstance(self.summary, bool):
            raise ValueError(f"Reasoning.summary must be True or False, got {self.summary!r}")


@dataclass(frozen=True, slots=True)
class ReasoningPart:
    """One piece of a model's reasoning, as the provider that produced it returned it."""

    provider: str
    """The provider that produced it (``"anthropic"``, ``"openai"``); only that provider
    is ever sent it back."""
    text: str = ""
    """The readable thinking or its summary; empty where the provider gives none."""
    state: Mapping[str, Any] = field(default_factory=FrozenDict)
    """The provider's opaque state, deeply frozen, sent back exactly as it came (e.g.
    ``{"type": "thinking", "signature": ...}``, or an OpenAI reasoning item's ``id`` and
    ``encrypted_content``). Never read it: its shape is the provider's."""

    def __post_init__(self) -> None:
        if not isinstance(self.provider, str) or not self.provider:
            raise ValueError(
                f"ReasoningPart.provider must name the provider that produced it, got "
                f"{self.provider!r}"
            )
        if not isinstance(self.text, str):
            raise TypeError(f"ReasoningPart.text must be a str, got {type(self.text).__name__}")
        if not isinstance(self.state, Mapping):
            raise TypeError(
                "ReasoningPart.state must be a mapping (the provider's JSON object), got "
                f"{type(self.state).__name__}"
            )
        object.__setattr__(self, "state", freeze_arguments(self.state))


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of streamed reasoning text (thinking or its summary)."""

    text: str
    """The new text."""
    kind: Literal["reasoning"] = "reasoning"
