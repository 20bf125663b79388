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

from dataclasses import dataclass

from agentkit.core.contracts.types import Message

__all__ = ["Intent", "intent_key", "unknown_outcome"]


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
