"""The Store contract, run against every store agentkit ships so they cannot drift:
InMemoryStore, SQLiteStore (a file) and PostgresStore (the session's real server)."""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import decimal
import hashlib
import json
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from agentkit.agents.result import AgentResult, Suspended
from agentkit.agents.run_state import RunState
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.media import Audio, File, Image
from agentkit.core.contracts.runs import RunPage, RunQuery, RunRecord, WaitingCall
from agentkit.core.contracts.state_errors import CheckpointCorrupt, NotStorable, VersionConflict
from agentkit.core.contracts.types import LLMResult, Message, Scope, ToolCall, Usage
from agentkit.core.policies.audit import AuditRecord
from agentkit.state.codec import loads
from agentkit.state.stores import InMemoryStore
from agentkit.state.stores.postgres import PostgresStore
from agentkit.state.stores.sqlite import SQLiteStore

DEADLINE = 10.0
"""Seconds a concurrent test may wait on an event before it fails instead of hanging."""

KINDS = ["memory", "sqlite", "postgres"]


async def open_store(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if kind == "memory":
        return InMemoryStore()
    if kind == "sqlite":
        return SQLiteStore(tmp_path / "state.db")
    dsn = request.getfixturevalue("postgres_dsn")
    return PostgresStore(dsn, schema=request.getfixturevalue("postgres_schema"), pool_size=4)


async def close_store(store: Any) -> None:
    if isinstance(store, SQLiteStore):
        store.close()
    elif isinstance(store, PostgresStore):
        await store.close()


@pytest.fixture(params=KINDS)
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    opened = await open_store(request.param, request, tmp_path)
    yield opened
    await close_store(opened)


def constant(value: Any, calls: list[str], label: str = "factory") -> Any:
    async def factory() -> Any:
        calls.append(label)
        return value

    return factory


async def test_get_set_and_delete(store: Any) -> None:
    assert await store.get("k") is None
    await store.set("k", {"sent": True})
    assert await store.get("k") == {"sent": True}
    await store.set("k", "replaced")
    assert await store.get("k") == "replaced"
    assert await store.delete("k") is True
    assert await store.get("k") is None
    assert await store.delete("k") is False


async def test_a_value_past_its_ttl_is_gone_and_a_long_ttl_is_kept(store: Any) -> None:
    await store.set("short", "a", ttl=1e-9)
    await store.set("long", "b", ttl=3600)
    await asyncio.sleep(0.001)  # the in-memory store's clock must move past 1 ns
    assert await store.get("short") is None
    assert await store.delete("short") is False
    assert await store.get("long") == "b"
    calls: list[str] = []
    assert await store.get_or_set("short", constant("fresh", calls)) == ("fresh", True)
    assert calls == ["factory"]


async def test_set_without_ttl_clears_an_earlier_ttl(store: Any) -> None:
    await store.set("k", "a", ttl=1e-9)
    await store.set("k", "b")
    await asyncio.sleep(0.001)
    assert await store.get("k") == "b"


@pytest.mark.parametrize("ttl", [0, -1, -0.5])
async def test_a_ttl_that_is_not_positive_is_refused(store: Any, ttl: float) -> None:
    message = f"ttl must be a positive number of seconds, got {ttl!r}"
    with pytest.raises(ValueError) as info:
        await store.set("k", "v", ttl=ttl)
    assert str(info.value) == message
    calls: list[str] = []
    with pytest.raises(ValueError) as info:
        await store.get_or_set("k", constant("v", calls), ttl=ttl)
    assert str(info.value) == message
    assert calls == []
    assert await store.get("k") is None


async def test_append_and_list_keep_each_log_in_order(store: Any) -> None:
    assert await store.list("audit") == ()
    for n in range(1, 21):
        await store.append("audit", {"n": n})
        if n % 5 == 0:
            await store.append("other", f"x{n}")
    assert await store.list("audit") == tuple({"n": n} for n in range(1, 21))
    assert await store.list("other") == ("x5", "x10", "x15", "x20")


async def test_versioned_writes_are_compare_and_set(store: Any) -> None:
    assert await store.get_versioned("cp") == (None, 0)
    assert await store.set_versioned("cp", "v1", expected_version=0) == 1
    assert await store.set_versioned("cp", "v2", expected_version=1) == 2
    assert await store.get_versioned("cp") == ("v2", 2)

    with pytest.raises(VersionConflict) as info:
        await store.set_versioned("cp", "stale", expected_version=1)
    assert (info.value.key, info.value.expected, info.value.actual) == ("cp", 1, 2)
    assert str(info.value) == (
        "write to 'cp' refused: expected version 1, found 2; "
        "another worker has written since this one read"
    )
    with pytest.raises(VersionConflict) as info:
        await store.set_versioned("cp", "again", expected_version=0)
    assert (info.value.expected, info.value.actual) == (0, 2)
    with pytest.raises(VersionConflict) as info:
        await store.set_versioned("never", "x", expected_version=3)
    assert (info.value.expected, info.value.actual) == (3, 0)
    assert await store.get_versioned("cp") == ("v2", 2)
    assert await store.get_versioned("never") == (None, 0)


async def test_get_versioned_many_reads_each_key_in_the_order_asked(store: Any) -> None:
    await store.set_versioned("a", "one", expected_version=0)
    await store.set_versioned("b", {"n": 2}, expected_version=0)
    await store.set_versioned("b", ("two", 2), expected_version=1)
    await store.set_versioned("gone", None, expected_version=0)
    keys = ["b", "never", "a", "gone", "b", *(f"k{i}" for i in range(600))]
    assert await store.get_versioned_many(keys) == (
        (("two", 2), 2), (None, 0), ("one", 1), (None, 1), (("two", 2), 2),
        *((None, 0) for _ in range(600)),
    )
    assert await store.get_versioned_many([]) == ()


async def test_concurrent_versioned_writers_on_one_version_have_one_winner(store: Any) -> None:
    await store.set_versioned("cp", "v1", expected_version=0)
    outcomes = await asyncio.gather(
        *(store.set_versioned("cp", f"w{i}", expected_version=1) for i in range(8)),
        return_exceptions=True,
    )
    winners = [o for o in outcomes if o == 2]
    losers = [o for o in outcomes if isinstance(o, VersionConflict)]
    assert (len(winners), len(losers)) == (1, 7)
    assert {(e.expected, e.actual) for e in losers} == {(1, 2)}
    value, version = await store.get_versioned("cp")
    assert version == 2
    assert value in {f"w{i}" for i in range(8)}


async def test_get_or_set_creates_once_then_returns_the_stored_value(store: Any) -> None:
    calls: list[str] = []
    assert await store.get_or_set("k", constant("first", calls)) == ("first", True)
    assert await store.get_or_set("k", constant("second", calls, "again")) == ("first", False)
    assert calls == ["factory"]
    await store.set("preset", "there")
    assert await store.get_or_set("preset", constant("new", calls)) == ("there", False)
    assert calls == ["factory"]


async def test_a_stored_none_is_a_hit_not_a_miss(store: Any) -> None:
    calls: list[str] = []
    assert await store.get_or_set("k", constant(None, calls)) == (None, True)
    assert await store.get_or_set("k", constant("other", calls, "again")) == (None, False)
    assert calls == ["factory"]
    assert await store.delete("k") is True


async def test_concurrent_get_or_set_in_one_process_runs_the_factory_once(store: Any) -> None:
    release = asyncio.Event()
    calls: list[int] = []

    async def factory() -> str:
        calls.append(1)
        await release.wait()
        return "shared"

    async with asyncio.timeout(DEADLINE):
        tasks = [asyncio.create_task(store.get_or_set("k", factory)) for _ in range(5)]
        while not calls:
            await asyncio.sleep(0.001)
        release.set()
        results = await asyncio.gather(*tasks)

    assert calls == [1]
    assert sorted(results, key=lambda r: not r[1]) == [("shared", True)] + [("shared", False)] * 4


async def test_a_raising_factory_stores_nothing_and_the_next_caller_tries_again(
    store: Any,
) -> None:
    started, release = asyncio.Event(), asyncio.Event()

    async def failing() -> str:
        started.set()
        await release.wait()
        raise ConnectionError("provider down")

    async with asyncio.timeout(DEADLINE):
        first = asyncio.create_task(store.get_or_set("k", failing))
        await started.wait()
        waiter = asyncio.create_task(store.get_or_set("k", failing))
        await asyncio.sleep(0.01)
        release.set()
        for task in (first, waiter):
            with pytest.raises(ConnectionError) as info:
                await task
            assert str(info.value) == "provider down"
        assert await store.get("k") is None

        calls: list[str] = []
        # A claim or lock left behind would make this wait (for a lease) or hang.
        assert await store.get_or_set("k", constant("ok", calls)) == ("ok", True)
        assert calls == ["factory"]


async def test_a_cancelled_factory_lets_a_waiter_take_over(store: Any) -> None:
    started = asyncio.Event()
    never = asyncio.Event()
    waiter_calls: list[str] = []

    async def stuck() -> str:
        started.set()
        await never.wait()
        return "unreachable"

    async with asyncio.timeout(DEADLINE):
        runner = asyncio.create_task(store.get_or_set("k", stuck))
        await started.wait()
        waiter = asyncio.create_task(store.get_or_set("k", constant("taken over", waiter_calls)))
        await asyncio.sleep(0.01)
        runner.cancel()
        assert await waiter == ("taken over", True)
    assert runner.cancelled()
    assert waiter_calls == ["factory"]
    assert await store.get("k") == "taken over"


async def test_a_cancelled_waiter_is_cancelled_and_the_factory_carries_on(store: Any) -> None:
    started, release = asyncio.Event(), asyncio.Event()

    async def slow() -> str:
        started.set()
        await release.wait()
        return "done"

    async with asyncio.timeout(DEADLINE):
        runner = asyncio.create_task(store.get_or_set("k", slow))
        await started.wait()
        waiter = asyncio.create_task(store.get_or_set("k", constant("never", [])))
        await asyncio.sleep(0.01)
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        release.set()
        assert await runner == ("done", True)
    assert await store.get("k") == "done"


LONG = "".join(hashlib.sha256(str(i).encode()).hexdigest() for i in range(63))[:4000]
"""4,000 characters of no pattern: a model-chosen call id in an intent key."""


@pytest.mark.parametrize("key", ["nul \x00 inside", "call:" + LONG, "\x01sha256:x", ""])
async def test_keys_with_nul_or_past_an_index_limit_are_kept_apart(
    store: Any, key: str
) -> None:
    for other in (key, key + "/2"):
        await store.set(other, other)
        assert await store.get_or_set(other + "/once", constant(other, [])) == (other, True)
        await store.append(other, other)
        assert await store.set_versioned(other, other, expected_version=0) == 1
    for other in (key, key + "/2"):
        assert await store.get(other) == other
        assert await store.get_or_set(other + "/once", constant("again", [])) == (other, False)
        assert await store.list(other) == (other,)
        assert await store.get_versioned(other) == (other, 1)
    assert await store.get_versioned_many([key + "/2", key, key + "/3"]) == (
        (key + "/2", 1), (key, 1), (None, 0),
    )
    assert await store.delete(key) is True
    assert await store.get(key + "/2") == key + "/2"


# -- across processes (the durable stores) ----------------------------------------------

_RACER = """
import asyncio, json, os, sys, time

kind, where, schema, effects, barrier, me, count = sys.argv[1:8]

def open_store():
    if kind == "sqlite":
        from agentkit.state.stores.sqlite import SQLiteStore
        return SQLiteStore(where, poll_interval=0.01)
    from agentkit.state.stores.postgres import PostgresStore
    return PostgresStore(where, schema=schema)

async def main():
    store = open_store()
    await store.get("warm-up")  # connect before the race, not during it
    open(os.path.join(barrier, me), "w").close()
    while len(os.listdir(barrier)) < int(count):  # start the calls together
        time.sleep(0.001)

    async def factory():
        with open(effects, "a") as f:
            f.write(me + "\\n")
        await asyncio.sleep(0.5)  # hold the claim while the others arrive
        return "made by " + me

    value, created = await store.get_or_set("charge:order-1", factory)
    result = store.close()
    if result is not None:
        await result
    print(json.dumps([value, created]))

asyncio.run(main())
"""


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_get_or_set_is_single_flight_across_four_processes(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    script = tmp_path / "racer.py"
    script.write_text(_RACER)
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    effects = tmp_path / "effects.txt"
    if kind == "sqlite":
        where, schema = str(tmp_path / "shared.db"), "-"
        SQLiteStore(where).close()  # create the schema before the race
    else:
        where, schema = request.getfixturevalue("postgres_dsn"), request.getfixturevalue(
            "postgres_schema"
        )
    names = ("p1", "p2", "p3", "p4")
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), kind, where, schema, str(effects), str(barrier),
             name, str(len(names))],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in names
    ]
    outcomes = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        outcomes.append(json.loads(out))

    lines = effects.read_text().splitlines()
    assert len(lines) == 1
    (maker,) = lines
    assert sorted(outcomes, key=lambda o: not o[1]) == [[f"made by {maker}", True]] + [
        [f"made by {maker}", False]
    ] * 3


