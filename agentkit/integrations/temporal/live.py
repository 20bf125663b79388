"""A run's live events, from its activities to a follower, through the workers' store.

A run on Temporal decides in its workflow, but its events happen in the activities:
the model's text and reasoning as it streams, the tool calls and the step when the
answer is in, a tool's result. A run started with ``RunOptions(live_events=True)`` (a
server's runs are) has its activities publish them, batched, under sequential keys of
the store the workers and their clients already share: ``agentkit:live:<run>:1``,
``:2``, ... Each batch is written once (a create-if-absent, so two activities of one
turn that flush at once take the next free numbers): the first event at once, then at
most one batch every :data:`FLUSH_SECONDS` while events come, and the rest at the
activity's end; it expires after :data:`LIVE_TTL`. A follower reads the next number,
so each look is one ``get``.

The workflow hands each activity the number after the last one its activities
reported (a hint: an activity that failed reported nothing, and the next one skips the
numbers it took). Each batch names the activity and its attempt: a follower that sees
a later attempt of an activity whose earlier attempt it gave deltas of says so with a
``{"kind": "retry"}`` item (those deltas are superseded: the retry's follow), gives no
tool call, result or step twice for one activity, and drops any batch of an earlier
attempt that comes after.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import Any

from agentkit.agents.events import (
    AgentEvent,
    GuardrailEvent,
    ReasoningDeltaEvent,
    StepEvent,
    TextDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from agentkit.core.contracts.ports import Store

__all__ = [
    "FLUSH_SECONDS",
    "LIVE_TTL",
    "LivePublisher",
    "LiveReader",
    "identity",
    "live_key",
]

_log = logging.getLogger("agentkit.temporal")

FLUSH_SECONDS = 0.075
"""The least time between two batches of an activity: a streaming model costs a store
write per this much time, not one per token (the first event after a quiet spell is
written at once)."""

LIVE_TTL = 24 * 3600.0
"""Seconds a batch is kept: a follower that starts later reads the run's events from
its results only."""


def live_key(run_id: str, number: int) -> str:
    """The store key of batch ``number`` (from 1) of run ``run_id``."""
    return f"agentkit:live:{run_id}:{number}"


def _encoded(event: AgentEvent) -> list[Any]:
    if isinstance(event, TextDeltaEvent | ReasoningDeltaEvent):
        return [event.kind, event.text]
    if isinstance(event, ToolCallEvent):
        return [event.kind, event.call]
    if isinstance(event, ToolResultEvent):
        return [event.kind, event.call_id, event.name, event.content, event.is_error]
    if isinstance(event, StepEvent):
        return [event.kind, event.step, event.usage, event.model]
    if isinstance(event, GuardrailEvent):
        return [event.kind, event.trip]
    raise TypeError(f"a live batch carries deltas, steps, tool calls, results and guardrail "
                    f"trips, not {event!r}")


def _decoded(item: list[Any]) -> AgentEvent:
    kind = item[0]
    if kind == "text_delta":
        return TextDeltaEvent(item[1])
    if kind == "reasoning_delta":
        return ReasoningDeltaEvent(item[1])
    if kind == "tool_call":
        return ToolCallEvent(item[1])
    if kind == "tool_result":
        return ToolResultEvent(item[1], item[2], item[3], bool(item[4]))
    if kind == "step":
        return StepEvent(item[1], item[2], model=item[3])
    if kind == "guardrail":
        return GuardrailEvent(item[1])
    raise ValueError(f"a live batch holds an event of unknown kind {kind!r}")


class LivePublisher:
    """One activity attempt's events, written in batches from number ``first`` on.

    A store that fails stops the publishing (logged once), never the activity: the
    follower still gets the events a run's results show."""

    def __init__(self, store: Store, run_id: str, first: int, by: str, attempt: int,
                 *, flush_seconds: float = FLUSH_SECONDS) -> None:
        self.store = store
        self.run_id = run_id
        self.next = max(first, 1)
        """The number the next batch tries first; once closed, one past the last."""
        self.by = by
        self.attempt = attempt
        self.flush_seconds = flush_seconds
        self._pending: list[list[Any]] = []
        self._flusher: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        self._closing = asyncio.Event()
        self._broken = False

    def add(self, event: AgentEvent) -> None:
        """Queue ``event`` for the next batch."""
        if self._broken:
            return
        self._pending.append(_encoded(event))
        if self._flusher is None:
            self._flusher = asyncio.get_running_loop().create_task(self._flushing())
        self._wake.set()

    async def _flushing(self) -> None:
        loop = asyncio.get_running_loop()
        flushed = float("-inf")
        while not self._closing.is_set():
            await self._wake.wait()
            self._wake.clear()
            # The first event after a quiet spell goes at once (a reader waits for the
            # first word most); what follows gathers for the rest of the interval. An
            # activity that ends cuts the wait short.
            wait = flushed + self.flush_seconds - loop.time()
            if wait > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._closing.wait(), wait)
            await self._flush()
            flushed = loop.time()

    async def _flush(self) -> None:
        if not self._pending or self._broken:
            return
        events, self._pending = self._pending, []
        batch = {"by": self.by, "attempt": self.attempt, "events": events}
        try:
            while True:
                number = self.next
                self.next += 1

                async def made(batch: dict[str, Any] = batch) -> dict[str, Any]:
                    return batch

                _, created = await self.store.get_or_set(
                    live_key(self.run_id, number), made, ttl=LIVE_TTL)
                if created:
                    return
        except Exception as error:
            self._broken = True
            _log.warning("run %r: live events not published (the stream shows what the "
                         "run's results show): %s", self.run_id, error)

    async def close(self) -> int:
        """Write what is queued; the number after the last batch written."""
        self._closing.set()
        self._wake.set()
        if self._flusher is not None:
            await self._flusher
        await self._flush()
        return self.next


