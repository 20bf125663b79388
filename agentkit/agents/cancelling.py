"""Cancelling a run that waits for a person: it ends ``cancelled`` with none of its
pending calls decided (the lifecycle's own functions, kept beside it for its size)."""

from __future__ import annotations

from agentkit.agents.lifecycle import LifecycleAgent, _loaded, _run
from agentkit.agents.result import AgentResult
from agentkit.agents.saves import save_registered
from agentkit.core.contracts.errors import RunCancelled, RunNotResumable, RunTakenOver
from agentkit.core.runtime.context import RunContext

__all__ = ["cancel_suspended"]


async def cancel_suspended(
    agent: LifecycleAgent, run_id: str, ctx: RunContext, reason: str, *, key: str | None = None
) -> AgentResult:
    """End the suspended run ``run_id`` as ``cancelled``, deciding none of its pending
    calls (none of them runs). The claim is the same compare-and-set as a decision's,
    so of a cancel and a decision at once exactly one wins; the loser gets
    :class:`RunNotResumable`, and any later decision is told the run is cancelled."""
    state, version, key, checkpointer = await _loaded(
        agent, run_id, ctx, "suspended", key, None, None
    )
    ctx = ctx if ctx.correlation_id == run_id else ctx.for_run(run_id)
    run = _run(agent, ctx, state, key, version, checkpointer, None)
    run.status, run.error = "cancelled", RunCancelled(reason)
    result = run.result()
    try:  # the checkpoint and its record, in one write where the store can
        await save_registered(run, result, claim=True)
    except RunTakenOver:
        raise RunNotResumable(run_id, "another worker resumed it first") from None
    return result
