"""Joining a ``get_or_set`` that another task of this process is already computing."""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["abandon_inflight", "join_inflight"]


async def join_inflight(pending: asyncio.Future[Any]) -> tuple[bool, Any]:
    """Wait for another task's factory: ``(True, value)`` once it stored its value, or
    ``(False, None)`` when that task was cancelled (not this one), so the caller should
    try again and may take the work over. A factory's failure is raised here too."""
    try:
        return True, await asyncio.shield(pending)
    except asyncio.CancelledError:
        task = asyncio.current_task()
        if pending.cancelled() and task is not None and not task.cancelling():
            return False, None
        raise


def abandon_inflight(future: asyncio.Future[Any], error: BaseException) -> None:
    """The factory behind ``future`` failed with ``error``: its waiters get the same
    failure (or, when it was cancelled, try again themselves)."""
    if isinstance(error, Exception):
        future.set_exception(error)
        future.exception()  # retrieved: no "never retrieved" warning without waiters
    else:
        future.cancel()
