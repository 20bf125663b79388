"""Decisions and cancels in audit()'s log: one :class:`DecisionRecord` each, written by
:class:`~agentkit.serve.runs.ServedRuns` once the engine accepted it, so every face (the
JSON API, AG-UI, A2A, the console) and both engines record them the same way."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from agentkit.agents.decisions import decision_for
from agentkit.core.contracts.runs import RunRecord
from agentkit.core.policies.audit import DecisionRecord, audit_log_of
from agentkit.core.runtime.context import RunContext

__all__ = ["audit_cancel", "audit_decisions"]

_log = logging.getLogger("agentkit.audit")


async def audit_decisions(
    base: RunContext, record: RunRecord, decisions: Mapping[str, Any], by: str, at: float
) -> None:
    """Append one record per decided call of ``record``'s run, accepted at ``at``."""
    kinds = {call.call_id: call.kind for call in record.pending}
    await _append(base, [
        # A call id the run does not list as pending is a sub-run's, decided as a mapping.
        DecisionRecord(run_id=record.run_id, scope=record.scope, call_id=call_id,
                       kind=decision_for(kinds.get(call_id, "nested"), value).kind,
                       by=by, time=at)
        for call_id, value in decisions.items()
    ])


async def audit_cancel(base: RunContext, record: RunRecord, by: str, at: float) -> None:
    """Append the record of ``by`` cancelling ``record``'s run at ``at``."""
    await _append(base, [DecisionRecord(run_id=record.run_id, scope=record.scope,
                                        call_id=None, kind="cancel", by=by, time=at)])


async def _append(base: RunContext, records: list[DecisionRecord]) -> None:
    # As for audit()'s own records: no audit() in the chain, no log; a failing store is
    # logged and never undoes a decision the run already took.
    found = audit_log_of(base)
    if found is None:
        return
    store, log = found
    try:
        for one in records:
            await store.append(log, one)
    except Exception:
        _log.warning("audit store failed to append a decision record; continuing",
                     exc_info=True)