# -- the value format -----------------------------------------------------------------

CALL = ToolCall("c1", "send", {"to": ["a@x.org"], "meta": {"n": 1}})
TRANSCRIPT = (
    Message(role="user", content="hi"),
    Message(role="assistant", tool_calls=(CALL,)),
    Message(
        role="tool", content="sent", tool_call_id="c1", name="send",
        attachments=(Image(b"\x89PNG\r\n"), Audio(b"RIFF", "audio/wav"),
                     File(b"%PDF", "application/pdf", name="r.pdf")),
    ),
)
VALUES: dict[str, Any] = {
    "plain": [None, True, 0, -7, 10**40, 1.5, "", {"a": [1, {"b": None}]}],
    "python": (
        (1, "a"), {1: "int key", (2, 3): "tuple key"}, {"$": "looks like a tag"},
        FrozenDict({"x": FrozenDict({"y": (1, 2)})}), {1, 2}, frozenset({"a"}),
        b"\x00\xffbytes", float("inf"),
        dt.datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=dt.timezone(dt.timedelta(hours=2))),
        dt.date(2026, 1, 2), dt.time(3, 4, 5), dt.timedelta(1, 2, 3), decimal.Decimal("1.10"),
        uuid.UUID("12345678-1234-5678-1234-567812345678"),
    ),
    "text": "naïve \x00 nul, a lone surrogate \ud800, and 'quotes' \"too\" \\",
    "agentkit": (
        Scope(7, "dom"), Usage(1, 2, 3, 4, 0.5, 6), CALL, *TRANSCRIPT,
        LLMResult("answer", (CALL,), Usage(1, 1), "tool_calls", "m"),
        Suspended("r1", (CALL,), reason="awaiting_input"),
        AgentResult("out", "complete", Usage(2), FrozenDict({"k": 1}), TRANSCRIPT, "r1", 2),
        RunState("r1", "agent", "running", TRANSCRIPT, Usage(3), 2, (CALL,), TRANSCRIPT[2:],
                 FrozenDict({"c1": "approval"}), FrozenDict({"c1": {"to": "b"}}), 1),
        AuditRecord("r1", "org1:dom2", "send", "c1", "ab" * 32, None, "failed", 12.5,
                    error="ValueError", arguments=FrozenDict({"to": "a"})),
    ),
}


