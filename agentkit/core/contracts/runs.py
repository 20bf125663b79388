"""The run registry's values: one record per top-level run, the filters that pick runs, and
a listing request and page.

Every store keeps the records (:meth:`~agentkit.core.contracts.ports.Store.put_run`) in
an index by agent, status, session, scope and creation time, so a face lists runs, or
the runs that wait for a person, with one indexed query per page instead of reading
checkpoints. A listing is newest first (by ``created``, ties broken by run id) and
continues from an opaque cursor: the position of the last record of the page before,
so runs started while a reader pages never shift or repeat what it sees.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from typing import Any

from agentkit.core.contracts._slot_init import slot_init
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.types import Usage

__all__ = [
    "MAX_PAGE",
    "RecordedDecision",
    "RunFilter",
    "RunPage",
    "RunQuery",
    "RunRecord",
    "WaitingCall",
    "cursor_after",
    "position_of",
]

MAX_PAGE = 1000
"""The most records one page may hold."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WaitingCall:
    """One call of a run that waits for a person, as the approval inbox shows it."""

    call_id: str
    """The path id a decision names (``"c1/s3"``: call ``s3`` of the sub-run of ``c1``)."""
    tool: str
    """The tool the call would run."""
    arguments: FrozenDict[str, Any] = field(default_factory=FrozenDict)
    """The exact (frozen) arguments a decision approves."""
    kind: str = "approval"
    """What it waits for: ``approval``, ``input``, ``elicitation`` or ``unknown_outcome``."""
    agents: tuple[str, ...] = ()
    """Who asked: the agents from the top-level run down to the one whose call waits."""
    since: float = 0.0
    """When the run began to wait, in seconds since the epoch."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordedDecision:
    """A decision a person made on a run: who decided what, and when (a face appends
    these to the run's decision log, beside its record, only for a decision that won)."""

    call_id: str
    """The path id decided."""
    decision: Any
    """The decision as given (``"approve"``, ``{"answer": ...}``, ...)."""
    by: str
    """The name of the principal who decided."""
    at: float
    """When, in seconds since the epoch."""


@slot_init  # two per run (the claim and the end): built at half the price
@dataclass(frozen=True, slots=True, kw_only=True)
class RunRecord:
    """What the registry knows of one top-level run."""

    run_id: str
    """The run (its correlation id)."""
    agent: str
    """The name of the agent or workflow the run belongs to."""
    status: str
    """Where the run stands: ``running``, ``suspended``, ``complete``, ``cancelled``, ..."""
    scope: str
    """The tenant's scope key (``Scope.key()``, ``"org7:dom1"``)."""
    created: float
    """When the run was opened, in seconds since the epoch; a later write keeps the first."""
    updated: float
    """When the record was last written, in seconds since the epoch."""
    session: str | None = None
    """The conversation the run belongs to, if any."""
    pending: tuple[WaitingCall, ...] = ()
    """The calls the run waits on, while it is suspended."""
    stop_reason: str | None = None
    """Why the run stopped, once it has."""
    output: Any = None
    """The final output, once complete (data, as the store keeps it)."""
    usage: Usage = field(default_factory=Usage)
    """Tokens used so far."""
    cost_usd: float | None = None
    """What the run cost, when its models are priced."""
    error: str | None = None
    """What went wrong, for a run that ended in an error."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RunFilter:
    """Which runs: a filter left as None matches every run, and ``scopes`` of None means
    every scope (an empty tuple matches none).

    A summary (``summarize_runs``) takes one as it is; a listing takes a
    :class:`RunQuery`, which adds the paging.
    """

    agent: str | None = None
    """Only runs of this agent."""
    status: str | None = None
    """Only runs with this status."""
    session: str | None = None
    """Only runs of this session."""
    scopes: tuple[str, ...] | None = None
    """Only runs whose scope key is one of these."""

    def __post_init__(self) -> None:
        if isinstance(self.scopes, str):
            raise TypeError(
                f"{type(self).__name__}(scopes=...) is a tuple of scope keys or None, got "
                f"the string {self.scopes!r}: write scopes=({self.scopes!r},)"
            )

    def matches(self, record: RunRecord) -> bool:
        """Whether ``record`` passes the filters (a query's cursor aside)."""
        return (
            (self.agent is None or record.agent == self.agent)
            and (self.status is None or record.status == self.status)
            and (self.session is None or record.session == self.session)
            and (self.scopes is None or record.scope in self.scopes)
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class RunQuery(RunFilter):
    """One page of a run listing: which runs (the filters of :class:`RunFilter`), how
    many, and where to continue. ``cursor`` is the ``next_cursor`` of the page before."""

    limit: int = 50
    """How many records at most, from 1 to :data:`MAX_PAGE`."""
    cursor: str | None = None
    """Continue after the page that returned this cursor."""

    def __post_init__(self) -> None:
        if isinstance(self.limit, bool) or not isinstance(self.limit, int) or not (
            1 <= self.limit <= MAX_PAGE
        ):
            raise ValueError(
                f"RunQuery(limit=...) must be an integer from 1 to {MAX_PAGE}, "
                f"got {self.limit!r}"
            )
        # Named, not super(): a slotted dataclass is a new class, which the cell that a
        # bare super() reads does not know (before Python 3.14).
        RunFilter.__post_init__(self)
        if self.cursor is not None:
            position_of(self.cursor)  # a bad cursor fails here, before any store reads


@dataclass(frozen=True, slots=True)
class RunPage:
    """One page of a listing, newest first."""

    records: tuple[RunRecord, ...]
    """The runs of this page."""
    next_cursor: str | None = None
    """The cursor of the next page, or None when this page is the last."""


def cursor_after(record: RunRecord) -> str:
    """The opaque cursor that continues a listing after ``record``."""
    # repr() of a float reads back as the same float, so the position is exact.
    text = json.dumps([repr(record.created), record.run_id], separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode("utf-8")).decode("ascii").rstrip("=")


def position_of(cursor: str) -> tuple[float, str]:
    """``(created, run_id)`` of the record a cursor continues after; ValueError for a
    string that no listing returned."""
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        created, run_id = json.loads(base64.urlsafe_b64decode(padded.encode("ascii")))
        if not isinstance(created, str) or not isinstance(run_id, str):
            raise ValueError(cursor)
        return float(created), run_id
    except (ValueError, TypeError, UnicodeError, binascii.Error):
        raise ValueError(
            f"RunQuery(cursor=...) {cursor!r} is not a cursor this registry returned: pass "
            "a page's next_cursor as it is, or None for the first page"
        ) from None
