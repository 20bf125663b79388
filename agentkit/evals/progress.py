"""Progress of an eval on stderr: a bar on a terminal, a plain line per run otherwise."""

from __future__ import annotations

import sys
from typing import TextIO

from agentkit.evals.results import CaseResult

__all__ = ["Progress"]

_WIDTH = 30


class Progress:
    """Counts finished runs of one eval and shows them on ``stream`` (stderr)."""

    __slots__ = ("_done", "_enabled", "_failed", "_name", "_stream", "_total", "_tty")

    def __init__(self, name: str, total: int, *, enabled: bool = True,
                 stream: TextIO | None = None) -> None:
        self._name = name
        self._total = total
        self._enabled = enabled
        self._stream = stream if stream is not None else sys.stderr
        self._tty = bool(getattr(self._stream, "isatty", lambda: False)())
        self._done = 0
        self._failed = 0

    def finished(self, result: CaseResult) -> None:
        """One run was scored."""
        self._done += 1
        self._failed += not result.passed
        if not self._enabled:
            return
        if self._tty:
            filled = _WIDTH * self._done // max(self._total, 1)
            bar = "#" * filled + "-" * (_WIDTH - filled)
            self._write(f"\reval {self._name} [{bar}] {self._done}/{self._total}"
                        f" ({self._failed} failed)")
        else:
            verdict = "pass" if result.passed else result.stop_reason.upper() if (
                result.stop_reason in ("timeout", "crashed")) else "FAIL"
            self._write(f"eval {self._name}: {self._done}/{self._total} "
                        f"{result.case_id}#{result.repeat + 1} {verdict}\n")

    def close(self) -> None:
        """The eval ended: end the bar's line."""
        if self._enabled and self._tty and self._done:
            self._write("\n")

    def _write(self, text: str) -> None:
        try:
            self._stream.write(text)
            self._stream.flush()
        except (OSError, ValueError):
            self._enabled = False  # stderr went away; the eval itself goes on
