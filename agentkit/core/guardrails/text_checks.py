"""MaxLength() and Denylist(): guardrails on the size and the words of a value.

``MaxLength(chars)`` counts the characters of every string inside the value together
(a tool call's arguments, say, are one value); it catches an oversized input or answer,
not one that is long in another unit (tokens, bytes of an attachment).

``Denylist(patterns)`` trips on any pattern found in any string of the value: a plain
string matches as a whole word or phrase, case-insensitively ("drop table" matches
"DROP TABLE" but neither "DROP  TABLE" nor "droptable"); a compiled ``re.Pattern``
matches as it is. It catches exactly what it lists, so it misses paraphrases, other spellings and
encodings (base64, homoglyphs).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from agentkit.core.guardrails.tripwire import Tripwire, texts_of

__all__ = ["Denylist", "MaxLength"]


class MaxLength:
    """A guardrail that trips when the strings of a value hold more than ``chars``
    characters in all."""

    __slots__ = ("chars",)

    def __init__(self, chars: int) -> None:
        if isinstance(chars, bool) or not isinstance(chars, int) or chars < 1:
            raise ValueError(f"MaxLength(chars) takes a positive int, got {chars!r}")
        self.chars = chars

    def __call__(self, value: Any) -> Tripwire | None:
        length = sum(len(text) for text in texts_of(value))
        if length <= self.chars:
            return None
        return Tripwire(
            f"{length} characters, more than the {self.chars} allowed",
            {"length": length, "limit": self.chars},
        )

    def __repr__(self) -> str:
        return f"MaxLength({self.chars})"


class Denylist:
    """A guardrail that trips when a value contains any of ``patterns`` (plain strings
    as whole words, case-insensitively; compiled patterns as they are)."""

    __slots__ = ("_compiled", "patterns")

    def __init__(self, patterns: Iterable[str | re.Pattern[str]]) -> None:
        listed = (patterns,) if isinstance(patterns, str | re.Pattern) else tuple(patterns)
        wrong = [p for p in listed if not (isinstance(p, re.Pattern) or (isinstance(p, str) and p))]
        if wrong or not listed:
            raise ValueError(
                "Denylist(patterns) takes non-empty strings or compiled re.Pattern objects, "
                f"got {list(listed)!r}"
            )
        self.patterns = listed
        self._compiled = tuple(
            p if isinstance(p, re.Pattern)
            else re.compile(rf"(?<!\w){re.escape(p)}(?!\w)", re.IGNORECASE)
            for p in listed
        )

    def __call__(self, value: Any) -> Tripwire | None:
        matched = [
            pattern if isinstance(pattern, str) else pattern.pattern
            for pattern, compiled in zip(self.patterns, self._compiled, strict=True)
            if any(compiled.search(text) for text in texts_of(value))
        ]
        if not matched:
            return None
        return Tripwire(f"denied pattern(s) found: {matched!r}", {"matched": matched})

    def __repr__(self) -> str:
        return f"Denylist({list(self.patterns)!r})"
