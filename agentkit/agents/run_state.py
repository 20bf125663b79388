"""RunState: the checkpoint of one agent run, saved after every step.

It holds everything needed to continue in another process: the transcript, the open
turn's tool calls and the answers already in (so a recovered run never re-runs a call
that finished), the calls waiting for a human and the decisions given for them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agentkit.agents.decisions import PendingKind
from agentkit.agents.result import Suspended
from agentkit.core.contracts._slot_init import slot_init
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.types import NO_USAGE, Message, ModelSettings, ToolCall, Usage
from agentkit.core.guardrails.running import GuardrailTrip

__all__ = ["PendingKind", "RunState", "RunStatus", "SubRun", "with_usage"]

RunStatus = Literal[
    "running", "suspended", "complete", "max_iterations", "cancelled", "budget_exceeded",
    "guardrail", "error",
]

TERMINAL: frozenset[str] = frozenset(
    {"complete", "max_iterations", "cancelled", "budget_exceeded", "guardrail", "error"}
)


@dataclass(frozen=True, slots=True)
class SubRun:
    """A suspended nested run that a call of the run above waits on."""

    key: str
    """The nested run's checkpoint key."""
    agent: str
    """The nested agent's (or workflow's) name."""
    suspended: Suspended
    """What it waits for, call ids relative to it (``"s3"``, or ``"s3/t1"`` deeper)."""


_NO_MODELS: FrozenDict[str, Usage] = FrozenDict()
"""Shared by every run that has not called a model yet (a run holds one per step)."""


def with_usage(
    by_model: FrozenDict[str, Usage], model: str, usage: Usage
) -> FrozenDict[str, Usage]:
    """``by_model`` with ``usage`` added to ``model``'s: a new mapping, replaced once per
    model call, so every checkpoint and the result share it rather than copy it."""
    earlier = by_model.get(model)
    return FrozenDict({**by_model, model: usage if earlier is None else earlier + usage})


@slot_init
@dataclass(frozen=True, slots=True)
class RunState:
    """A snapshot of an agent run."""

    run_id: str
    """The run (the context's correlation id)."""
    agent: str
    """The agent's name."""
    status: RunStatus
    """Where the run stands."""
    messages: tuple[Message, ...] = ()
    """The transcript so far (the system prompt is the agent's, not saved)."""
    usage: Usage = NO_USAGE
    """Usage so far."""
    usage_by_model: FrozenDict[str, Usage] = field(default=_NO_MODELS, kw_only=True)
    """Usage so far per model that answered (``LLMResult.model``)."""
    steps: int = 0
    """Model calls made."""
    open_calls: tuple[ToolCall, ...] = ()
    """The latest turn's tool calls, until every one has its answer in the transcript."""
    answered: tuple[Message, ...] = ()
    """Tool results of ``open_calls`` already in (a recovered run does not redo them)."""
    pending: FrozenDict[str, PendingKind] = field(default_factory=FrozenDict)
    """Call id to what it waits for: ``approval`` of a gated call, ``input`` for
    ``ask_human``, ``unknown_outcome``: a call a crash interrupted that may have acted,
    for a person to allow or refuse running again, or ``elicitation``: a question a tool
    asked mid-call."""
    decisions: Mapping[str, Any] = field(default_factory=FrozenDict)
    """The human's decisions for pending calls, given on resume."""
    repairs: int = 0
    """Output repair turns used."""
    settings: ModelSettings | None = None
    """The run's own ``settings=`` overrides, if any; the agent's defaults are read from
    the agent whenever a request is built, so a checkpoint does not freeze them."""
    session: str | None = None
    """The session the run's turn is appended to when it completes."""
    history_len: int = 0
    """How many of ``messages`` are history the run started from; the rest is its turn."""
    session_version: int = 0
    """The session's version when the run read its history (its number of turn rows;
    for a checkpoint without ``session_rows``, the old whole-session record's version)."""
    session_rows: bool = False
    """The history is not in ``messages`` (which start at the run's task): it is read
    again from the session's turn rows up to ``session_version`` when the run continues,
    so no checkpoint carries the conversation. False in checkpoints written before
    sessions were kept as rows, whose ``messages`` start with the history."""
    nested: FrozenDict[str, SubRun] = field(default_factory=FrozenDict)
    """Call id to the suspended sub-run it waits on (an agent used through ``as_tool``):
    those calls are pending as ``nested``; see :mod:`agentkit.agents.nested`."""
    owner: str = ""
    """The worker process that wrote this checkpoint (see
    :mod:`agentkit.state.owners`): ``recover`` refuses to take a run from a live one."""
    questions: Mapping[str, Any] = field(default_factory=FrozenDict)
    """Call id to the question a tool asked mid-call (``message``, ``schema``, ``tool``,
    ``source``) and the ``answers`` it already has, by question text."""
    guardrail: GuardrailTrip | None = field(default=None, kw_only=True)
    """The guardrail that ended the run (status ``guardrail``), so the result read back
    from the checkpoint says which one, where and why."""
