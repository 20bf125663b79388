"""agentkit.state.sessions directly: appending a turn is a compare-and-set, a retried
append is a no-op, and a record that is not a session's is reported, not trusted."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentkit.core.contracts.state_errors import CheckpointCorrupt, SessionBusy
from agentkit.core.contracts.types import Message, Scope
from agentkit.state.sessions import (
    SessionRecord,
    append_turn,
    list_sessions,
    load_session,
    read_session,
)
from agentkit.state.stores import InMemoryStore, SQLiteStore

SCOPE = Scope(1, 2)
TURN = (Message("user", "hi"), Message("assistant", "hello"))


async def test_a_retried_append_of_the_same_turn_appends_it_once() -> None:
    store = InMemoryStore()
    first = await append_turn(store, SCOPE, "s", version=0, messages=TURN, turn="r1:a",
                              run_id="r1")
    again = await append_turn(store, SCOPE, "s", version=0, messages=TURN, turn="r1:a",
                              run_id="r1")
    assert (first, again) == (1, 1)
    assert await read_session(store, SCOPE, "s") == TURN
    assert await list_sessions(store, SCOPE) == ("s",)


async def test_another_turn_over_a_stale_version_is_refused_and_changes_nothing() -> None:
    store = InMemoryStore()
    await append_turn(store, SCOPE, "s", version=0, messages=TURN, turn="r1:a", run_id="r1")
    with pytest.raises(SessionBusy) as caught:
        await append_turn(store, SCOPE, "s", version=0, messages=(Message("user", "x"),),
                          turn="r2:a", run_id="r2", result="the answer")
    assert (caught.value.session_id, caught.value.scope, caught.value.run_id,
            caught.value.result) == ("s", "org1:dom2", "r2", "the answer")
    record, version = await load_session(store, SCOPE, "s")
    assert (record.messages, record.turns, version) == (TURN, ("r1:a",), 1)


async def test_a_value_that_is_not_a_session_record_is_reported_corrupt() -> None:
    store = InMemoryStore()
    await store.set_versioned("session:org1:dom2:s", {"messages": []}, expected_version=0)
    with pytest.raises(CheckpointCorrupt) as caught:
        await read_session(store, SCOPE, "s")
    assert str(caught.value) == (
        "stored value under key 'session:org1:dom2:s' is corrupt: expected a session record, "
        "found a dict. It was left as it is; delete the key (or restore it from a backup) to "
        "start over"
    )


async def test_a_session_id_must_be_a_short_non_empty_string() -> None:
    with pytest.raises(ValueError) as caught:
        await read_session(InMemoryStore(), SCOPE, "x" * 201)
    assert str(caught.value).startswith(
        "a session id must be a non-empty string of at most 200 characters, got 'xxx"
    )


async def test_a_session_id_holding_a_lone_surrogate_is_refused_naming_it(
    tmp_path: Path,
) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    try:
        with pytest.raises(ValueError) as caught:
            await read_session(store, SCOPE, "chat-\ud800")
    finally:
        store.close()
    assert type(caught.value) is ValueError  # not the driver's UnicodeEncodeError
    assert str(caught.value) == (
        "a session id must be text that UTF-8 can encode, got 'chat-\\ud800': it holds a "
        "lone surrogate (U+D800 at index 5); use an id of whole characters"
    )


async def test_a_long_session_reads_back_every_turn_in_order_and_up_to_a_version() -> None:
    store = InMemoryStore()
    for n in range(40):  # more turns than the first pages of rows hold
        await append_turn(store, SCOPE, "s", version=n, messages=(Message("user", f"q{n}"),),
                          turn=f"r{n}:a", run_id=f"r{n}")
    record, version = await load_session(store, SCOPE, "s")
    assert ([m.content for m in record.messages], version) == ([f"q{n}" for n in range(40)], 40)
    upto, at = await load_session(store, SCOPE, "s", upto=17)
    assert (upto.turns, at) == (tuple(f"r{n}:a" for n in range(17)), 17)


async def test_a_version_of_the_record_before_turn_rows_appends_only_while_current() -> None:
    """A run started before turn rows (on Temporal, nothing says so) read the old
    record's version: its turn becomes row 1 while that version is current."""
    store = InMemoryStore()
    old = SessionRecord(TURN, ("r0:a",))
    for version in range(3):
        await store.set_versioned("session:org1:dom2:s", old, expected_version=version)
    late = (Message("user", "again"), Message("assistant", "still here"))
    with pytest.raises(SessionBusy):
        await append_turn(store, SCOPE, "s", version=2, messages=late, turn="r1:a",
                          run_id="r1")
    assert await append_turn(store, SCOPE, "s", version=3, messages=late, turn="r2:a",
                             run_id="r2") == 1
    record, version = await load_session(store, SCOPE, "s")
    assert (record.messages, record.turns, version) == ((*TURN, *late), ("r0:a", "r2:a"), 1)