def same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down (1 is not True, a list not a tuple)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@pytest.mark.parametrize("name", list(VALUES))
async def test_every_kind_of_value_round_trips_with_its_exact_types(
    store: Any, name: str
) -> None:
    value = VALUES[name]
    await store.set("kv", value)
    await store.get_or_set("once", constant(value, []))
    await store.append("log", value)
    await store.set_versioned("cp", value, expected_version=0)
    assert same(await store.get("kv"), value)
    assert same((await store.get_or_set("once", constant(None, [])))[0], value)
    (logged,) = await store.list("log")
    assert same(logged, value)
    assert same((await store.get_versioned("cp"))[0], value)


async def test_a_value_that_is_not_data_is_refused_and_nothing_is_stored(store: Any) -> None:
    class Opaque:
        pass

    with pytest.raises(NotStorable):
        await store.set("k", {"result": Opaque()})
    with pytest.raises(NotStorable):
        await store.get_or_set("once", constant(Opaque(), []))
    with pytest.raises(NotStorable):
        await store.append("log", Opaque())
    assert await store.get("k") is None
    assert await store.list("log") == ()
    calls: list[str] = []
    assert await store.get_or_set("once", constant("data", calls)) == ("data", True)


CORRUPT = [
    "",
    "not json",
    '{"agentkit": 1, "value": {"$": "agentkit.Message", "role": "user", "con',
    '{"agentkit": 99, "value": 1}',
    '{"agentkit": 1, "value": {"$": "os.system", "command": "touch /tmp/owned"}}',
    '[1, 2, 3]',
]


