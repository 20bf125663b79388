"""Recovery: settling the calls a crash interrupted before a recovered run goes on.

A run taken over by ``recover`` knows which calls of its open turn were open and
unanswered (``AgentRun.interrupted``). Before any of them runs again, each is looked up
by its intent (see :mod:`agentkit.agents.intents`): a finished call gets its recorded
answer, one safe to repeat runs again (continuing a sub-run it had started), and one
that may have acted is answered as unknown, or held for a person under ``gated`` or
``manual`` autonomy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentkit.agents.decisions import PendingKind
from agentkit.agents.effects import outcome_message
from agentkit.agents.intents import intent_key, settle, unknown_outcome
from agentkit.agents.outcomes import Answered
from agentkit.agents.run import AgentRun
from agentkit.agents.tool_messages import render_result
from agentkit.core.contracts.types import ToolCall

if TYPE_CHECKING:
    from agentkit.tools.registry import ToolRegistry

__all__ = ["settle_interrupted"]


async def settle_interrupted(run: AgentRun, registry: ToolRegistry) -> bool:
    """Settle ``run``'s interrupted calls; True when the run suspended for a person to
    decide about calls that may have acted."""
    interrupted, run.interrupted = run.interrupted, frozenset()
    unknown: list[str] = []
    settled: list[ToolCall] = []
    abandoned: list[ToolCall] = []
    for call in run.open_calls:
        if call.id not in interrupted or call.id in run.answered or call.name not in registry:
            continue
        how, value = await settle(run.ctx, run.key, call, registry.get(call.name))
        if how == "run":
            run.rerun = run.rerun | {call.id}  # a sub-run it started continues
        elif how == "finished":
            run.answered[call.id] = value
            settled.append(call)
        elif how == "replayed":
            content, attached = render_result(value)
            run.answered[call.id] = outcome_message(call, Answered(content, False, attached))
            settled.append(call)
        elif run.ctx.autonomy in ("gated", "manual"):
            unknown.append(call.id)
        else:
            why = unknown_outcome(call.name, f"{call.name!r} is not declared idempotent")
            run.answered[call.id] = outcome_message(call, Answered(why, True))
            abandoned.append(call)
    if unknown:
        held: dict[str, PendingKind] = {
            cid: kind for cid, kind in run.pending.items() if cid not in run.answered
        }
        held.update(dict.fromkeys(unknown, "unknown_outcome"))
        await run.suspend(held)
    else:
        await run.save()
    # The checkpoint holds these answers now, so their intents have served.
    for call in settled:
        await run.ctx.store.delete(intent_key(run.key, call.id))
    for call in abandoned:
        await run.abandon(call)
    return bool(unknown)
