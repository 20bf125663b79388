"""Summing the run registry on any store: natively where the store can, else by paging.

``summarize_runs`` is not part of the :class:`~agentkit.core.contracts.ports.Store`
Protocol, so a store written before it (or one that cannot aggregate) stays a store.
The stores agentkit ships each answer it natively (one aggregate query on SQLite and
PostgreSQL); for any other, :func:`summarize_runs` reads the matching records a page of
:data:`~agentkit.core.contracts.runs.MAX_PAGE` at a time through ``list_runs`` and sums
them here: the same answer, at the cost of decoding every record.
"""

from __future__ import annotations

from typing import Protocol, cast

from agentkit.core.contracts.ports import Store
from agentkit.core.contracts.run_totals import RunSummary, summary_of_records
from agentkit.core.contracts.runs import MAX_PAGE, RunFilter, RunQuery, RunRecord

__all__ = ["RunSummarizer", "summarize_runs"]


class RunSummarizer(Protocol):
    """A store that sums its run registry itself."""

    async def summarize_runs(self, query: RunFilter) -> RunSummary:
        """The sums of the registered runs ``query`` matches."""
        ...


async def summarize_runs(store: Store, query: RunFilter) -> RunSummary:
    """The sums of the runs in ``store``'s registry that ``query`` matches: the store's
    own ``summarize_runs`` when it has one, else summed from its listing."""
    # Looked up on the type, so a wrapper that forwards unknown attributes to a store
    # without the operation pages rather than failing.
    if getattr(type(store), "summarize_runs", None) is not None:
        return await cast(RunSummarizer, store).summarize_runs(query)
    records: list[RunRecord] = []
    cursor: str | None = None
    while True:
        page = await store.list_runs(RunQuery(
            agent=query.agent, status=query.status, session=query.session,
            scopes=query.scopes, limit=MAX_PAGE, cursor=cursor,
        ))
        records.extend(page.records)
        cursor = page.next_cursor
        if cursor is None:
            return summary_of_records(records)
