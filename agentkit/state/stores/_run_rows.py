"""The run registry as SQL rows, shared by SQLiteStore and PostgresStore.

A record is one row: the fields a listing filters and sorts on as indexed columns
(agent, status, session, scope, created, run id), the whole record beside them as
codec text. A page is one query, ``ORDER BY created DESC, run_id DESC`` from the
position of the cursor, asking one row more than the page to learn whether another
page follows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from agentkit.core.contracts.runs import RunPage, RunQuery, RunRecord, cursor_after, position_of
from agentkit.state.codec import loads

__all__ = ["INDEXED", "page_of", "record_of", "selection"]

INDEXED = ("agent", "status", "session", "scope")
"""The columns a listing filters on, each with an index ending in (created, run_id)."""


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
