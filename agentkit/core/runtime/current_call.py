"""The tool call a task is running, for code deep inside a tool that needs to know.

An agent run sets it around each tool call: the one value that describes the call in
progress. A tool that talks to another process (an MCP server asking back for a model
completion or for a person's answer) reads the run's model and any answers a person
gave on resume; a sub-run the call delegates to (an agent used as a tool) reads the
calling run's checkpoint key, and on resume which suspended sub-run to continue with
which decisions. It is a context variable, so concurrent calls of one turn each see
their own.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from agentkit.core.contracts.frozen import FrozenDict

__all__ = ["CurrentCall", "current_call"]


@dataclass(frozen=True, slots=True)
class CurrentCall:
    """The call in progress, as the agent loop describes it to the tool."""

    call_id: str
    """The model's id for the call."""
    model: str
    """The model the run uses (``Agent(model=...)``)."""
    answers: Mapping[str, Any] = field(default_factory=FrozenDict)
    """A person's answers to the questions this call asked before it was suspended, by
    question text."""
    run_key: str = ""
    """The checkpoint key of the run making the call; a sub-run the call delegates to is
    checkpointed under a key derived from it. Empty once a sub-run has taken it (one
    call starts one sub-run) or outside a run that checkpoints."""
    wake: Any = None
    """On resume, the suspended sub-run this call continues (an agents ``SubRun``);
    None when the call starts afresh."""
    decisions: Mapping[str, Any] = field(default_factory=FrozenDict)
    """The decisions the woken sub-run continues with, by its own call ids."""
    again: bool = False
    """The call was interrupted by a crash and runs again: a sub-run it had started
    continues from its checkpoint instead of starting afresh."""


current_call: ContextVar[CurrentCall | None] = ContextVar("agentkit_current_call", default=None)
"""The :class:`CurrentCall` of the running task, or None outside an agent's tool call."""
