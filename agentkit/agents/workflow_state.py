"""The values of a workflow run: its steps, its checkpoint, its result and its error."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agentkit.agents.result import Suspended
from agentkit.agents.run_state import SubRun
from agentkit.core.contracts.errors import AgentkitError
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.types import Usage

__all__ = ["NodeInput", "WorkflowError", "WorkflowResult"]

NodeInput = Callable[[Mapping[str, Any]], Any]
"""Builds a step's input from its dependencies' outputs (and ``"task"``)."""


class WorkflowError(AgentkitError):
    """A workflow step failed; ``node`` names it and ``__cause__`` is the failure."""

    def __init__(self, workflow: str, node: str, reason: str) -> None:
        self.workflow = workflow
        self.node = node
        super().__init__(f"workflow {workflow!r}: step {node!r} failed: {reason}")


@dataclass(frozen=True, slots=True)
class _Gate:
    question: str


@dataclass(frozen=True, slots=True)
class _Node:
    name: str
    step: Any
    after: tuple[str, ...]
    input: NodeInput | None
    kind: Literal["agent", "function", "tool", "gate"]


@dataclass(frozen=True, slots=True)
class WorkflowResult:
    """The outcome of a workflow run."""

    outputs: Mapping[str, Any]
    """Each finished step's output, by step name."""
    usage: Usage = field(default_factory=Usage)
    """Usage of every agent step."""
    stop_reason: Literal["complete", "suspended", "cancelled"] = "complete"
    """``complete``, ``suspended`` at a human gate, or ``cancelled`` (its cancel token was
    set: it stopped before its next step; or it was cancelled while suspended)."""
    evals: Mapping[str, Any] = field(default_factory=FrozenDict)
    """``"suspended"`` holds a :class:`Suspended` whose pending calls are the gates."""
    skipped: tuple[str, ...] = ()
    """Steps not run because a gate before them was rejected."""
    terminal: tuple[str, ...] = ()
    """Steps no other step depends on, in declaration order."""
    run_id: str = ""
    """The run's id."""

    @property
    def suspended(self) -> Suspended | None:
        """The gates waiting for a human when ``stop_reason == "suspended"``, else None
        (the same :class:`Suspended` as ``evals["suspended"]``)."""
        value = self.evals.get("suspended")
        return value if isinstance(value, Suspended) else None

    @property
    def terminal_outputs(self) -> Mapping[str, Any]:
        """The outputs of the terminal steps that ran: what the workflow produced."""
        return {name: self.outputs[name] for name in self.terminal if name in self.outputs}


@dataclass(frozen=True, slots=True)
class _State:
    status: Literal["running", "suspended", "complete", "cancelled"]
    outputs: Mapping[str, Any]
    skipped: tuple[str, ...]
    pending: tuple[str, ...]
    decisions: Mapping[str, str]
    usage: Usage
    nested: Mapping[str, SubRun] = field(default_factory=FrozenDict)
    """Agent steps waiting on their suspended sub-run, by step name."""
