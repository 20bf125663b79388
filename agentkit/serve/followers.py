"""Followers: which server follows which running Temporal run, so that a run whose
server died is picked up by a server that is up, and by one only.

A server following a run waits for the run's next result and writes the run's registry
record from it (:class:`~agentkit.serve.temporal.TemporalEngine`). Each server has an
``owner`` id and, while it runs, renews a heartbeat in the store
(``agentkit:serve:alive:<owner>``, the time of its last beat) every third of ``lease``
seconds. The server that follows a run says so under the run's follow key
(``agentkit:serve:follow:<run_id>``), by a compare-and-set: starting a run, or handing a
decision to one, takes the key at once; a sweep (every ``sweep`` seconds) takes it over
for each running record whose follower has not beaten for a lease, or that has none (a
run of before the key, or whose follower's beat is gone: a server that stops cleanly
removes its beat, so its runs are taken over at the next sweep).

The follower writes the run's record together with a new version of the follow key
(one write, on a store with ``set_versioned_with_run``), only if the key is still at the
version it took: a server taken for dead that wakes up never writes an older state over
what the run's new follower (or a decider) wrote since, and stops following instead.

A suspended run has no follower: it waits for a decision, and the server that hands it
one follows it from there (taking its key). A follower that Temporal refuses for a
moment (:func:`transient`) asks again, waiting 0.5 s doubling to 30 s (:func:`patiently`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from temporalio.client import RPCTimeoutOrCancelledError
from temporalio.service import RPCError, RPCStatusCode

from agentkit.core.contracts.ports import Store
from agentkit.core.contracts.runs import RunRecord
from agentkit.core.contracts.state_errors import VersionConflict

__all__ = ["FOLLOW_LEASE", "FOLLOW_SWEEP", "Followers", "patiently", "seconds", "transient"]

FOLLOW_LEASE = 30.0
"""Seconds a server's heartbeat holds its runs: a follower that has not beaten for this
long is taken for dead, and its runs are taken over."""

FOLLOW_SWEEP = 15.0
"""Seconds between two looks for running runs that nobody follows."""

_TAKES = 5  # a compare-and-set raced this often is left to the next sweep
_FIRST_WAIT, _LONGEST_WAIT = 0.5, 30.0
"""Seconds before following a run again after a transient error, doubling to the most."""

_TRANSIENT = frozenset({RPCStatusCode.UNAVAILABLE, RPCStatusCode.DEADLINE_EXCEEDED,
                        RPCStatusCode.RESOURCE_EXHAUSTED, RPCStatusCode.ABORTED,
                        RPCStatusCode.INTERNAL, RPCStatusCode.UNKNOWN})
"""What Temporal answers while it is briefly out of reach or overloaded. Any other
status (the workflow does not exist: NOT_FOUND) means the run cannot be followed."""

T = TypeVar("T")

_log = logging.getLogger("agentkit.serve")


def seconds(name: str, value: Any) -> float:
    """``value``, an option of ``TemporalEngine`` in seconds above 0, or ValueError."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ValueError(f"TemporalEngine({name}=...) is a number of seconds above 0, "
                         f"got {value!r}")
    return float(value)


