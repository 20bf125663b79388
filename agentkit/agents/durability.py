"""When a run's checkpoint must be durable, and which of its writes may wait.

A run saves a checkpoint after every step, but a step that carries nothing a crash
could repeat or lose need not reach the store on its own: a model's answer, a read-only
call's result, a turn of answers put together. :meth:`AgentRun.save` with
``durable=False`` holds such a checkpoint in the run, and the next durable save writes
it (the run's compare-and-set is over the version it last wrote, so a worker that took
the run over meanwhile still wins). A checkpoint is durable:

- at the claim, with the run's registry record, so one worker owns the run (a new run
  with nothing else to read first claims at version 0 without reading its checkpoint);
- before a call that changes the world (or delegates to a sub-run) starts, so a crash
  after it started finds the call open and settles it by its intent, never asking the
  model again and running a new call in its place;
- when a side-effecting call's answer is in, before its intent is deleted;
- at a suspension, and when the run stops advancing, with its registry record, before
  the caller is given the result (and before a session's turn is appended).

A crash anywhere else costs only work safe to do again: the model is asked again, a
read-only call runs again. ``docs/stores.md`` has the table. Holding applies to runs on
:class:`~agentkit.agents.effects.InProcessEffects`; an engine that keeps its own
history (Temporal) is handed every checkpoint. The durable saves that carry the run's
registry record are in :mod:`agentkit.agents.saves`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from agentkit.agents.autonomy import key_step
from agentkit.core.contracts.types import ToolCall

if TYPE_CHECKING:
    from agentkit.tools.registry import ToolRegistry

__all__ = ["needs_durable_checkpoint"]


def needs_durable_checkpoint(calls: Iterable[ToolCall], registry: ToolRegistry) -> bool:
    """Whether one of ``calls`` must not start before the checkpoint naming it is
    durable: it changes the world, or it runs a sub-run (whose own calls might)."""
    for call in calls:
        if call.name not in registry:
            continue  # answered with an error, never run
        tool = registry.get(call.name)
        if key_step(tool, call) or getattr(tool, "delegate", None) is not None:
            return True
    return False
