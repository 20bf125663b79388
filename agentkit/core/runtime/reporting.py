"""Where a running tool call's progress and log lines go besides the run's events.

Inside an agent, ``await ctx.progress(...)`` and ``await ctx.log(...)`` are run events
and nothing more. When something outside the run is waiting on the call (an MCP client
that sent a progress token, a client that set a log level), whoever started the call
installs a :class:`CallReporter` for the call's duration with :func:`reporting_to`.

The reporter is held in a context variable, not on the ``RunContext``: one run's
context is shared by the concurrent calls of a turn (or of an MCP session), while each
call has its own caller to report to. Tasks and worker threads started inside the call
inherit it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol

__all__ = ["LOG_LEVELS", "CallReporter", "current_reporter", "reporting_to"]

_log = logging.getLogger("agentkit.runtime")

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
"""The levels a tool may log at, least severe first (syslog's, as MCP uses them)."""


class CallReporter(Protocol):
    """Receives one tool call's progress and log lines for its caller."""

    async def progress(self, done: float, total: float | None, message: str | None) -> None:
        """The call has done ``done`` of ``total`` units of work."""
        ...

    async def log(self, level: str, message: str, data: Mapping[str, Any]) -> None:
        """A log line at one of :data:`LOG_LEVELS`."""
        ...


_current: ContextVar[CallReporter | None] = ContextVar("agentkit_call_reporter", default=None)


@contextmanager
def reporting_to(reporter: CallReporter | None) -> Iterator[None]:
    """Send the progress and log lines of the calls run inside this block to ``reporter``."""
    token = _current.set(reporter)
    try:
        yield
    finally:
        _current.reset(token)


def current_reporter() -> CallReporter | None:
    """The reporter of the call running now, if its caller installed one."""
    return _current.get()


async def report_progress(done: float, total: float | None, message: str | None) -> None:
    """Forward progress to the current reporter; a failing reporter is logged, not raised."""
    reporter = _current.get()
    if reporter is None:
        return
    try:
        await reporter.progress(done, total, message)
    except Exception:
        _log.warning("forwarding tool progress failed; continuing", exc_info=True)


async def report_log(level: str, message: str, data: Mapping[str, Any]) -> None:
    """Forward a log line to the current reporter; a failing reporter is logged, not raised."""
    reporter = _current.get()
    if reporter is None:
        return
    try:
        await reporter.log(level, message, data)
    except Exception:
        _log.warning("forwarding a tool log line failed; continuing", exc_info=True)
