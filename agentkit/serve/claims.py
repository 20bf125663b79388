"""Decision claims: of the decisions and cancels people send for one suspension of a
Temporal run, the server takes one, by a compare-and-set in the store, before it hands
it to the workflow.

A claim is keyed by the suspension the run's record shows and says who took it (the
server's ``owner`` id), when, and at which suspension of the workflow (``at``, the count
of results the run had settled, which the workflow's memo shows). Its owner hands the
decision over within moments; a server that dies in between leaves the claim behind,
with the workflow still waiting. Such a claim is taken over by the next decision once
its lease has run out, and only if the workflow still waits at the suspension it
claimed, so a claim whose decision reached the run is never taken again. Were the owner
only slow and hand its decision over after all, the workflow itself refuses whichever
of the two decisions comes second: a decision is handed with the ``at`` it answers, and
the workflow takes one decision per suspension (see
:meth:`agentkit.integrations.temporal.TemporalAgents.hand`).

A decision the workflow refused releases its claim, so the next may try at once.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from agentkit.core.contracts.errors import RunNotResumable
from agentkit.core.contracts.ports import Store
from agentkit.core.contracts.runs import RunRecord
from agentkit.core.contracts.state_errors import VersionConflict

__all__ = ["CLAIM_LEASE", "DecisionClaims"]

CLAIM_LEASE = 30.0
"""Seconds a claim is its owner's alone: handing a decision over takes moments, so a
claim this old whose workflow still waits at its suspension was left by a server that
died."""

_log = logging.getLogger("agentkit.serve")

StillWaiting = Callable[[str, int | None], Awaitable[bool]]
"""``still_waiting(run_id, at)``: the run's workflow waits for a decision at suspension
``at`` (at its current one, for ``None``) and none has reached it."""


class DecisionClaims:
    """The claims one server takes, as ``owner``, in ``store``."""

    def __init__(self, store: Store, *, owner: str, lease: float = CLAIM_LEASE,
                 still_waiting: StillWaiting) -> None:
        if not isinstance(lease, int | float) or lease < 0:
            raise ValueError(f"a claim lease is a number of seconds, at least 0, got {lease!r}")
        self.store = store
        self.owner = owner
        self.lease = float(lease)
        self.still_waiting = still_waiting

    async def take(self, record: RunRecord, by: str, at: int | None) -> int:
        """Take the suspension ``record`` shows for one decision (or cancel) ``by``;
        its version, for :meth:`release`. :class:`RunNotResumable` when another holds
        it: taken less than a lease ago, or its decision reached the run."""
        key = _key(record)
        claim = {"by": by, "owner": self.owner, "at": at, "taken": time.time()}
        try:
            return await self.store.set_versioned(key, claim, expected_version=0)
        except VersionConflict:
            pass
        held, version = await self.store.get_versioned(key)
        if not _released(held):
            if not self._expired(held) or not await self.still_waiting(
                record.run_id, _claimed_at(held)
            ):
                raise _taken(record)
            _log.warning("run %r: taking over the decision claim %s left at %r, which "
                         "never reached the run", record.run_id, _owner(held),
                         _claimed_at(held))
        try:
            return await self.store.set_versioned(key, claim, expected_version=version)
        except VersionConflict:
            raise _taken(record) from None

    async def release(self, record: RunRecord, version: int) -> None:
        """Give back a claim taken at ``version`` whose decision the run refused."""
        # A conflict: taken over meanwhile, so no longer this server's to give back.
        with contextlib.suppress(VersionConflict):
            await self.store.set_versioned(_key(record), {"released": True},
                                           expected_version=version)

    def _expired(self, held: Any) -> bool:
        taken = held.get("taken") if isinstance(held, dict) else None
        # A claim of an earlier version (its taker's name only) says nothing of when.
        return not isinstance(taken, int | float) or time.time() - taken >= self.lease


def _key(record: RunRecord) -> str:
    return f"agentkit:serve:claim:{record.run_id}:{record.updated!r}"


def _released(held: Any) -> bool:
    return isinstance(held, dict) and held.get("released") is True


def _claimed_at(held: Any) -> int | None:
    at = held.get("at") if isinstance(held, dict) else None
    return at if isinstance(at, int) else None


def _owner(held: Any) -> str:
    owner = held.get("owner") if isinstance(held, dict) else None
    return f"of {owner!r}" if isinstance(owner, str) else "of an earlier version"


def _taken(record: RunRecord) -> RunNotResumable:
    return RunNotResumable(record.run_id, "another decision (or a cancel) was accepted first")
