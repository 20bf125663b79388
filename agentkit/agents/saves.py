"""A run's durable saves that carry its registry record: the claim, and the end.

Where the checkpointer and the registry share one store that writes a checkpoint and a
run record together (``set_versioned_with_run``: one statement on PostgreSQL, one
transaction on SQLite), each is one write; elsewhere the checkpoint, then the record.
Which saves must be durable at all is :mod:`agentkit.agents.durability`'s subject.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentkit.agents.effects import InProcessEffects
from agentkit.agents.registry import register_run, run_record
from agentkit.agents.summarize import Summarize
from agentkit.core.contracts.errors import RunTakenOver
from agentkit.core.contracts.state_errors import VersionConflict

if TYPE_CHECKING:
    from agentkit.agents.conversation import Opening
    from agentkit.agents.result import AgentResult
    from agentkit.agents.run import AgentRun

__all__ = ["claims_blind", "save_registered"]


async def save_registered(
    run: AgentRun, result: AgentResult | None = None, *, claim: bool = False
) -> None:
    """Make ``run``'s checkpoint durable and write its registry record, in one write
    where the store can: at the ``claim`` (always written), and when the run stops
    advancing (written if a step is held; the record is written either way).

    Raises :class:`RunTakenOver` when another worker wrote the run's checkpoint first."""
    effects = run.effects
    if not isinstance(effects, InProcessEffects):
        # An engine that keeps its own history writes no registry record from inside it.
        if claim or run.unsaved:
            await run.save()
        return
    if not (claim or run.unsaved):
        await register_run(run, result)
        return
    checkpointer = effects.with_run
    if checkpointer is None or run.ctx.depth != 0:
        await run.save()
        await register_run(run, result)
        return
    try:
        run.version = await checkpointer.save_with_run(
            run.key, run.snapshot(), expected_version=run.version,
            record=run_record(run, result),
        )
    except VersionConflict:
        raise RunTakenOver(run.run_id) from None
    run.unsaved = False


def claims_blind(agent: Any, opening: Opening) -> bool:
    """Whether a new run may claim at version 0 before reading its checkpoint (most runs
    are new, so the read is saved): only when nothing before the claim reads or writes
    anything else, or calls a model (no session, no memory to recall, no summarising);
    a checkpoint found there is judged as it would have been, then claimed over."""
    return (
        opening.session is None
        and agent.memory is None
        and not isinstance(agent.history, Summarize)
    )
