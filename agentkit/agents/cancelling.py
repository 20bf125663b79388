"""Cancelling a run that waits for a person: it ends ``cancelled`` with none of its
pending calls decided (the lifecycle's own functions, kept beside it for its size), an
agent's run or a workflow's."""

from __future__ import annotations

from agentkit.agents.lifecycle import LifecycleAgent, _loaded, _run
from agentkit.agents.result import AgentResult
from agentkit.agents.saves import save_registered
from agentkit.agents.workflow import Workflow, WorkflowResult, _Execution
from agentkit.core.contracts.errors import RunCancelled, RunNotResumable, RunTakenOver
from agentkit.core.contracts.state_errors import VersionConflict
from agentkit.core.runtime.context import RunContext
from agentkit.state.checkpoints.store_checkpointer import checkpointer_for

__all__ = ["cancel_suspended", "cancel_suspended_workflow"]


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


async def cancel_suspended_workflow(
    workflow: Workflow, run_id: str, ctx: RunContext
) -> WorkflowResult:
    """End the suspended workflow run ``run_id`` as ``cancelled``, deciding none of its
    gates (no step after them runs; the outputs of the steps that finished stay in its
    checkpoint). The write is a compare-and-set over the version the suspension was read
    at, as a decision's claim is, so of a cancel and a decision at once exactly one
    wins; the loser gets :class:`RunNotResumable`."""
    checkpointer = checkpointer_for(ctx)
    key = workflow._key(run_id)
    state, version = await workflow._load(checkpointer, run_id, want="suspended", key=key)
    ctx = ctx if ctx.correlation_id == run_id else ctx.for_run(run_id)
    execution = _Execution(workflow, ctx, checkpointer, key, version, state)
    try:
        await execution.save("cancelled")
    except VersionConflict:
        raise RunNotResumable(run_id, "another worker resumed it first") from None
    return execution.result("cancelled")
