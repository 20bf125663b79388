"""Tool jobs and tool outcomes: the values that cross the effects seam for a tool call.

The loop hands the effects one frozen :class:`ToolJob` per call and gets one frozen
outcome back: :class:`Answered` (a result the model reads, error or not),
:class:`Asked` (the tool asked a person something mid-call), :class:`Parked` (a
sub-run it delegated to waits for a person), :class:`Stopped` (a refusal that stops the
run: budget, cancellation) or :class:`Unknown` (the call may or may not have acted).
Waiting is an outcome like any other, never an exception.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agentkit.agents.run_state import SubRun
from agentkit.core.contracts._slot_init import slot_init
from agentkit.core.contracts.errors import RunError
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.media import Media
from agentkit.core.contracts.types import Scope, ToolCall

__all__ = ["Answered", "Asked", "Parked", "Stopped", "ToolJob", "ToolOutcome", "Unknown"]


@slot_init
@dataclass(frozen=True, slots=True)
class ToolJob:
    """One tool call for the effects to carry out."""

    run_id: str
    """The run making the call."""
    run_key: str
    """The run's checkpoint key: the call's intent is stored under it, and a sub-run the
    call delegates to is keyed from it."""
    scope: Scope
    """The tenant the call acts for."""
    autonomy: str
    """The run's autonomy tier."""
    call: ToolCall
    """The model's call."""
    arguments: Mapping[str, Any]
    """The (frozen) arguments to run with: the model's, or a person's edit."""
    model: str = ""
    """The run's model (an MCP server's sampling request is answered with it)."""
    answers: Mapping[str, Any] = field(default_factory=FrozenDict)
    """A person's answers to questions the call asked earlier, by question text."""
    wake: SubRun | None = None
    """On resume, the suspended sub-run this call continues."""
    decisions: Mapping[str, Any] = field(default_factory=FrozenDict)
    """The decisions ``wake`` continues with."""
    note: str = ""
    """Text put before a successful result (a person edited the arguments)."""
    again: bool = False
    """The call was interrupted by a crash and runs again: a sub-run it had started
    continues from its checkpoint."""
    spent: tuple[int, int] = (0, 0)
    """The run's budget ledger so far: metered calls admitted, nano-dollars charged
    (an engine whose calls run in other processes starts each call's budget from it)."""
    timeout: float | None = None
    """The run's limit in seconds for a call whose tool declares no ``timeout=``
    (``Agent(tool_timeout=)``)."""


@slot_init
@dataclass(frozen=True, slots=True)
class Answered:
    """The call ended with a result the model reads."""

    content: str
    """The result text."""
    is_error: bool = False
    """Whether it reports a failure."""
    attachments: tuple[Media, ...] = ()
    """Media the tool returned."""
    recorded: bool = False
    """An intent holds this outcome until the run's checkpoint does (see
    :mod:`agentkit.agents.intents`)."""
    kind: Literal["answered"] = "answered"


@dataclass(frozen=True, slots=True)
class Asked:
    """The call stopped to ask a person something (an MCP server's elicitation); it runs
    again with the answer."""

    message: str
    """The question."""
    schema: Mapping[str, Any] | None = None
    """The JSON Schema of the answer, if any."""
    tool: str = ""
    """The tool that asked."""
    source: str = ""
    """Who asked (the MCP server)."""
    kind: Literal["asked"] = "asked"


@dataclass(frozen=True, slots=True)
class Parked:
    """A sub-run the call delegated to waits for a person; the call waits with it."""

    sub: SubRun
    """The suspended sub-run."""
    kind: Literal["parked"] = "parked"


@dataclass(frozen=True, slots=True)
class Stopped:
    """A refusal that stops the run (budget, cancellation); the call did not run."""

    error: RunError = field(compare=False)
    """The refusal."""
    kind: Literal["stopped"] = "stopped"


@dataclass(frozen=True, slots=True)
class Unknown:
    """The call started and ended without a result (its worker died, or it ran past its
    timeout): it may or may not have acted, and it is not run again."""

    why: str
    """Why it is not run again."""
    what: str | None = None
    """What happened to it, when it was not a crash (it ran past its timeout)."""
    kind: Literal["unknown"] = "unknown"


ToolOutcome = Answered | Asked | Parked | Stopped | Unknown
"""What one tool call came to."""
