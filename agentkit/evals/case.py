"""Case: what an agent is asked, and what a good answer looks like."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentkit.core.contracts.frozen import FrozenDict

__all__ = ["Case"]


class Case:
    """One thing to ask the agent: ``input`` (what ``Agent.run`` takes), or ``turns``
    (user inputs played one after another into one session, each turn scored).

    ``expected`` is what the evaluators compare with; for a multi-turn case it is None
    or a list with one entry per turn.
    """

    __slots__ = ("expected", "id", "input", "metadata", "turns")

    def __init__(
        self,
        input: Any = None,
        *,
        expected: Any = None,
        id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        turns: Sequence[Any] | None = None,
    ) -> None:
        if (input is None) == (turns is None):
            raise ValueError(
                f"case {id!r}: give exactly one of input= (one run) or turns=[...] (a "
                "conversation), got " + ("both" if input is not None else "neither")
            )
        if turns is not None:
            if isinstance(turns, str) or not isinstance(turns, Sequence) or not turns:
                raise ValueError(
                    f"case {id!r}: turns= takes a non-empty list of inputs, got {turns!r}"
                )
            if expected is not None and (
                not isinstance(expected, list | tuple) or len(expected) != len(turns)
            ):
                raise ValueError(
                    f"case {id!r}: a multi-turn case's expected= is None or a list with one "
                    f"entry per turn ({len(turns)}), got {expected!r}"
                )
        if id is not None and (not isinstance(id, str) or not id):
            raise ValueError(f"a case id is a non-empty string, got {id!r}")
        self.input = input
        self.expected = expected
        self.id = id
        self.metadata: Mapping[str, Any] = FrozenDict(metadata or {})
        self.turns: tuple[Any, ...] | None = None if turns is None else tuple(turns)

    @property
    def inputs(self) -> tuple[Any, ...]:
        """The inputs in play order: ``(input,)`` or the turns."""
        return self.turns if self.turns is not None else (self.input,)

    def expected_for(self, turn: int) -> Any:
        """What turn ``turn`` (from 0) is expected to give."""
        if self.turns is None or self.expected is None:
            return self.expected
        return self.expected[turn]

    def __repr__(self) -> str:
        what = f"turns={list(self.turns)!r}" if self.turns is not None else repr(self.input)
        return f"Case({what}, id={self.id!r})"