class Followers:
    """The follow keys and the heartbeat of one server, as ``owner``, in ``store``."""

    def __init__(self, store: Store, *, owner: str, lease: float = FOLLOW_LEASE,
                 sweep: float = FOLLOW_SWEEP) -> None:
        self.store = store
        self.owner = owner
        self.lease = seconds("follow_lease", lease)
        self.sweep = seconds("sweep", sweep)
        self._tasks: list[asyncio.Task[None]] = []

    # -- the heartbeat ---------------------------------------------------------------

    async def beat(self) -> None:
        """Say this server is up (for a lease; the key itself goes after ten)."""
        await self.store.set(_alive(self.owner), {"at": time.time()}, ttl=10 * self.lease)

    async def alive(self, owner: str) -> bool:
        """``owner`` has beaten within a lease."""
        if owner == self.owner:
            return True
        beat = await self.store.get(_alive(owner))
        at = beat.get("at") if isinstance(beat, dict) else None
        return isinstance(at, int | float) and time.time() - at < self.lease

    def start(self, sweep: Callable[[], Awaitable[int]]) -> None:
        """Beat every third of a lease, and call ``sweep`` every ``sweep`` seconds,
        until :meth:`stop`."""
        if self._tasks:
            return
        loop = asyncio.get_running_loop()
        self._tasks = [
            loop.create_task(self._every(self.lease / 3, self.beat, "renew its heartbeat"),
                             name="agentkit follower heartbeat"),
            loop.create_task(self._every(self.sweep, sweep, "look for runs nobody follows"),
                             name="agentkit follower sweep"),
        ]

    async def _every(self, seconds: float, call: Callable[[], Awaitable[Any]], what: str
                     ) -> None:
        while True:
            await asyncio.sleep(seconds)
            try:
                await call()
            except Exception as error:  # the store is down: try again next time
                _log.warning("the server could not %s: %s", what, error)

    async def stop(self) -> None:
        """Stop beating and sweeping (so no sweep takes a run any more)."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks = []

    async def leave(self) -> None:
        """Remove the heartbeat, once the server stopped following its runs: they are
        taken over at the next sweep of another server, not a lease later."""
        with contextlib.suppress(Exception):  # then they are, a lease later
            await self.store.delete(_alive(self.owner))

    # -- follow keys -----------------------------------------------------------------

    async def take(self, run_id: str) -> int:
        """Follow ``run_id`` from now on, whoever did: a run this server starts or
        hands a decision to. The key's new version, for :meth:`write`."""
        for _ in range(_TAKES):
            _, version = await self.store.get_versioned(_follow(run_id))
            with contextlib.suppress(VersionConflict):
                return await self.store.set_versioned(_follow(run_id), self._mark(),
                                                      expected_version=version)
        raise RuntimeError(f"run {run_id!r}: its follow key kept changing")

    async def orphans(self, records: Sequence[RunRecord]) -> list[tuple[RunRecord, int]]:
        """Of the running ``records``, those that no server that is up follows, each
        with the version of its follow key (for :meth:`take_over`): one read of the
        keys, and one of each follower's heartbeat."""
        held = await self.store.get_versioned_many([_follow(r.run_id) for r in records])
        known: dict[str, bool] = {self.owner: True}
        found = []
        for record, (value, version) in zip(records, held, strict=True):
            owner = value.get("owner") if isinstance(value, dict) else None
            if isinstance(owner, str):
                # This server's own key counts as followed: it is taken before the run's
                # follower starts (starting a run, handing it a decision), and a sweep
                # in between must not start a second follower on a newer version.
                if owner not in known:
                    known[owner] = await self.alive(owner)
                if known[owner]:
                    continue
                _log.info("run %r: its follower %r is gone", record.run_id, owner)
            found.append((record, version))
        return found

    async def take_over(self, record: RunRecord, version: int) -> int | None:
        """Follow the run ``record`` shows, if its follow key is still at ``version``
        and its record still the one ``record`` shows: the key's new version, or None
        (another server took it, or it suspended or ended meanwhile)."""
        # Read after the key: a follower writes the record with the key's next version,
        # so a record it ended since is seen here, or the write below conflicts.
        now = await self.store.get_run(record.run_id)
        if now is None or now.status != "running" or now.updated != record.updated:
            return None
        try:
            return await self.store.set_versioned(_follow(record.run_id), self._mark(),
                                                  expected_version=version)
        except VersionConflict:
            return None

    async def write(self, version: int, record: RunRecord) -> int | None:
        """Write ``record`` if this server still follows its run at ``version``: the
        key's new version, or None when another took the run over meanwhile."""
        key, mark = _follow(record.run_id), self._mark(record.status)
        together = getattr(self.store, "set_versioned_with_run", None)
        try:
            if together is not None:
                taken: int = await together(key, mark, expected_version=version,
                                            record=record)
                return taken
            taken = await self.store.set_versioned(key, mark, expected_version=version)
        except VersionConflict:
            return None
        await self.store.put_run(record)  # a store without the one write: key, then record
        return taken

    def _mark(self, status: str = "running") -> dict[str, Any]:
        return {"owner": self.owner, "since": time.time(), "status": status}


def transient(error: BaseException) -> bool:
    """Temporal (or the store) is briefly out of reach: following the run may go on."""
    if isinstance(error, RPCError):
        return error.status in _TRANSIENT
    return isinstance(error, RPCTimeoutOrCancelledError | ConnectionError | TimeoutError)


async def patiently(run_id: str, step: Callable[[], Awaitable[T]]) -> T:
    """``step()``, again after a wait (0.5 s, doubling to 30 s) past each
    :func:`transient` error, for as long as it takes. Any other error is raised."""
    wait = _FIRST_WAIT
    while True:
        try:
            return await step()
        except Exception as error:
            if not transient(error):
                raise
            # Said once per run; the next ones for debugging only.
            (_log.warning if wait == _FIRST_WAIT else _log.debug)(
                "run %r: following it again in %.1f s: %s", run_id, wait, error)
        await asyncio.sleep(wait)
        wait = min(2 * wait, _LONGEST_WAIT)


def _alive(owner: str) -> str:
    return f"agentkit:serve:alive:{owner}"


def _follow(run_id: str) -> str:
    return f"agentkit:serve:follow:{run_id}"
