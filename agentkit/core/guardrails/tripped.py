"""A tripped guardrail as the run error that ends the run, and as its audit record.

A trip ends the run like any other run error (``stop_reason="guardrail"``): the loop
raises :class:`GuardrailTripped` wherever the trip happens (the input, a tool call's
arguments or result, the final answer) and the lifecycle stops the run on it. Before
that, the run writes a :class:`GuardrailRecord` where its tool calls are audited (the
log of the chain's ``audit()``; see :mod:`agentkit.agents.guarding`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agentkit.core.contracts.errors import RunError
from agentkit.core.guardrails.running import GuardrailTrip

__all__ = ["GuardrailRecord", "GuardrailTripped"]


class GuardrailTripped(RunError):
    """A guardrail returned a :class:`~agentkit.core.guardrails.Tripwire`: the run stops
    with ``stop_reason="guardrail"``, and ``result.guardrail`` holds :attr:`trip`."""

    stop_reason = "guardrail"

    def __init__(self, run_id: str, trip: GuardrailTrip) -> None:
        self.run_id = run_id
        self.trip = trip
        super().__init__(
            f"run {run_id!r} stopped: guardrail {trip.guardrail} tripped on the "
            f"{trip.where}: {trip.reason}"
        )


@dataclass(frozen=True, slots=True)
class GuardrailRecord:
    """A tripped guardrail, in the audit log beside the runs' tool-call records."""

    run_id: str
    """The run it stopped."""
    scope: str
    """The tenant, as ``Scope.key()``."""
    guardrail: str
    """The guardrail's name."""
    where: str
    """``"input"``, ``"output"``, ``"tool <name> arguments"`` or ``"tool <name> result"``."""
    reason: str
    """The tripwire's reason."""
    time: float
    """When it tripped, in seconds since the epoch."""
    call_id: str | None = None
    """The tool call it stopped, for a tool guardrail."""
    info: Mapping[str, Any] | None = field(default=None)
    """What the check found (never the offending text: see ``Tripwire.info``)."""
