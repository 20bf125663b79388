"""The run registry, as the lifecycle keeps it: a record of each top-level run, written
when the run is claimed (opened, resumed, recovered) and when it stops advancing
(complete, suspended, stopped).

Faces (``agentkit serve``, a console) list runs and the calls that wait for a person from
these records (:meth:`~agentkit.core.contracts.ports.Store.list_runs`), never from
checkpoints. The checkpoint stays the truth: a record that could not be written is
logged and the run goes on, and the next write of the run puts it right.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from agentkit.agents.tool_messages import _jsonable
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.runs import RunRecord, WaitingCall
from agentkit.core.contracts.state_errors import NotStorable
from agentkit.state.codec import dumps

if TYPE_CHECKING:
    from agentkit.agents.result import AgentResult, Suspended
    from agentkit.agents.run import AgentRun
    from agentkit.agents.workflow_state import WorkflowResult

__all__ = ["register_run", "result_record", "run_record", "waiting_calls"]

_log = logging.getLogger("agentkit.registry")


def waiting_calls(suspended: Suspended, since: float) -> tuple[WaitingCall, ...]:
    """The calls ``suspended`` waits on, as the inbox lists them."""
    return tuple(
        WaitingCall(
            call_id=call.id, tool=call.name, arguments=FrozenDict(call.arguments),
            kind=suspended.kinds.get(call.id, "approval"),
            agents=tuple(suspended.agents.get(call.id, ())), since=since,
        )
        for call in suspended.pending
    )


def _data(output: Any) -> Any:
    # The record is data in the store: a structured output (a dataclass, a Pydantic
    # model) is kept as its JSON data, the shape its schema describes, so a face can
    # hand it on as data (A2A's data part); anything else that is not data, as its text.
    if output is None or type(output) is str:
        return output
    for form in (output, _jsonable(output)):
        try:
            dumps(form)
        except NotStorable:
            continue
        return form
    return str(output)


def run_record(run: AgentRun, result: AgentResult | None = None) -> RunRecord:
    """The registry record of ``run`` now (``result`` once it stopped advancing)."""
    now = time.time()
    status = run.status
    pending: tuple[WaitingCall, ...] = ()
    if status == "suspended":
        pending = waiting_calls(run.suspended(), now)
    error = None
    if result is not None and result.evals.get("error") is not None:
        error = str(result.evals["error"])
    return RunRecord(
        run_id=run.run_id, agent=run.agent.name, status=status, scope=run.ctx.scope.key(),
        created=now, updated=now, session=run.session, pending=pending,
        stop_reason=None if result is None else result.stop_reason,
        output=None if result is None or status != "complete" else _data(result.output),
        usage=run.usage, cost_usd=run.usage.cost_usd, error=error,
    )


def result_record(
    result: AgentResult | WorkflowResult, *, agent: str, scope: str, session: str | None,
    output: Any = None,
) -> RunRecord:
    """The registry record of a run that keeps no record of its own (a Temporal run, a
    workflow), from its latest result: the face that follows the run writes it.
    ``output`` is the run's answer once complete (an agent result's own by default)."""
    now = time.time()
    suspended = result.suspended
    error = result.evals.get("error")
    return RunRecord(
        run_id=result.run_id, agent=agent, status=result.stop_reason, scope=scope,
        created=now, updated=now, session=session,
        pending=() if suspended is None else waiting_calls(suspended, now),
        stop_reason=result.stop_reason,
        output=None if result.stop_reason != "complete" else _data(
            getattr(result, "output", None) if output is None else output),
        usage=result.usage, cost_usd=result.usage.cost_usd,
        error=None if error is None else str(error),
    )


async def register_run(run: AgentRun, result: AgentResult | None = None) -> None:
    """Write the record of ``run`` if it is a top-level run; never raises for the store."""
    if run.ctx.depth != 0:
        return
    try:
        await run.ctx.store.put_run(run_record(run, result))
    except Exception:  # the checkpoint is the truth; the next write repairs the record
        _log.warning("could not register run %r; continuing", run.run_id, exc_info=True)