class LiveReader:
    """Follows a run's batches from number ``start``: each :meth:`read` hands every
    batch written since to ``emit``, in order, as events (and ``{"kind": "retry", ...}``
    where a later attempt of an activity supersedes the deltas an earlier one sent)."""

    def __init__(self, store: Store, run_id: str, start: int = 1) -> None:
        self.store = store
        self.run_id = run_id
        self.next = start
        """The number of the next batch to read."""
        self._attempts: dict[str, tuple[int, bool]] = {}
        """Per activity: the attempt read last, and whether it sent deltas."""
        self._sent: dict[str, set[tuple[str, Any]]] = {}
        """Per activity: the tool calls, results and steps its attempts sent."""

    async def read(self, emit: Callable[[AgentEvent | dict[str, Any]], None]) -> int:
        """Hand the batches written since the last read to ``emit``; how many."""
        count = 0
        while True:
            batch = await self.store.get(live_key(self.run_id, self.next))
            if not isinstance(batch, dict):
                return count
            self.next += 1
            count += 1
            self._take(batch, emit)

    def _take(self, batch: dict[str, Any],
              emit: Callable[[AgentEvent | dict[str, Any]], None]) -> None:
        by, attempt = str(batch.get("by")), int(batch.get("attempt", 1))
        shown, streamed = self._attempts.get(by, (attempt, False))
        if attempt < shown:
            return  # a superseded attempt that went on writing
        if attempt > shown:
            streamed = False
            if self._attempts[by][1]:
                # The deltas the earlier attempt sent are not the answer's.
                emit({"kind": "retry", "attempt": attempt})
        items = batch.get("events", ())
        streamed = streamed or any(
            isinstance(i, list) and i[:1] in (["text_delta"], ["reasoning_delta"]) for i in items)
        self._attempts[by] = (attempt, streamed)
        sent = self._sent.setdefault(by, set())
        for item in items:
            try:
                event = _decoded(item)
            except (ValueError, TypeError, IndexError) as error:
                _log.warning("run %r: a live event was skipped: %s", self.run_id, error)
                continue
            key = identity(event)
            if key is not None:
                if key in sent:
                    continue  # a retry sends what its earlier attempt sent: once is enough
                sent.add(key)
            emit(event)


def identity(event: AgentEvent) -> tuple[str, Any] | None:
    """What makes a tool call, a tool result or a step the same one when it is sent
    again (by a retried activity, or derived from a run's result); None for others."""
    if isinstance(event, ToolCallEvent):
        return ("call", event.call.id)
    if isinstance(event, ToolResultEvent):
        return ("result", event.call_id)
    if isinstance(event, StepEvent):
        return ("step", event.step)
    return None
