"""HistoryPolicy: how much of a conversation's history a run carries to the model.

History is cut into turns, each starting at a ``user`` message (the task of that turn).
Tool results always follow the assistant message that asked for them, with no user
message in between, so cutting before a user message never separates a tool call from
its result. Trimming drops whole turns, oldest first, until what is left fits both
bounds; the turn that does not fit and everything older go. ``system`` messages in the
history are kept wherever they are, and the agent's own system prompt is never part of
the history, so neither is ever trimmed.

Tokens are estimated, not counted: about four characters per token (rounded up) over a
message's text, its tool calls' names and JSON arguments, and a tool result's name,
plus four tokens per message for the role and framing. That is close for English prose
and code, and errs high for most, so a budget set a little under the model's window
leaves room; languages with many tokens per character (Chinese, Japanese) run over it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from agentkit.core.contracts.types import Message

__all__ = ["HistoryPolicy", "estimate_tokens", "turn_bounds"]

_CHARS_PER_TOKEN = 4
_PER_MESSAGE = 4


def estimate_tokens(message: Message) -> int:
    """The token estimate :class:`HistoryPolicy` uses for one message."""
    chars = len(message.content) + len(message.name or "")
    for call in message.tool_calls:
        chars += len(call.name) + len(json.dumps(dict(call.arguments), default=str))
    return _PER_MESSAGE + -(-chars // _CHARS_PER_TOKEN)


def turn_bounds(messages: Sequence[Message]) -> list[tuple[int, int]]:
    """``(start, end)`` of each turn of ``messages``: a turn starts at a user message, and
    messages before the first one are a turn of their own. Never empty but for ``()``."""
    if not messages:
        return []
    starts = [i for i, m in enumerate(messages) if m.role == "user"]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    return list(zip(starts, [*starts[1:], len(messages)], strict=True))


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryPolicy:
    """Bounds on the history a run starts from: ``Agent(history=HistoryPolicy(...))``.

    None means no bound. The new task, the agent's prompt and ``system`` messages are
    not counted against the bounds and never trimmed.
    """

    max_messages: int | None = None
    """At most this many history messages (system messages not counted)."""
    max_tokens: int | None = None
    """At most this many estimated tokens of history (see :func:`estimate_tokens`)."""

    def __post_init__(self) -> None:
        for name in ("max_messages", "max_tokens"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 0
            ):
                raise ValueError(
                    f"HistoryPolicy.{name} must be a non-negative int or None, got {value!r}"
                )

    def trim(self, history: Sequence[Message]) -> tuple[Message, ...]:
        """``history`` without its oldest turns, as few dropped as the bounds allow."""
        messages = tuple(history)
        if self.max_messages is None and self.max_tokens is None:
            return messages
        bounds = turn_bounds(messages)
        kept_from = len(messages)
        count = tokens = 0
        for start, end in reversed(bounds):
            turn = [m for m in messages[start:end] if m.role != "system"]
            count += len(turn)
            tokens += sum(estimate_tokens(m) for m in turn)
            if (self.max_messages is not None and count > self.max_messages) or (
                self.max_tokens is not None and tokens > self.max_tokens
            ):
                break
            kept_from = start
        pinned = tuple(m for m in messages[:kept_from] if m.role == "system")
        return pinned + _without_orphans(messages[kept_from:])


def _without_orphans(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """Drop tool results at the head whose call is not in ``messages`` (only possible
    when a caller's own history starts with them)."""
    asked = {c.id for m in messages for c in m.tool_calls}
    return tuple(m for m in messages if m.role != "tool" or m.tool_call_id in asked)
