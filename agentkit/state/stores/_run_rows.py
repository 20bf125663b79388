"""The run registry as SQL rows, shared by SQLiteStore and PostgresStore.

A record is one row: the fields a listing filters and sorts on as indexed columns
(agent, status, session, scope, created, run id), the figures a summary sums (its usage
and cost, :data:`SUMMED`) as columns, and the whole record beside them as codec text. A
page is one query, ``ORDER BY created DESC, run_id DESC`` from the position of the
cursor, asking one row more than the page to learn whether another page follows. A
summary is one aggregate, grouped by agent, status and UTC day; the groups are folded
into a :class:`~agentkit.core.contracts.run_totals.RunSummary` here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from agentkit.core.contracts.run_totals import RunSummary, RunTotals, summary_of
from agentkit.core.contracts.runs import (
    RunFilter,
    RunPage,
    RunQuery,
    RunRecord,
    cursor_after,
    position_of,
)
from agentkit.core.contracts.types import Usage
from agentkit.state.codec import loads

__all__ = [
    "INDEXED",
    "SUMMED",
    "page_of",
    "record_of",
    "selection",
    "summary_of_rows",
    "summed",
    "totals_selection",
]

INDEXED = ("agent", "status", "session", "scope")
"""The columns a listing filters on, each with an index ending in (created, run_id)."""

SUMMED = (
    "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens",
    "reasoning_tokens", "requests", "cost_usd",
)
"""The columns a summary sums: the record's usage, and its cost (NULL when unpriced)."""


def summed(record: RunRecord) -> tuple[Any, ...]:
    """The :data:`SUMMED` columns of ``record``."""
    usage = record.usage
    return (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens,
            usage.cache_write_tokens, usage.reasoning_tokens, usage.requests,
            record.cost_usd)


def selection(
    query: RunQuery,
    mark: Callable[[int], str],
    column_value: Callable[[str], str] = str,
    *,
    any_of: Callable[[str, int], str] | None = None,
) -> tuple[str, list[Any]]:
    """``WHERE ... ORDER BY ... LIMIT ...`` of ``query`` and its parameters.

    ``mark(n)`` writes the n-th parameter (``?`` or ``$n``); ``column_value`` is the form
    a text value takes in its column (PostgreSQL hashes keys it cannot index);
    ``any_of(column, n)`` writes membership in a list parameter, where the database has
    one (else the scopes become ``IN (...)``).
    """
    clauses, params = _filters(query, mark, column_value, any_of)

    def bind(value: Any) -> str:
        params.append(value)
        return mark(len(params))

    if query.cursor is not None:
        created, run_id = position_of(query.cursor)
        # Spelled out rather than as a row comparison, so both databases use the index;
        # created is bound twice because a "?" parameter is used once.
        clauses.append(
            f"(created < {bind(created)} OR (created = {bind(created)} "
            f"AND run_id < {bind(column_value(run_id))}))"
        )
    where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
    return f"{where} ORDER BY created DESC, run_id DESC LIMIT {bind(query.limit + 1)}", params


def totals_selection(
    query: RunFilter,
    mark: Callable[[int], str],
    day: str,
    column_value: Callable[[str], str] = str,
    *,
    any_of: Callable[[str, int], str] | None = None,
) -> tuple[str, list[Any]]:
    """The aggregate of ``query`` over the ``runs`` table (``{table}`` standing for its
    name) and its parameters; ``day`` is the database's spelling of the UTC day number
    of ``created``. Its rows are what :func:`summary_of_rows` reads."""
    clauses, params = _filters(query, mark, column_value, any_of)
    where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
    sums = ", ".join(f"sum({column})" for column in SUMMED)
    return (
        f"SELECT agent, status, {day} AS day, count(*), {sums} FROM {{table}}{where} "
        "GROUP BY agent, status, day",
        params,
    )


def summary_of_rows(rows: Sequence[Sequence[Any]]) -> RunSummary:
    """The summary of the aggregate's rows: (agent, status, day, count, sums...)."""
    return summary_of(
        (agent, status, int(day), RunTotals(runs=int(count), usage=Usage(
            input_tokens=int(inputs or 0), output_tokens=int(outputs or 0),
            cache_read_tokens=int(reads or 0), cache_write_tokens=int(writes or 0),
            reasoning_tokens=int(reasoning or 0), requests=int(requests or 0),
            cost_usd=float(cost or 0.0),
        )))
        for agent, status, day, count, inputs, outputs, reads, writes, reasoning, requests, cost
        in rows
    )


def _filters(
    query: RunFilter,
    mark: Callable[[int], str],
    column_value: Callable[[str], str],
    any_of: Callable[[str, int], str] | None,
) -> tuple[list[str], list[Any]]:
    """The WHERE clauses of ``query``'s filters (a listing's cursor aside) and their
    parameters."""
    clauses: list[str] = []
    params: list[Any] = []

    def bind(value: Any) -> str:
        params.append(value)
        return mark(len(params))

    for column in INDEXED[:3]:
        value = getattr(query, column)
        if value is not None:
            clauses.append(f"{column} = {bind(column_value(value))}")
    if query.scopes is not None:
        scopes = [column_value(scope) for scope in query.scopes]
        if not scopes:
            clauses.append("1 = 0")
        elif any_of is not None:
            params.append(scopes)
            clauses.append(any_of("scope", len(params)))
        else:
            clauses.append(f"scope IN ({', '.join(bind(scope) for scope in scopes)})")
    return clauses, params


def record_of(run_id: str, created: float, text: str) -> RunRecord:
    """The record a row holds; its ``created`` is the column's, which the first write set."""
    record: RunRecord = loads(text, key=f"run {run_id}")
    if record.created != created:
        record = dataclasses.replace(record, created=created)
    return record


def page_of(rows: Sequence[tuple[str, float, str]], query: RunQuery) -> RunPage:
    """The page of ``rows`` (run id, created, text), which may hold one row too many."""
    records = tuple(record_of(*row) for row in rows[: query.limit])
    more = len(rows) > query.limit
    return RunPage(records, cursor_after(records[-1]) if more else None)
