"""Turns on the wire: the APIs that take a transcript as alternating role turns
(Anthropic's Messages, Bedrock's Converse, Gemini's contents) want consecutive items of
one role in one turn, such as the results of a turn's parallel tool calls."""

from __future__ import annotations

from typing import Any

__all__ = ["append_turn"]


def append_turn(out: list[dict[str, Any]], role: str, items: list[dict[str, Any]],
                key: str = "content") -> None:
    """Add ``items`` to ``out`` as a turn of ``role``, merged into the last turn when it
    is of the same role; ``key`` names the turn's list (``content``, or ``parts``)."""
    if out and out[-1]["role"] == role:
        out[-1][key].extend(items)
    else:
        out.append({"role": role, key: items})
