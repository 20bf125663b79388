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
from agentkit.core.contracts.run_totals import RunSummary, summary_of_records
from agentkit.core.contracts.runs import (
    RunFilter,
    RunPage,
    RunQuery,
    RunRecord,
    cursor_after,
    position_of,
)
from agentkit.core.contracts.state_errors import VersionConflict
from agentkit.core.stores.inflight import abandon_inflight, join_inflight

__all__ = ["InMemoryStore"]

_INT_BOUND = 1 << 63


def _kept(value: Any) -> str | tuple[Any]:
    """What the store keeps of ``value``: its codec text, or, for a value every store
    holds as it is and nobody can change (a string, a bool, None, a machine-sized int),
    the value itself in a 1-tuple. Encoding one of those could not fail, and decoding it
    would give back an equal value, so they skip the codec (a tool's text result, that
    ``idempotent()`` records, is the common case)."""
    kind = type(value)
    if kind is str or kind is bool or value is None or (
        kind is int and -_INT_BOUND < value < _INT_BOUND
    ):
        return (value,)
    return dumps(value)


def _read(kept: str | tuple[Any], key: str) -> Any:
    return loads(kept, key=key) if type(kept) is str else kept[0]


class InMemoryStore:
    """A dict with expiry, single-flight ``get_or_set`` and append-only logs.

    Key-value and log values are stored encoded, as a durable store keeps them;
    checkpoints (versioned slots) by reference. Expired entries are dropped when next
    read.
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._values: dict[str, tuple[str | tuple[Any], float | None]] = {}
        self._logs: dict[str, list[str | tuple[Any]]] = {}
        self._inflight: dict[str, asyncio.Future[Any]] = {}
        self._versioned: dict[str, tuple[Any, int]] = {}
        # The run registry: records by run id, by reference like checkpoints (frozen
        # values, written twice per run), and their positions (created, run id) kept
        # sorted, so a page is a bisect away.
        self._runs: dict[str, tuple[RunRecord, float]] = {}
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
        return True, _read(text, key)

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
        self._values[key] = (_kept(value), self._expiry(ttl))

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
            text = _kept(value)
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
        self._logs.setdefault(log, []).append(_kept(value))

    async def list(self, log: str) -> tuple[Any, ...]:
        """Every value appended to ``log``, oldest first."""
        return tuple(
            _read(kept, f"{log}[{index}]") for index, kept in enumerate(self._logs.get(log, ()))
        )

    async def get_versioned(self, key: str) -> tuple[Any, int]:
        """``(value, version)`` under ``key``; ``(None, 0)`` when never written."""
        return self._versioned.get(key, (None, 0))

    async def get_versioned_many(self, keys: Sequence[str]) -> tuple[tuple[Any, int], ...]:
        """``get_versioned`` of each of ``keys``, in their order."""
        return tuple(self._versioned.get(key, (None, 0)) for key in keys)

    async def set_versioned(self, key: str, value: Any, *, expected_version: int) -> int:
        """Write ``value`` if the version is still ``expected_version``; the new version."""
        return self._set_versioned(key, value, expected_version)

    async def set_versioned_with_run(
        self, key: str, value: Any, *, expected_version: int, record: RunRecord
    ) -> int:
        """``set_versioned``, and ``put_run(record)`` only if it wrote."""
        # The two writes as plain calls, not two more coroutines: a run's claim and end
        # come through here. (A subclass that overrides set_versioned or put_run also
        # overrides this, to see these writes.)
        version = self._set_versioned(key, value, expected_version)
        self._put_run(record)
        return version

    def _set_versioned(self, key: str, value: Any, expected_version: int) -> int:
        _, version = self._versioned.get(key, (None, 0))
        if version != expected_version:
            raise VersionConflict(key, expected_version, version)
        self._versioned[key] = (value, version + 1)
        return version + 1

    # -- run registry -------------------------------------------------------------------

    async def put_run(self, record: RunRecord) -> None:
        """Write the registry record of a run; an existing record's ``created`` is kept."""
        self._put_run(record)

    def _put_run(self, record: RunRecord) -> None:
        known = self._runs.get(record.run_id)
        if known is None:
            bisect.insort(self._run_order, (record.created, record.run_id))
            self._runs[record.run_id] = (record, record.created)
        else:
            self._runs[record.run_id] = (record, known[1])

    def _record(self, run_id: str) -> RunRecord:
        # The first write's ``created`` is put back when the record is read, not at every
        # write: a run writes its record twice, and most are never read in process.
        record, created = self._runs[run_id]
        if record.created != created:
            record = dataclasses.replace(record, created=created)
            self._runs[run_id] = (record, created)
        return record

    async def get_run(self, run_id: str) -> RunRecord | None:
        """The registry record of ``run_id``, or None."""
        return self._record(run_id) if run_id in self._runs else None

    async def list_runs(self, query: RunQuery) -> RunPage:
        """One page of runs matching ``query``, newest first."""
        order = self._run_order
        end = len(order) if query.cursor is None else bisect.bisect_left(
            order, position_of(query.cursor)
        )
        found: list[RunRecord] = []
        for at in range(end - 1, -1, -1):
            record = self._record(order[at][1])
            if query.matches(record):
                if len(found) == query.limit:
                    return RunPage(tuple(found), cursor_after(found[-1]))
                found.append(record)
        return RunPage(tuple(found))

    async def summarize_runs(self, query: RunFilter) -> RunSummary:
        """The sums of the runs matching ``query``, in total, per agent, per day and by
        status."""
        return summary_of_records(
            record for record in map(self._record, self._runs) if query.matches(record)
        )
