"""PII(): find personal data in a value, and stop the run or redact it.

What each kind catches, and what it misses:

- ``email``: ``local@domain.tld`` addresses. Misses obfuscated ones ("ann at example
  dot com").
- ``phone``: numbers written with a leading ``+country`` code or with separators
  between groups (``+44 20 7946 0958``, ``(555) 123-4567``, ``555.123.4567``), 10 to 15
  digits. Misses a bare run of digits (``5551234567``), which cannot be told from an
  order number.
- ``card``: 13 to 19 digits, optionally grouped by spaces or dashes, that pass the
  Luhn checksum, so that most ordinary long numbers are not flagged (about one random
  number in ten passes Luhn, so some still are).
- ``iban``: a country code, two check digits and 11 to 30 letters or digits (spaces
  allowed between groups) whose mod-97 check is 1 (ISO 13616), so that a mistyped or
  made-up IBAN is not flagged.
- ``ssn``: US social security numbers written ``AAA-GG-SSSS``, without the numbers the
  SSA never issues (area 000, 666 or 900-999, group 00, serial 0000). Misses them
  written without dashes.

Nothing here knows names, addresses or dates of birth: those need a model or a
dictionary, not a pattern.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any, Literal

from agentkit.core.guardrails.tripwire import Tripwire, rewrite_texts, texts_of

__all__ = ["PII", "PIIKind"]

PIIKind = Literal["email", "phone", "card", "iban", "ssn"]
_KINDS: tuple[PIIKind, ...] = ("email", "phone", "card", "iban", "ssn")

_EMAIL = re.compile(
    r"(?<![\w.+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}"
)
_CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}(?![A-Za-z0-9])")
_SSN = re.compile(r"(?<![\d-])(\d{3})-(\d{2})-(\d{4})(?![\d-])")
_PHONE = re.compile(
    r"(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{1,4}(?:[ .-]\d{2,4}){1,4}(?![\w])"
    r"|(?<![\w+])\+\d{10,15}(?!\w)"
)


def _digits(text: str) -> str:
    return "".join(c for c in text if c.isdigit())


def luhn_valid(number: str) -> bool:
    """True when the digits of ``number`` pass the Luhn checksum."""
    total = 0
    for i, char in enumerate(reversed(number)):
        digit = int(char)
        if i % 2:
            digit = digit * 2 - 9 if digit > 4 else digit * 2
        total += digit
    return total % 10 == 0


def iban_valid(text: str) -> bool:
    """True when ``text`` (spaces ignored) passes the IBAN mod-97 check."""
    compact = text.replace(" ", "")
    if not 15 <= len(compact) <= 34:
        return False
    moved = compact[4:] + compact[:4]
    return int("".join(str(int(c, 36)) for c in moved)) % 97 == 1


def _ssn_valid(match: re.Match[str]) -> bool:
    area, group, serial = match.groups()
    return area not in ("000", "666") and area[0] != "9" and group != "00" and serial != "0000"


def _phone_valid(match: re.Match[str]) -> bool:
    text = match.group()
    has_shape = text.startswith("+") or "(" in text or len(re.findall(r"[ .-]", text)) >= 2
    return has_shape and 10 <= len(_digits(text)) <= 15


_FINDERS: dict[PIIKind, tuple[re.Pattern[str], Callable[[re.Match[str]], bool]]] = {
    # Order matters: a card number or an IBAN would otherwise also read as a phone.
    "email": (_EMAIL, lambda m: True),
    "iban": (_IBAN, lambda m: iban_valid(m.group())),
    "card": (_CARD, lambda m: luhn_valid(_digits(m.group()))),
    "ssn": (_SSN, _ssn_valid),
    "phone": (_PHONE, _phone_valid),
}


class PII:
    """A guardrail that finds personal data (see the module's list of what each kind
    catches): ``mode="block"`` stops the run with a :class:`Tripwire` naming the kinds
    found, ``mode="redact"`` replaces each finding with ``[REDACTED:<kind>]``."""

    __slots__ = ("kinds", "mode")

    def __init__(
        self,
        mode: Literal["block", "redact"] = "block",
        kinds: Iterable[PIIKind] = _KINDS,
    ) -> None:
        if mode not in ("block", "redact"):
            raise ValueError(f"PII(mode=...) takes 'block' or 'redact', got {mode!r}")
        chosen = tuple(kinds) if not isinstance(kinds, str) else (kinds,)
        unknown = [k for k in chosen if k not in _KINDS]
        if unknown or not chosen:
            raise ValueError(
                f"PII(kinds=...) takes some of {list(_KINDS)}, got {list(chosen)!r}"
            )
        self.mode = mode
        self.kinds: tuple[PIIKind, ...] = tuple(k for k in _KINDS if k in chosen)

    @property
    def rewrites(self) -> bool:
        """Redaction rewrites the value, so it runs before the call it guards."""
        return self.mode == "redact"

    def find(self, text: str) -> list[tuple[PIIKind, int, int]]:
        """Every finding in ``text`` as ``(kind, start, end)``, in order, not overlapping."""
        found: list[tuple[PIIKind, int, int]] = []
        for kind, (pattern, valid) in _FINDERS.items():
            if kind not in self.kinds:
                continue
            for match in pattern.finditer(text):
                start, end = match.span()
                if valid(match) and not any(s < end and start < e for _, s, e in found):
                    found.append((kind, start, end))
        return sorted(found, key=lambda f: f[1])

    def redact(self, text: str) -> str:
        """``text`` with every finding replaced by ``[REDACTED:<kind>]``."""
        out, last = [], 0
        for kind, start, end in self.find(text):
            out += [text[last:start], f"[REDACTED:{kind}]"]
            last = end
        return "".join(out) + text[last:] if out else text

    def __call__(self, value: Any) -> Any:
        if self.mode == "redact":
            redacted = rewrite_texts(value, self.redact)
            return None if redacted is value else redacted
        counts: dict[str, int] = {}
        for text in texts_of(value):
            for kind, _, _ in self.find(text):
                counts[kind] = counts.get(kind, 0) + 1
        if not counts:
            return None
        kinds = [k for k in self.kinds if k in counts]
        return Tripwire(f"personal data found: {', '.join(kinds)}", {"found": counts})

    def __repr__(self) -> str:
        return f"PII(mode={self.mode!r}, kinds={self.kinds!r})"
