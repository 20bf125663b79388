"""What an evaluator sees (EvalContext) and what it gives back (Score).

An evaluator is a small class or a plain function ``(EvalContext) -> Score | bool |
float`` (or an awaitable of one). :func:`score` calls it and turns whatever it returned
into a :class:`Score`; an evaluator that raises becomes a Score with ``error`` set,
which never passes.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentkit.agents.result import AgentResult
from agentkit.core.contracts.types import ToolCall, Usage
from agentkit.core.policies.audit import AuditRecord

if TYPE_CHECKING:
    from agentkit.evals.case import Case

__all__ = ["EvalContext", "Evaluator", "Score", "evaluator_name", "score"]

_FLOAT_PASS = 0.5
"""A plain float an evaluator returns passes at this value or above."""


@dataclass(frozen=True, slots=True)
class Score:
    """One evaluator's verdict on one run."""

    value: float | None
    """The score: 1.0 / 0.0 for a pass / fail check, a judge's or a function's number;
    None when the evaluator failed."""
    passed: bool
    """Whether the run passed this check."""
    reason: str = ""
    """Why, in a sentence a person can act on ("" when there is nothing to say)."""
    error: str | None = None
    """The evaluator's own failure (``ValueError: ...``), when it raised: never a pass."""
    cost_usd: float = field(default=0.0, kw_only=True)
    """What the evaluator itself spent (an LLMJudge's model calls), apart from the agent."""

    @classmethod
    def check(cls, passed: bool, reason: str = "") -> Score:
        """A pass / fail score: 1.0 or 0.0."""
        return cls(1.0 if passed else 0.0, passed, reason)


@dataclass(frozen=True, slots=True)
class EvalContext:
    """Everything one evaluator may look at for one run (one turn of a multi-turn case)."""

    case: Case
    """The case being scored."""
    input: Any
    """What the agent was given on this turn."""
    expected: Any
    """What the case expects of this turn (``Case.expected``, or its entry for the turn)."""
    output: Any
    """The agent's answer (None when the run did not complete)."""
    result: AgentResult
    """The run's result: usage, steps, messages, stop reason, ``suspended``."""
    trajectory: tuple[ToolCall, ...]
    """The tool calls the model asked for on this turn, in order."""
    audit: tuple[AuditRecord, ...] | None
    """The audit records of this run; None when the context's tool chain has no audit()."""
    latency_s: float
    """Wall-clock seconds the run took."""
    turn: int = 0
    """Which turn this is, from 0 (always 0 for a single-turn case)."""

    @property
    def usage(self) -> Usage:
        """Tokens and cost of the run."""
        return self.result.usage

    @property
    def metadata(self) -> Mapping[str, Any]:
        """The case's metadata."""
        return self.case.metadata


Verdictlike = Score | bool | float
"""What an evaluator may return: a Score, a pass / fail, or a number (passing at 0.5)."""

Evaluator = Callable[[EvalContext], Verdictlike | Awaitable[Verdictlike]]
"""A class with ``__call__`` or a plain function; ``name`` (or ``__name__``) names it."""


def evaluator_name(evaluator: Evaluator) -> str:
    """The name a report files the evaluator's scores under."""
    name = getattr(evaluator, "name", None) or getattr(evaluator, "__name__", None)
    return str(name) if name else type(evaluator).__name__


async def score(evaluator: Evaluator, ctx: EvalContext) -> Score:
    """Run ``evaluator`` on ``ctx``; whatever it raises is a failed Score naming it."""
    try:
        value: Any = evaluator(ctx)
        if inspect.isawaitable(value):
            value = await value
        return _as_score(value)
    except Exception as exc:
        return Score(None, False, error=f"{type(exc).__name__}: {exc}")


def _as_score(value: Any) -> Score:
    if isinstance(value, Score):
        return value
    if isinstance(value, bool):
        return Score.check(value)
    if isinstance(value, int | float):
        number = float(value)
        return Score(number, number >= _FLOAT_PASS)
    raise TypeError(
        f"an evaluator returns a Score, a bool or a float, got {type(value).__name__} "
        f"{value!r}"
    )
