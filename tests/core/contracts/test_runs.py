"""The run registry's listing request: a :class:`RunQuery` is a :class:`RunFilter` (which
runs) with paging (how many, and where to continue), so a summary and a listing share
one set of filters, one check of them and one ``matches``."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import agentkit.core.contracts.run_totals
from agentkit.core.contracts.runs import RunFilter, RunQuery, RunRecord


def record(**fields: Any) -> RunRecord:
    values: dict[str, Any] = {
        "run_id": "r1", "agent": "support", "status": "complete", "scope": "org1:dom1",
        "created": 1.0, "updated": 1.0, "session": "s1", **fields,
    }
    return RunRecord(**values)


def test_a_run_query_is_a_run_filter_with_a_limit_and_a_cursor() -> None:
    assert issubclass(RunQuery, RunFilter)
    assert [f.name for f in dataclasses.fields(RunFilter)] == [
        "agent", "status", "session", "scopes"]
    assert [f.name for f in dataclasses.fields(RunQuery)] == [
        "agent", "status", "session", "scopes", "limit", "cursor"]
    assert RunQuery.matches is RunFilter.matches


def test_every_keyword_a_run_query_took_still_builds_the_same_query() -> None:
    query = RunQuery(agent="support", status="complete", session="s1", scopes=("org1:dom1",),
                     limit=3, cursor=None)
    assert (query.agent, query.status, query.session, query.scopes, query.limit,
            query.cursor) == ("support", "complete", "s1", ("org1:dom1",), 3, None)
    assert RunQuery() == RunQuery(limit=50)
    assert repr(RunQuery(agent="a")) == (
        "RunQuery(agent='a', status=None, session=None, scopes=None, limit=50, cursor=None)")
    with pytest.raises(TypeError):
        RunQuery("support")  # type: ignore[call-arg]


def test_a_filter_and_a_query_keep_their_fields_in_slots() -> None:
    assert vars(RunFilter)["__slots__"] == ("agent", "status", "session", "scopes")
    assert vars(RunQuery)["__slots__"] == ("limit", "cursor")
    for value in (RunFilter(), RunQuery()):
        assert not hasattr(value, "__dict__")
        with pytest.raises(dataclasses.FrozenInstanceError):
            value.agent = "other"  # type: ignore[misc]


def test_a_filter_and_the_same_filters_of_a_query_match_the_same_records() -> None:
    records = [record(), record(agent="billing"), record(status="running"),
               record(session=None), record(scope="org2:dom1")]
    for filters in ({}, {"agent": "support"}, {"status": "complete"}, {"session": "s1"},
                    {"scopes": ("org1:dom1",)}, {"scopes": ()}):
        matched = [r for r in records if RunFilter(**filters).matches(r)]
        assert matched == [r for r in records if RunQuery(**filters, limit=1).matches(r)]
    assert [RunFilter(agent="support", scopes=("org1:dom1",)).matches(r) for r in records] == [
        True, False, True, True, False]
    assert not RunFilter(scopes=()).matches(record())


@pytest.mark.parametrize("kind", [RunFilter, RunQuery])
def test_scopes_given_as_one_string_are_refused_naming_the_class_given(kind: Any) -> None:
    with pytest.raises(TypeError) as info:
        kind(scopes="org1:dom1")
    assert str(info.value) == (
        f"{kind.__name__}(scopes=...) is a tuple of scope keys or None, got the string "
        "'org1:dom1': write scopes=('org1:dom1',)"
    )


def test_a_query_checks_its_limit_before_its_scopes_and_its_cursor_last() -> None:
    with pytest.raises(ValueError) as info:
        RunQuery(limit=0, scopes="x", cursor="?")  # type: ignore[arg-type]
    assert str(info.value) == "RunQuery(limit=...) must be an integer from 1 to 1000, got 0"
    with pytest.raises(TypeError):
        RunQuery(scopes="x", cursor="?")  # type: ignore[arg-type]
    with pytest.raises(ValueError) as info:
        RunQuery(cursor="?")
    assert str(info.value).startswith("RunQuery(cursor=...) '?' is not a cursor")


def test_the_run_filter_is_still_importable_from_the_summaries_module() -> None:
    assert agentkit.core.contracts.run_totals.RunFilter is RunFilter
    assert "RunFilter" in agentkit.core.contracts.run_totals.__all__
