"""Intents: a side-effecting call's record that it started, and later how it ended.

Before the body of a call that changes the world starts, the run stores an
:class:`Intent` (call id, tool, argument hash) under a plain key of the context's store;
when the call returns, the intent is rewritten with its outcome (the tool-result message),
and once the checkpoint holds that message the intent is deleted. Only ``set``, ``get``
and ``delete`` are used, so every store keeps intents.

A worker can die at any point. On ``recover``, a call of the open turn that has no
answer in the checkpoint is looked up:

- no intent: it never started; it runs.
- an intent with an outcome: it finished; its recorded result is used, the body does
  not run again.
- an intent without an outcome: it started and nobody knows how it ended. It runs again
  only when that is provably safe: the tool is declared ``idempotent=True``, or an
  ``idempotent()`` record of its result exists (which is then used). Otherwise it is not
  run again: under ``auto`` autonomy the model is told the outcome is unknown; under
  ``gated`` or ``manual`` the run suspends (``reason="outcome_unknown"``) for a person
  to approve a re-run or reject it.

:func:`settle` applies that rule to one call; agent runs and workflow tool steps both
use it (a workflow has no model to tell, so its unknown steps always wait for a person).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from agentkit.core.contracts.ports import Tool
from agentkit.core.contracts.traits import traits_of
from agentkit.core.contracts.types import ToolCall, ToolRequest
from agentkit.core.runtime.context import RunContext

__all__ = ["Intent", "Settlement", "intent_key", "settle", "start_intent", "unknown_outcome"]

Settlement = Literal["run", "finished", "replayed", "unknown"]
"""How an interrupted call stands: it may ``run`` (it never started, or is safe to
repeat); it ``finished`` (its recorded outcome is used); ``idempotent()`` recorded its
result, which is ``replayed``; or its outcome is ``unknown`` and it must not run again
unasked."""


@dataclass(frozen=True, slots=True)
class Intent:
    """A side-effecting call that started, and its outcome once it ended."""

    call_id: str
    """The model's call id."""
    tool: str
    """The tool's name."""
    arguments_sha256: str
    """Hash of the canonical JSON of the arguments it ran with."""
    outcome: Any = None
    """How the call ended, once it returned: the tool-result message of an agent's
    call, the output of a workflow's tool step; None while it runs."""


def intent_key(run_key: str, call_id: str) -> str:
    """The store key of a call's intent in the run checkpointed under ``run_key``."""
    return f"intent:{run_key}:{call_id}"


_CRASHED = (
    "the worker running it stopped (it crashed or was killed) after the call started and "
    "before its result was recorded"
)


def unknown_outcome(tool: str, why: str, what: str | None = None) -> str:
    """The tool result the model reads for a call that may or may not have acted;
    ``what`` happened to it (by default: its worker crashed mid-call)."""
    return (
        f"The outcome of this call to {tool!r} is unknown: {what or _CRASHED}, so it may "
        f"or may not have taken effect. It was not run again: {why}. "
        "Check whether it took effect before repeating it."
    )


async def start_intent(
    ctx: RunContext, run_key: str, call: ToolCall, arguments: Mapping[str, Any]
) -> str:
    """Record that ``call`` of the run under ``run_key`` is about to start; returns the
    arguments' hash (to write the outcome under the same intent)."""
    from agentkit.core.policies._keys import hash_arguments

    digest = hash_arguments(arguments)
    await ctx.store.set(intent_key(run_key, call.id), Intent(call.id, call.name, digest))
    return digest


async def settle(
    ctx: RunContext, run_key: str, call: ToolCall, tool: Tool
) -> tuple[Settlement, Any]:
    """How ``call`` of the run under ``run_key``, interrupted by a crash, stands by its
    intent, with the recorded outcome (``finished``) or result (``replayed``)."""
    stored = await ctx.store.get(intent_key(run_key, call.id))
    if not isinstance(stored, Intent):
        return "run", None  # it never started
    if stored.outcome is not None:
        return "finished", stored.outcome
    if traits_of(tool).idempotent:
        return "run", None  # declared safe to repeat
    from agentkit.core.policies.idempotent import idempotency_key

    request = ToolRequest(call.name, call.arguments, tool, True, call_id=call.id)
    value = await ctx.store.get(idempotency_key(request, ctx))
    return ("unknown", None) if value is None else ("replayed", value)
