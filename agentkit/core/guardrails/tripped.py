"""A tripped guardrail as the run error that ends the run, and as its audit record.

A trip ends the run like any other run error (``stop_reason="guardrail"``): the loop
raises :class:`GuardrailTripped` wherever the trip happens (the input, a tool call's
arguments or result, the final answer) and the lifecycle stops the run on it. Before
that, :func:`record_trip` writes the trip where the run's tool calls are audited (a
:class:`GuardrailRecord` in the log of the chain's ``audit()``) and on the open span.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentkit.core.contracts.errors import RunError
from agentkit.core.guardrails.running import GuardrailTrip
from agentkit.core.policies.audit import audit_log_of
from agentkit.core.runtime.spans import add_span_event

if TYPE_CHECKING:
    from agentkit.core.runtime.context import RunContext

__all__ = ["GuardrailRecord", "GuardrailTripped", "record_trip"]

_log = logging.getLogger("agentkit.audit")


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


async def record_trip(ctx: RunContext, trip: GuardrailTrip, call_id: str | None = None) -> None:
    """Write ``trip`` to the audit log (when the tool chain has an ``audit()``) and as an
    ``agentkit.guardrail`` event on the open span. A failing store is logged, never
    raised: the run stops on the trip either way."""
    add_span_event("agentkit.guardrail", {
        "agentkit.guardrail.name": trip.guardrail,
        "agentkit.guardrail.where": trip.where,
        "agentkit.guardrail.reason": trip.reason,
    })
    found = audit_log_of(ctx)
    if found is None:
        return
    store, log = found
    record = GuardrailRecord(
        run_id=ctx.correlation_id, scope=ctx.scope.key(), guardrail=trip.guardrail,
        where=trip.where, reason=trip.reason, time=time.time(), call_id=call_id,
        info=trip.info,
    )
    try:
        await store.append(log, record)
    except Exception:
        _log.warning("audit store failed to append a guardrail record; continuing",
                     exc_info=True)
