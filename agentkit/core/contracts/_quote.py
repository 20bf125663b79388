"""quote(): a value as an error message shows it, in bounded length whatever the value.

Error messages quote what the model sent so it can see its mistake. ``repr()`` of that
is unbounded (a megabyte string, ten thousand keys), recursive (an array nested 900
deep exhausts the stack) and can fail outright (an integer past 4,300 digits raises
ValueError). :func:`quote` cuts strings in the middle, shows at most a few items and
levels of a container, and describes a huge integer by its number of digits.
"""

from __future__ import annotations

import reprlib
from typing import Any

__all__ = ["cut", "cut_reason", "digits", "quote", "quote_names", "quote_text"]

_MAX_TEXT = 60
_MAX_NAMES = 10
_MAX_PLAIN_DIGITS = 40


def cut(text: str, limit: int) -> str:
    """``text``, cut to at most ``limit`` characters (the cut marked ``...``)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def cut_reason(text: str) -> str:
    """One reason an error message carries, cut to at most 500 characters."""
    return cut(text, 500)


def quote_text(text: str) -> str:
    """``text`` quoted as an error message shows it, cut to at most 200 characters."""
    return repr(cut(text, 200))


def digits(number: int) -> int:
    """How many decimal digits ``number`` has, without converting it to a string."""
    n = abs(number)
    count = max(1, int(n.bit_length() * 0.30102999566398120))
    while n >= 10**count:
        count += 1
    while count > 1 and n < 10 ** (count - 1):
        count -= 1
    return count


class _BoundedRepr(reprlib.Repr):
    def __init__(self) -> None:
        super().__init__()
        self.maxlevel = 3
        self.maxstring = _MAX_TEXT
        self.maxother = _MAX_TEXT
        self.maxlist = self.maxtuple = self.maxdict = 6
        self.maxset = self.maxfrozenset = 6

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 133:  # more than 40 digits: too long to read anyway
            count = digits(x)
            if count > _MAX_PLAIN_DIGITS:
                return f"<integer of {count} digits>"
        return repr(x)

    def repr_FrozenDict(self, x: Any, level: int) -> str:
        return self.repr_dict(x, level)

    def repr_instance(self, x: Any, level: int) -> str:
        try:
            text = repr(x)
        except Exception:
            return f"<{type(x).__name__}>"
        if len(text) > self.maxother:
            half = (self.maxother - 3) // 2
            text = text[:half] + "..." + text[len(text) - half :]
        return text


_REPR = _BoundedRepr()


def quote(value: Any) -> str:
    """``repr(value)`` for small values; a shortened form of the same for large ones."""
    if isinstance(value, str) and len(value) <= _MAX_TEXT:
        return repr(value)
    return _REPR.repr(value)


def quote_names(names: Any) -> str:
    """A list of names as ``['a', 'b']``, with at most ten shown and each one bounded."""
    names = list(names)
    shown = ", ".join(quote(name) for name in names[:_MAX_NAMES])
    if len(names) > _MAX_NAMES:
        shown += f", ... {len(names) - _MAX_NAMES} more"
    return f"[{shown}]"
