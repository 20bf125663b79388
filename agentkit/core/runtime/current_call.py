"""The tool call a task is running, for code deep inside a tool that needs to know.

An agent run sets it around each tool call. A tool that talks to another process (an
MCP server asking back for a model completion or for a person's answer) reads it to
learn the run's model and any answers a person gave on resume. It is a context
variable, so concurrent calls of one turn each see their own.
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


current_call: ContextVar[CurrentCall | None] = ContextVar("agentkit_current_call", default=None)
"""The :class:`CurrentCall` of the running task, or None outside an agent's tool call."""
