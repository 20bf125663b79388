"""Looks at the suspension memo of many waiting runs at once.

A client waiting for a run's result waits for its close event, and looks now and then
at the run's memo for a suspension (the one sign of it a run leaves without adding an
event to every history). A describe per run and look costs the server a read of the
run's state; with many runs in flight that is most of the server's work beyond the
runs' own. Here the runs due for a look within one tick of a shared clock are read by
one visibility list request (``WorkflowId IN (...)``, a hundred at a time) instead.

A server that cannot answer such a list (one without advanced visibility) and a run
id that cannot be written into a list filter are looked at by describe, as before.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

__all__ = ["SuspensionLooks"]

_log = logging.getLogger(__name__)

TICK = 0.1
"""Seconds of the shared clock: every look due within one tick is made by one request."""
BATCH = 100
"""Run ids per list request."""
_UNANSWERABLE = (RPCStatusCode.INVALID_ARGUMENT, RPCStatusCode.UNIMPLEMENTED)


class SuspensionLooks:
    """``await looks.memo(run_id)``: the value of ``key`` in the run's memo (None when
    it has none, or when the run is not running), read together with every other look
    due in the same tick."""

    def __init__(self, client: Client, key: str) -> None:
        self._client = client
        self._key = key
        self._due: dict[str, list[asyncio.Future[Any]]] = {}
        self._ticking: asyncio.Task[None] | None = None
        self._lists = True
        """False once the server refused a list filter: describe from then on."""

    async def memo(self, run_id: str) -> Any:
        loop = asyncio.get_running_loop()
        if not _listable(run_id) or not self._lists:
            return await self.described(run_id)
        answer: asyncio.Future[Any] = loop.create_future()
        self._due.setdefault(run_id, []).append(answer)
        ticking = self._ticking
        if ticking is None or ticking.done() or ticking.get_loop() is not loop:
            self._ticking = loop.create_task(self._tick())
        return await answer

    async def _tick(self) -> None:
        loop = asyncio.get_running_loop()
        while self._due:
            await asyncio.sleep(TICK - loop.time() % TICK)  # the next tick of the clock
            due, self._due = self._due, {}
            try:
                await self._look(due)
            finally:
                for waiters in due.values():  # only if the look itself was cancelled
                    for waiter in waiters:
                        waiter.cancel()

    async def _look(self, due: dict[str, list[asyncio.Future[Any]]]) -> None:
        ids = list(due)
        for start in range(0, len(ids), BATCH):
            chunk = ids[start:start + BATCH]
            try:
                values = await self._listed(chunk)
            except Exception as exc:  # each waiter is answered, never left waiting
                if isinstance(exc, RPCError) and exc.status in _UNANSWERABLE:
                    _log.info("this Temporal server cannot list runs by id (%s); "
                              "looking at each waiting run by describe instead", exc)
                    self._lists = False
                for run_id in chunk:
                    try:
                        value = await self.described(run_id)
                    except Exception as error:  # handed to its waiter
                        _settle(due[run_id], error=error)
                    else:
                        _settle(due[run_id], value=value)
                continue
            for run_id in chunk:
                _settle(due[run_id], value=values.get(run_id))

    async def _listed(self, ids: Iterable[str]) -> dict[str, Any]:
        quoted = ", ".join(f"'{run_id}'" for run_id in ids)
        query = f"WorkflowId IN ({quoted}) AND ExecutionStatus = 'Running'"
        values: dict[str, Any] = {}
        async for execution in self._client.list_workflows(query, page_size=BATCH):
            values[execution.id] = (await execution.memo()).get(self._key)
        return values

    async def described(self, run_id: str) -> Any:
        """The value of ``key`` in the run's memo now, by a describe of its own (a run
        that ended included)."""
        described = await self._client.get_workflow_handle(run_id).describe()
        return (await described.memo()).get(self._key)


def _listable(run_id: str) -> bool:
    """Whether ``run_id`` can be written into a list filter as it is."""
    return run_id.isprintable() and not any(c in run_id for c in "'\"\\")


def _settle(waiters: list[asyncio.Future[Any]], *, value: Any = None,
            error: BaseException | None = None) -> None:
    for waiter in waiters:
        if waiter.done():
            continue  # its caller was cancelled meanwhile
        if error is not None:
            waiter.set_exception(error)
        else:
            waiter.set_result(value)
