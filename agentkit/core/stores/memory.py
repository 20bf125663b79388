"""InMemoryStore: the process-local store, for tests and single-process runs.

Key-value entries and log entries go through the store codec (:mod:`agentkit.core.codec`)
exactly as in a durable store: they are kept as JSON text and decoded on every read. That
is where tool results land (idempotency records, memoized values), so a tool result a
durable store could not keep fails here too, in the test, with the same
:class:`NotStorable`, rather than first in production; and a value read back is a copy,
as it is from a database. Versioned slots (checkpoints) are kept by reference: a run
writes one after every step, and their contents are agentkit's own types built from
text the model and tools already produced, so encoding each would double the cost of
a run for little to catch. Run registry records are kept by reference too, for the same
reason (every run writes two; the lifecycle makes their output storable data first).
"""

from __future__ import annotations

import asyncio
import bisect
import dataclasses
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from agentkit.core.codec import dumps, loads
from agentkit.core.contracts.runs import RunPage, RunQuery, RunRecord, cursor_after, position_of
from agentkit.core.contracts.state_errors import VersionConflict
from agentkit.core.stores.inflight import abandon_inflight, join_inflight

__all__ = ["InMemoryStore"]


class InMemoryStore:
    """A dict with expiry, single-flight ``get_or_set`` and append-only logs.

    Key-value and log values are stored encoded, as a durable store keeps them;
    checkpoints (versioned slots) by reference. Expired entries are dropped when next
    read.
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._values: dict[str, tuple[str, float | None]] = {}
        self._logs: dict[str, list[str]] = {}
        self._inflight: dict[str, asyncio.Future[Any]] = {}
        self._versioned: dict[str, tuple[Any, int]] = {}
        # The run registry: records by run id, by reference like checkpoints (frozen
        # values, written twice per run), and their positions (created, run id) kept
        # sorted, so a page is a bisect away.
        self._runs: dict[str, RunRecord] = {}
        self._run_order: list[tuple[float, str]] = []
        self._clock = clock

    def _lookup(self, key: str) -> tuple[bool, Any]:
        entry = self._values.get(key)
        if entry is None:
            return False, None
        text, expires = entry
        if expires is not None and self._clock() >= expires:
            del self._values[key]
            return False, None
        return True, loads(text, key=key)

    @staticmethod
    def _check_ttl(ttl: float | None) -> None:
        if ttl is not None and ttl <= 0:
            raise ValueError(f"ttl must be a positive number of seconds, got {ttl!r}")

    def _expiry(self, ttl: float | None) -> float | None:
        self._check_ttl(ttl)
        return None if ttl is None else self._clock() + ttl

    async def get(self, key: str) -> Any | None:
        """The value under ``key``, or None when absent or expired."""
        return self._lookup(key)[1]

    async def set(self, key: str, value: Any, *, ttl: float | None = None) -> None:
        """Store ``value``; with ``ttl`` seconds it expires."""
        self._values[key] = (dumps(value), self._expiry(ttl))

    async def get_or_set(
        self,
        key: str,
        factory: Callable[[], Awaitable[Any]],
        *,
        ttl: float | None = None,
    ) -> tuple[Any, bool]:
        """Return ``(value, created)``; concurrent callers for one key share one ``factory()``.

        A factory that raises stores nothing: its concurrent waiters see the same
        exception, and the next caller runs the factory afresh.
        """
        while True:
            found, value = self._lookup(key)
            if found:
                return value, False
            pending = self._inflight.get(key)
            if pending is None:
                break
            joined, value = await join_inflight(pending)
            if joined:
                return value, False
            # The caller running the factory was cancelled, not us: take over.
        self._check_ttl(ttl)  # refuse a bad ttl before the factory acts
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            value = await factory()
            text = dumps(value)
        except BaseException as error:
            abandon_inflight(future, error)
            raise
        else:
            # The ttl runs from when the value is stored: timed from the claim, a factory
            # slower than its ttl would store a value already expired, and an idempotent
            # retry right after it would act a second time.
            self._values[key] = (text, None if ttl is None else self._clock() + ttl)
            future.set_result(value)
            return value, True
        finally:
            del self._inflight[key]

    async def delete(self, key: str) -> bool:
        """Remove ``key``; True when something was there."""
        entry = self._values.pop(key, None)
        return entry is not None and (entry[1] is None or self._clock() < entry[1])

    async def append(self, log: str, value: Any) -> None:
        """Append ``value`` to the log named ``log``."""
        self._logs.setdefault(log, []).append(dumps(value))

    async def list(self, log: str) -> tuple[Any, ...]:
        """Every value appended to ``log``, oldest first."""
        return tuple(
            loads(text, key=f"{log}[{index}]") for index, text in enumerate(self._logs.get(log, ()))
        )

    async def get_versioned(self, key: str) -> tuple[Any, int]:
        """``(value, version)`` under ``key``; ``(None, 0)`` when never written."""
        return self._versioned.get(key, (None, 0))

    async def get_versioned_many(self, keys: Sequence[str]) -> tuple[tuple[Any, int], ...]:
        """``get_versioned`` of each of ``keys``, in their order."""
        return tuple(self._versioned.get(key, (None, 0)) for key in keys)

    async def set_versioned(self, key: str, value: Any, *, expected_version: int) -> int:
        """Write ``value`` if the version is still ``expected_version``; the new version."""
        _, version = self._versioned.get(key, (None, 0))
        if version != expected_version:
            raise VersionConflict(key, expected_version, version)
        self._versioned[key] = (value, version + 1)
        return version + 1

    # -- run registry -------------------------------------------------------------------

    async def put_run(self, record: RunRecord) -> None:
        """Write the registry record of a run; an existing record's ``created`` is kept."""
        known = self._runs.get(record.run_id)
        if known is not None:
            if known.created != record.created:
                record = dataclasses.replace(record, created=known.created)
        else:
            bisect.insort(self._run_order, (record.created, record.run_id))
        self._runs[record.run_id] = record

    async def get_run(self, run_id: str) -> RunRecord | None:
        """The registry record of ``run_id``, or None."""
        return self._runs.get(run_id)

    async def list_runs(self, query: RunQuery) -> RunPage:
        """One page of runs matching ``query``, newest first."""
        order = self._run_order
        end = len(order) if query.cursor is None else bisect.bisect_left(
            order, position_of(query.cursor)
        )
        found: list[RunRecord] = []
        for at in range(end - 1, -1, -1):
            record = self._runs[order[at][1]]
            if query.matches(record):
                if len(found) == query.limit:
                    return RunPage(tuple(found), cursor_after(found[-1]))
                found.append(record)
        return RunPage(tuple(found))
