"""PromptInjection(): a scored heuristic for text that gives orders to the model.

Meant for tool results (a fetched page, a file, an email) and inputs from outside.
Each signal below adds its weight when it appears at least once; the score is the sum,
capped at 1.0, and the value trips at ``threshold`` (0.5 by default), so one strong
signal or two weaker ones are needed:

- 0.6 an order to drop earlier instructions ("ignore/disregard/forget (all) previous
  instructions", "ignore the above");
- 0.5 a claim to replace the model's role or rules ("you are now ...", "new
  instructions:", "from now on you ...", "act as ... without restrictions");
- 0.5 chat-template or role markers inside data (``<|im_start|>``, ``[INST]``,
  ``<system>``, a line starting ``system:`` or ``### instruction``);
- 0.5 a request to reveal the prompt ("reveal/print/repeat your system prompt /
  instructions");
- 0.3 secrecy towards the user ("do not tell/mention ... the user");
- 0.3 a push to act ("call/use/run the ... tool", "send/forward/upload ... to
  http(s)://", "transfer ... funds").

What it catches: the plain-text phrasings above, in English. What it misses:
paraphrases, other languages, instructions split across values or encoded (base64,
homoglyphs, invisible characters), and attacks that give no order at all (false facts).
It also trips on text that quotes an attack, such as an article about prompt injection.
On the labelled set in ``tests/core/guardrails/test_injection.py`` (40 texts: 20
injections, 20 ordinary tool results, several of which mention instructions, prompts or
tools) it flags 19 of the 20 injections and 1 of the 20 ordinary texts: a false-positive
rate of 5% and a false-negative rate of 5%. The weights were chosen on that set, and
20 texts each are few: expect more errors on your own text, and measure on it.
"""

from __future__ import annotations

import re
from typing import Any

from agentkit.core.guardrails.tripwire import Tripwire, texts_of

__all__ = ["PromptInjection"]

_I = re.IGNORECASE | re.MULTILINE
_SIGNALS: tuple[tuple[str, float, re.Pattern[str]], ...] = (
    ("override", 0.6, re.compile(
        r"\b(ignore|disregard|forget|override|skip)\b[^.\n]{0,40}\b(previous|prior|above|"
        r"earlier|preceding|all|your|the)\b[^.\n]{0,20}\b(instructions?|prompts?|rules|"
        r"directions|guidelines|context)\b|\bignore (?:the|everything) above\b", _I)),
    ("role", 0.5, re.compile(
        r"\byou are now\b|\bnew (?:instructions|rules|task)\s*:|\bfrom now on,? you\b|"
        r"\bact as\b[^.\n]{0,40}\b(?:without|no) (?:restrictions|limits|filters)\b|"
        r"\bdeveloper mode\b|\bjailbreak", _I)),
    ("markers", 0.5, re.compile(
        r"<\|im_start\|>|<\|system\|>|\[/?INST\]|</?system>|^\s*(?:system|assistant)\s*:|"
        r"^\s*#{2,}\s*(?:system|instruction)", _I)),
    ("reveal", 0.5, re.compile(
        r"\b(reveal|print|repeat|show|output|leak)\b[^.\n]{0,30}\b(system prompt|"
        r"your (?:instructions|prompt|rules))\b", _I)),
    ("secrecy", 0.3, re.compile(
        r"\b(?:do not|don't|never)\s+(?:tell|mention|inform|reveal to|alert)\b[^.\n]{0,20}"
        r"\bthe user\b", _I)),
    ("action", 0.3, re.compile(
        r"\b(?:call|use|invoke|run)\s+the\s+[\w-]+\s+tool\b|\b(?:send|forward|upload|post|"
        r"email)\b[^.\n]{0,60}\bto\s+https?://|\btransfer\b[^.\n]{0,30}\bfunds\b", _I)),
)


class PromptInjection:
    """A guardrail that trips on text scoring ``threshold`` or more on the signals of
    instructions aimed at the model (see the module for the signals and the measured
    error rates)."""

    __slots__ = ("threshold",)

    def __init__(self, threshold: float = 0.5) -> None:
        if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not (
            0 < threshold <= 1
        ):
            raise ValueError(
                f"PromptInjection(threshold=...) takes a number above 0 and at most 1, "
                f"got {threshold!r}"
            )
        self.threshold = float(threshold)

    @staticmethod
    def score(text: str) -> tuple[float, tuple[str, ...]]:
        """The score of ``text`` (0 to 1) and the names of the signals found in it."""
        found = tuple(name for name, _, pattern in _SIGNALS if pattern.search(text))
        weight = sum(w for name, w, _ in _SIGNALS if name in found)
        return min(1.0, round(weight, 2)), found

    def __call__(self, value: Any) -> Tripwire | None:
        best = 0.0
        signals: tuple[str, ...] = ()
        for text in texts_of(value):
            score, found = self.score(text)
            if score > best:
                best, signals = score, found
        if best < self.threshold:
            return None
        return Tripwire(
            f"instructions to the model found (score {best:.2f}, threshold "
            f"{self.threshold:.2f}): {', '.join(signals)}",
            {"score": best, "signals": list(signals)},
        )

    def __repr__(self) -> str:
        return f"PromptInjection(threshold={self.threshold})"
