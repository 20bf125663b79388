"""Tripwire: what a guardrail returns to stop a run, and how guardrails read a value.

A guardrail is a plain function (or a small class with ``__call__``) that looks at a
value: the run's input, its final answer, a tool call's frozen arguments or its result.
It returns ``None`` or ``True`` to let the value pass, a :class:`Tripwire` to stop, or a
rewritten value (a redacted text). The prebuilt checks in this package read every string
inside the value, whatever its shape (a text, a mapping of arguments, a list of rows), and
rewrite it keeping that shape.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentkit.core.contracts.frozen import FrozenDict, freeze_arguments

__all__ = ["Tripwire", "rewrite_texts", "texts_of"]


@dataclass(frozen=True, slots=True)
class Tripwire:
    """A guardrail's verdict that the value must not go on: the run stops."""

    reason: str
    """Why, in words a person reading the run's result understands."""
    info: Mapping[str, Any] | None = field(default=None)
    """What the check found (kinds, scores, matched patterns), deeply frozen; never the
    offending text itself, so the result and the audit log do not repeat it."""

    def __post_init__(self) -> None:
        if not isinstance(self.reason, str) or not self.reason:
            raise ValueError(f"Tripwire.reason must be a non-empty string, got {self.reason!r}")
        if self.info is not None:
            if not isinstance(self.info, Mapping):
                raise TypeError(
                    f"Tripwire.info must be a mapping or None, got {type(self.info).__name__}"
                )
            object.__setattr__(self, "info", freeze_arguments(self.info))


def texts_of(value: Any) -> Iterator[str]:
    """Every string inside ``value``: itself, a mapping's values, a sequence's items."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from texts_of(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from texts_of(item)


def rewrite_texts(value: Any, change: Callable[[str], str]) -> Any:
    """``value`` with ``change`` applied to every string inside it, in the same shape
    (a frozen mapping stays frozen); the very same object when nothing changed."""
    if isinstance(value, str):
        return change(value)
    if isinstance(value, Mapping):
        items = {k: rewrite_texts(v, change) for k, v in value.items()}
        if all(items[k] is v for k, v in value.items()):
            return value
        return FrozenDict(items) if isinstance(value, FrozenDict) else dict(items)
    if isinstance(value, list | tuple):
        rewritten = [rewrite_texts(v, change) for v in value]
        if all(a is b for a, b in zip(rewritten, value, strict=True)):
            return value
        return tuple(rewritten) if isinstance(value, tuple) else rewritten
    return value
