"""The live events of a run on Temporal, merged into its event log.

The workers publish a served run's live events (steps, text and reasoning deltas, tool
calls and results) to the shared store as they happen
(:mod:`agentkit.integrations.temporal.live`); the engine derives tool calls, tool
results, interrupts and the final event from the results the workflow reports. A
:class:`LiveEvents` per run follows the first while the engine waits for the second,
and lets each event into the log once: a tool call or result derived from a result is
left out when it came live (matched by call id, one for one, as a model may reuse an
id), and a step by its number. Derived calls and results that come before the first
one matched are the session's history, and are left out too. The engine drains it when
a result arrives, before it logs what the result shows, so the log keeps the order
things happened in.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from typing import Any

from agentkit.agents.events import AgentEvent
from agentkit.core.contracts.ports import Store
from agentkit.integrations.temporal.live import LiveReader, identity
from agentkit.serve.engine import Log

__all__ = ["LiveEvents"]

_log = logging.getLogger("agentkit.serve")

_FIRST_LOOK = 0.025
_LONGEST_LOOK = 0.25
"""Seconds between looks for a run's next batch: from the first, doubling while none
comes (a long tool call), back to the first once one does (a streaming model)."""


class LiveEvents:
    """One run's live events, followed into its log while the engine waits for the run."""

    def __init__(self, store: Store, run_id: str) -> None:
        self.reader = LiveReader(store, run_id)
        self.run_id = run_id
        # Live tool calls and results not yet matched by one a result showed: a model
        # may give two calls of a run the same id, so they are counted, not a set.
        self._unmatched: Counter[tuple[str, Any]] = Counter()
        self._steps: set[tuple[str, Any]] = set()
        self._streamed = False  # any live event came
        self._matched = False  # a derived call or result matched a live one
        self._log: Log | None = None
        self._task: asyncio.Task[None] | None = None

    def add(self, log: Log, event: AgentEvent) -> None:
        """Log ``event``, derived from a result, unless it came live already.

        A result's transcript starts with the session's history: its calls and results,
        which come before the run's own and never live, are left out once events come
        live (without live events, every one is logged, as before they existed)."""
        key = identity(event)
        if key is not None:
            if self._unmatched[key] > 0:
                self._unmatched[key] -= 1
                self._matched = True
                return
            if self._streamed and not self._matched:
                return
        log.add(event)

    def _emit(self, item: AgentEvent | dict[str, Any]) -> None:
        assert self._log is not None
        self._streamed = True
        if isinstance(item, dict):
            self._log.add_data(item)
            return
        key = identity(item)
        if key is not None:
            if key[0] == "step":
                if key in self._steps:
                    return  # the same step of a model call made again
                self._steps.add(key)
            else:
                self._unmatched[key] += 1
        self._log.add(item)

    def follow(self, log: Log) -> None:
        """Follow the run's batches into ``log`` until :meth:`settle`."""
        self._log = log
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(
                self._following(), name=f"agentkit live events {self.run_id}")

    async def _following(self) -> None:
        pause = _FIRST_LOOK
        while True:
            try:
                found = await self.reader.read(self._emit)
            except Exception as error:  # the store is away: look again later
                _log.warning("run %r: could not read its live events: %s", self.run_id, error)
                found = 0
            if found:
                pause = _FIRST_LOOK
                continue
            await asyncio.sleep(pause)
            pause = min(pause * 2, _LONGEST_LOOK)

    async def settle(self) -> None:
        """Stop following, after logging every batch written so far (a result of the
        run arrived: its activities wrote theirs before they reported)."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        if self._log is not None:
            with contextlib.suppress(Exception):
                await self.reader.read(self._emit)

    def stop(self) -> None:
        """Stop following (the server stops)."""
        if self._task is not None:
            self._task.cancel()
