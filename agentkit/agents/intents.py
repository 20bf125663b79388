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
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentkit.agents.tool_messages import render_result
from agentkit.core.contracts.media import Media
from agentkit.core.contracts.ports import Tool
from agentkit.core.contracts.types import Message, ToolCall, ToolRequest
from agentkit.core.policies.idempotent import idempotency_key
from agentkit.core.runtime.context import RunContext

if TYPE_CHECKING:
    from agentkit.tools.registry import ToolRegistry

__all__ = ["Intent", "Settled", "intent_key", "settle_interrupted", "unknown_outcome"]


@dataclass(frozen=True, slots=True)
class Intent:
    """A side-effecting call that started, and its outcome once it ended."""

    call_id: str
    """The model's call id."""
    tool: str
    """The tool's name."""
    arguments_sha256: str
    """Hash of the canonical JSON of the arguments it ran with."""
    outcome: Message | None = None
    """The tool-result message, once the call returned; None while it runs."""


def intent_key(run_key: str, call_id: str) -> str:
    """The store key of a call's intent in the run checkpointed under ``run_key``."""
    return f"intent:{run_key}:{call_id}"


def unknown_outcome(tool: str, why: str) -> str:
    """The tool result the model reads for a call that may or may not have acted."""
    return (
        f"The outcome of this call to {tool!r} is unknown: the worker running it stopped "
        "(it crashed or was killed) after the call started and before its result was "
        f"recorded, so it may or may not have taken effect. It was not run again: {why}. "
        "Check whether it took effect before repeating it."
    )


@dataclass(frozen=True, slots=True)
class Settled:
    """What the intents say about the calls a crash interrupted."""

    answered: Mapping[str, Message]
    """Calls with a known outcome (recorded, or replayed from ``idempotent()``), and,
    under ``auto`` autonomy, calls answered as unknown."""
    unknown: tuple[str, ...]
    """Calls that may have acted, held for a person (``gated``/``manual`` autonomy)."""


async def settle_interrupted(
    ctx: RunContext,
    run_key: str,
    calls: Sequence[ToolCall],
    interrupted: Collection[str],
    registry: ToolRegistry,
) -> Settled:
    """Decide, from their intents, what happens to the ``interrupted`` calls of the
    open turn ``calls`` before any of them runs again (see the module docstring)."""
    answered: dict[str, Message] = {}
    unknown: list[str] = []
    for call in calls:
        if call.id not in interrupted or call.name not in registry:
            continue
        stored = await ctx.store.get(intent_key(run_key, call.id))
        if not isinstance(stored, Intent):
            continue  # it never started: it runs now
        if stored.outcome is not None:
            answered[call.id] = stored.outcome
            continue
        tool = registry.get(call.name)
        if getattr(tool, "idempotent", False):
            continue  # declared safe to repeat: it runs again
        replayed = await _recorded_result(ctx, call, tool)
        if replayed is not None:
            answered[call.id] = replayed
        elif ctx.autonomy in ("gated", "manual"):
            unknown.append(call.id)
        else:
            why = unknown_outcome(call.name, f"{call.name!r} is not declared idempotent")
            answered[call.id] = _message(call, why, is_error=True)
    return Settled(answered, tuple(unknown))


async def _recorded_result(ctx: RunContext, call: ToolCall, tool: Tool) -> Message | None:
    """The result ``idempotent()`` recorded for this call before the crash, if any."""
    request = ToolRequest(call.name, call.arguments, tool, True, call_id=call.id)
    value = await ctx.store.get(idempotency_key(request, ctx))
    if value is None:
        return None
    content, attached = render_result(value)
    return _message(call, content, is_error=False, attached=attached)


def _message(
    call: ToolCall, content: str, *, is_error: bool, attached: tuple[Media, ...] = ()
) -> Message:
    return Message(
        role="tool", content=content, tool_call_id=call.id, name=call.name, is_error=is_error,
        attachments=attached,
    )