async def overwrite(store: Any, table: str, where: str, text: str) -> None:
    """Put ``text`` straight into a row of a durable store, as an attacker could."""
    if isinstance(store, SQLiteStore):
        connection = sqlite3.connect(store.path)
        try:
            with connection:
                connection.execute(f"UPDATE {table} SET value = ? WHERE {where}", (text,))
        finally:
            connection.close()
        return
    pg = await asyncpg.connect(store.dsn)
    try:
        await pg.execute(f"UPDATE {store.schema}.{table} SET value = $1 WHERE {where}", text)
    finally:
        await pg.close()


@pytest.fixture(params=["sqlite", "postgres"])
async def durable(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    opened = await open_store(request.param, request, tmp_path)
    yield opened
    await close_store(opened)


@pytest.mark.parametrize("text", CORRUPT)
async def test_a_corrupted_row_raises_checkpoint_corrupt_and_is_left_as_it_is(
    durable: Any, text: str
) -> None:
    await durable.set("k", "fine")
    await durable.set_versioned("cp", {"step": 1}, expected_version=0)
    await durable.append("audit", "first")
    await durable.append("audit", "second")
    await overwrite(durable, "kv", "key = 'k'", text)
    await overwrite(durable, "versioned", "key = 'cp'", text)
    await overwrite(durable, "logs", "id = 2", text)  # the second entry of a fresh table

    def expected(key: str) -> str:
        with pytest.raises(CheckpointCorrupt) as info:
            loads(text, key=key)
        return str(info.value)

    for read, key in (
        (durable.get("k"), "k"),
        (durable.get_or_set("k", constant("overwritten", [])), "k"),
        (durable.get_versioned("cp"), "cp"),
        (durable.list("audit"), "audit[2]"),
    ):
        with pytest.raises(CheckpointCorrupt) as info:
            await read
        assert info.value.key == key
        assert str(info.value) == expected(key)
    # Nothing was replaced or removed by reading; deleting is how a key is cleared.
    with pytest.raises(CheckpointCorrupt):
        await durable.get("k")
    assert await durable.delete("k") is True
    assert await durable.get("k") is None


# -- the run registry ---------------------------------------------------------------------


def run_record(run_id: str, created: float, **fields: Any) -> RunRecord:
    values: dict[str, Any] = {
        "agent": "support", "status": "running", "scope": "org1:dom1", **fields,
    }
    return RunRecord(run_id=run_id, created=created, updated=created, **values)


async def test_a_run_record_round_trips_and_a_rewrite_keeps_when_it_was_created(
    store: Any,
) -> None:
    first = run_record("r1", 1000.5, session="s1")
    await store.put_run(first)
    assert await store.get_run("r1") == first
    assert await store.get_run("r2") is None
    waiting = RunRecord(
        run_id="r1", agent="support", status="suspended", scope="org1:dom1", session="s1",
        created=2000.0, updated=1001.25,
        pending=(
            WaitingCall(call_id="c1/s3", tool="refund", arguments=FrozenDict({"usd": 5}),
                        kind="approval", agents=("support", "billing"), since=1001.0),
        ),
        usage=Usage(input_tokens=10, output_tokens=3), cost_usd=0.25, output={"a": [1]},
    )
    await store.put_run(waiting)
    assert await store.get_run("r1") == dataclasses.replace(waiting, created=1000.5)
    assert (await store.list_runs(RunQuery())).records == (
        dataclasses.replace(waiting, created=1000.5),
    )


async def test_a_checkpoint_and_its_run_record_are_written_together_or_not_at_all(
    store: Any,
) -> None:
    """``set_versioned_with_run``: the compare-and-set of ``set_versioned`` and the
    ``put_run`` of the record, in one write; a lost race writes neither."""
    first = run_record("r1", 1000.5, session="s1")
    assert await store.set_versioned_with_run(
        "checkpoint:r1", {"step": 1}, expected_version=0, record=first
    ) == 1
    assert await store.get_run("r1") == first
    done = run_record("r1", 2000.0, status="complete", output="done")
    assert await store.set_versioned_with_run(
        "checkpoint:r1", {"step": 2}, expected_version=1, record=done
    ) == 2
    for expected in (1, 0):
        with pytest.raises(VersionConflict) as caught:
            await store.set_versioned_with_run(
                "checkpoint:r1", {"step": 9}, expected_version=expected,
                record=run_record("r1", 3000.0, status="cancelled"),
            )
        assert str(caught.value) == (
            f"write to 'checkpoint:r1' refused: expected version {expected}, found 2; "
            "another worker has written since this one read"
        )
    assert await store.get_versioned("checkpoint:r1") == ({"step": 2}, 2)
    assert await store.get_run("r1") == dataclasses.replace(done, created=1000.5)


async def test_runs_are_listed_newest_first_page_by_page_through_the_cursor(store: Any) -> None:
    for n in range(7):
        await store.put_run(run_record(f"r{n}", 100.0 + n))
    await store.put_run(run_record("tie-a", 103.0))  # same created as r3: the id decides
    first = await store.list_runs(RunQuery(limit=3))
    assert [r.run_id for r in first.records] == ["r6", "r5", "r4"]
    assert first.next_cursor is not None
    await store.put_run(run_record("late", 500.0))  # newer: never shifts the pages after
    second = await store.list_runs(RunQuery(limit=3, cursor=first.next_cursor))
    assert [r.run_id for r in second.records] == ["tie-a", "r3", "r2"]
    third = await store.list_runs(RunQuery(limit=3, cursor=second.next_cursor))
    assert [r.run_id for r in third.records] == ["r1", "r0"]
    assert third.next_cursor is None
    exact = await store.list_runs(RunQuery(limit=9))
    assert len(exact.records) == 9
    assert exact.next_cursor is None
    assert await store.list_runs(RunQuery(agent="nobody")) == RunPage(())


async def test_runs_are_filtered_by_agent_status_session_and_scope(store: Any) -> None:
    rows = [
        run_record("a", 1.0, agent="support", status="suspended", session="s1"),
        run_record("b", 2.0, agent="billing", status="suspended", scope="org2:dom1"),
        run_record("c", 3.0, agent="support", status="complete", session="s1"),
        run_record("d", 4.0, agent="support", status="suspended", session="s2",
                   scope="org2:dom1"),
    ]
    for row in rows:
        await store.put_run(row)

    async def ids(**filters: Any) -> list[str]:
        return [r.run_id for r in (await store.list_runs(RunQuery(**filters))).records]

    assert await ids() == ["d", "c", "b", "a"]
    assert await ids(agent="support") == ["d", "c", "a"]
    assert await ids(status="suspended") == ["d", "b", "a"]
    assert await ids(session="s1") == ["c", "a"]
    assert await ids(scopes=("org2:dom1",)) == ["d", "b"]
    assert await ids(scopes=("org1:dom1", "org2:dom1")) == ["d", "c", "b", "a"]
    assert await ids(scopes=()) == []
    assert await ids(agent="support", status="suspended", scopes=("org1:dom1",)) == ["a"]
    page = await store.list_runs(RunQuery(status="suspended", limit=1))
    assert await ids(status="suspended", cursor=page.next_cursor) == ["b", "a"]


async def test_ids_with_nul_or_past_an_index_limit_are_registered_and_found(store: Any) -> None:
    long_id = "r" * 5000
    await store.put_run(run_record("a\x00b", 1.0, session="s\x00"))
    await store.put_run(run_record(long_id, 2.0, session="s" * 3000))
    assert (await store.get_run("a\x00b")) == run_record("a\x00b", 1.0, session="s\x00")
    assert (await store.get_run(long_id)) == run_record(long_id, 2.0, session="s" * 3000)
    found = await store.list_runs(RunQuery(session="s\x00"))
    assert [r.run_id for r in found.records] == ["a\x00b"]
    page = await store.list_runs(RunQuery(limit=1))
    assert [r.run_id for r in page.records] == [long_id]
    rest = await store.list_runs(RunQuery(limit=1, cursor=page.next_cursor))
    assert [r.run_id for r in rest.records] == ["a\x00b"]


@pytest.mark.parametrize("cursor", ["", "not a cursor", "bnVsbA", "WzEsMl0"])
def test_a_cursor_no_listing_returned_is_refused(cursor: str) -> None:
    with pytest.raises(ValueError) as info:
        RunQuery(cursor=cursor)
    assert str(info.value) == (
        f"RunQuery(cursor=...) {cursor!r} is not a cursor this registry returned: pass a "
        "page's next_cursor as it is, or None for the first page"
    )


@pytest.mark.parametrize("limit", [0, -1, 1001, True, 2.5])
def test_a_page_size_out_of_range_is_refused(limit: Any) -> None:
    with pytest.raises(ValueError) as info:
        RunQuery(limit=limit)
    assert str(info.value) == (
        f"RunQuery(limit=...) must be an integer from 1 to 1000, got {limit!r}"
    )


def test_scopes_given_as_one_string_are_refused() -> None:
    with pytest.raises(TypeError) as info:
        RunQuery(scopes="org1:dom1")  # type: ignore[arg-type]
    assert str(info.value) == (
        "RunQuery(scopes=...) is a tuple of scope keys or None, got the string "
        "'org1:dom1': write scopes=('org1:dom1',)"
    )
