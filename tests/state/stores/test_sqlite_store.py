"""SQLiteStore: the durable store: key-value with expiry, logs, versioned slots, and a
get_or_set that is single-flight across tasks and across processes."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentkit.core.contracts.errors import VersionConflict
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.state.codec import register
from agentkit.state.stores.sqlite import SQLiteStore


@dataclass(frozen=True)
class Receipt:
    id: str
    amount: int


register(Receipt, tag="tests.sqlite.Receipt")


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteStore]:
    opened = SQLiteStore(tmp_path / "state.db")
    yield opened
    opened.close()


def constant(value: Any, calls: list[str], label: str = "factory") -> Any:
    async def factory() -> Any:
        calls.append(label)
        return value

    return factory


async def test_get_set_and_delete(store: SQLiteStore) -> None:
    assert await store.get("k") is None
    await store.set("k", {"sent": True})
    assert await store.get("k") == {"sent": True}
    await store.set("k", "replaced")
    assert await store.get("k") == "replaced"
    assert await store.delete("k") is True
    assert await store.get("k") is None
    assert await store.delete("k") is False


async def test_values_round_trip_as_python_objects(store: SQLiteStore) -> None:
    value = {"receipt": Receipt("r-1", 500), "args": FrozenDict({"to": "a"}), "n": (1, 2)}
    await store.set("k", value)
    loaded = await store.get("k")
    assert loaded == value
    assert type(loaded["args"]) is FrozenDict


async def test_a_value_past_its_ttl_is_gone_and_a_long_ttl_is_kept(store: SQLiteStore) -> None:
    await store.set("short", "a", ttl=1e-9)
    await store.set("long", "b", ttl=3600)
    assert await store.get("short") is None
    assert await store.delete("short") is False
    assert await store.get("long") == "b"
    calls: list[str] = []
    assert await store.get_or_set("short", constant("fresh", calls)) == ("fresh", True)


@pytest.mark.parametrize("ttl", [0, -1])
async def test_a_ttl_that_is_not_positive_is_refused(store: SQLiteStore, ttl: float) -> None:
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


async def test_append_and_list_keep_each_log_in_order(store: SQLiteStore) -> None:
    assert await store.list("audit") == ()
    await store.append("audit", {"n": 1})
    await store.append("other", "x")
    await store.append("audit", {"n": 2})
    assert await store.list("audit") == ({"n": 1}, {"n": 2})
    assert await store.list("other") == ("x",)


async def test_versioned_writes_are_compare_and_set(store: SQLiteStore) -> None:
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


async def test_get_or_set_creates_once_then_returns_the_stored_value(store: SQLiteStore) -> None:
    calls: list[str] = []
    assert await store.get_or_set("k", constant("first", calls)) == ("first", True)
    assert await store.get_or_set("k", constant("second", calls, "again")) == ("first", False)
    assert calls == ["factory"]
    await store.set("preset", "there")
    assert await store.get_or_set("preset", constant("new", calls)) == ("there", False)
    assert calls == ["factory"]


async def test_concurrent_get_or_set_in_one_process_runs_the_factory_once(
    store: SQLiteStore,
) -> None:
    release = asyncio.Event()
    calls: list[int] = []

    async def factory() -> str:
        calls.append(1)
        await release.wait()
        return "shared"

    tasks = [asyncio.create_task(store.get_or_set("k", factory)) for _ in range(5)]
    while not calls:
        await asyncio.sleep(0)
    release.set()
    results = await asyncio.gather(*tasks)

    assert calls == [1]
    assert sorted(results, key=lambda r: not r[1]) == [("shared", True)] + [("shared", False)] * 4


async def test_a_raising_factory_stores_nothing_and_releases_its_claim(
    store: SQLiteStore,
) -> None:
    started, release = asyncio.Event(), asyncio.Event()

    async def failing() -> str:
        started.set()
        await release.wait()
        raise ConnectionError("provider down")

    first = asyncio.create_task(store.get_or_set("k", failing))
    await started.wait()
    waiter = asyncio.create_task(store.get_or_set("k", failing))
    release.set()
    for task in (first, waiter):
        with pytest.raises(ConnectionError) as info:
            await task
        assert str(info.value) == "provider down"
    assert await store.get("k") is None

    calls: list[str] = []
    # A claim left behind would make this wait out the 300-second lease.
    retried = await asyncio.wait_for(store.get_or_set("k", constant("ok", calls)), timeout=10)
    assert retried == ("ok", True)
    other = SQLiteStore(store.path)
    try:
        assert await asyncio.wait_for(other.get_or_set("k", constant("x", calls)), 10) == (
            "ok",
            False,
        )
    finally:
        other.close()


async def test_values_survive_closing_and_reopening_the_file(tmp_path: Path) -> None:
    path = tmp_path / "durable.db"
    async with SQLiteStore(path) as first:
        await first.set("k", Receipt("r-1", 500))
        await first.append("log", "a")
        await first.set_versioned("cp", {"step": 3}, expected_version=0)
        await first.get_or_set("once", constant("made", []))

    reopened = SQLiteStore(path)
    try:
        assert await reopened.get("k") == Receipt("r-1", 500)
        assert await reopened.list("log") == ("a",)
        assert await reopened.get_versioned("cp") == ({"step": 3}, 1)
        assert await reopened.get_or_set("once", constant("again", [])) == ("made", False)
    finally:
        reopened.close()


async def test_a_closed_store_says_it_is_closed(tmp_path: Path) -> None:
    path = tmp_path / "closed.db"
    store = SQLiteStore(path)
    store.close()
    store.close()  # closing twice is harmless
    message = f"SQLiteStore({str(path)!r}) is closed"
    operations = [
        store.get("k"),
        store.set("k", 1),
        store.delete("k"),
        store.append("log", 1),
        store.list("log"),
        store.get_versioned("cp"),
        store.set_versioned("cp", 1, expected_version=0),
        store.get_or_set("k", constant(1, [])),
    ]
    for operation in operations:
        with pytest.raises(RuntimeError) as info:
            await operation
        assert str(info.value) == message


_RACER = """
import asyncio, json, os, sys, time
from agentkit.state.stores.sqlite import SQLiteStore

db, effects, barrier, me = sys.argv[1:5]

async def main():
    store = SQLiteStore(db, poll_interval=0.01)
    open(os.path.join(barrier, me), "w").close()
    while len(os.listdir(barrier)) < 2:  # start the two calls together
        time.sleep(0.001)

    async def factory():
        with open(effects, "a") as f:
            f.write(me + "\\n")
        await asyncio.sleep(0.5)  # hold the claim while the other process arrives
        return "made by " + me

    value, created = await store.get_or_set("charge:order-1", factory)
    store.close()
    print(json.dumps([value, created]))

asyncio.run(main())
"""


def test_get_or_set_is_single_flight_across_processes(tmp_path: Path) -> None:
    script = tmp_path / "racer.py"
    script.write_text(_RACER)
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    db, effects = tmp_path / "shared.db", tmp_path / "effects.txt"
    SQLiteStore(db).close()  # create the schema before the race
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(db), str(effects), str(barrier), name],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in ("p1", "p2")
    ]
    outcomes = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        outcomes.append(json.loads(out))

    lines = effects.read_text().splitlines()
    assert len(lines) == 1
    (maker,) = lines
    assert sorted(outcomes, key=lambda o: not o[1]) == [
        [f"made by {maker}", True],
        [f"made by {maker}", False],
    ]


_DIES_HOLDING_A_CLAIM = """
import asyncio, os, sys
from agentkit.state.stores.sqlite import SQLiteStore

async def main():
    store = SQLiteStore(sys.argv[1])

    async def factory():
        os._exit(1)  # killed mid-factory: the claim row stays behind

    await store.get_or_set("charge:order-1", factory)

asyncio.run(main())
"""


async def test_a_claim_whose_process_died_is_taken_over_without_waiting_out_its_lease(
    tmp_path: Path,
) -> None:
    script = tmp_path / "dies.py"
    script.write_text(_DIES_HOLDING_A_CLAIM)
    db = tmp_path / "shared.db"
    proc = subprocess.run(
        [sys.executable, str(script), str(db)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1, proc.stderr

    store = SQLiteStore(db, claim_lease=300)
    try:
        calls: list[str] = []
        made = store.get_or_set("charge:order-1", constant("charged", calls))
        assert await asyncio.wait_for(made, timeout=10) == ("charged", True)
        assert calls == ["factory"]
    finally:
        store.close()


async def test_a_dead_claim_holder_with_our_own_pid_is_taken_over_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A restarted container runs its worker as the same PID (1) again: the claim its
    earlier life left must not look like ours and block for the whole lease."""
    script = tmp_path / "dies.py"
    script.write_text(_DIES_HOLDING_A_CLAIM)
    db = tmp_path / "shared.db"
    proc = subprocess.Popen([sys.executable, str(script), str(db)], stderr=subprocess.PIPE)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    monkeypatch.setattr("os.getpid", lambda: proc.pid)  # we are that PID now

    store = SQLiteStore(db, claim_lease=300)
    try:
        calls: list[str] = []
        made = store.get_or_set("charge:order-1", constant("charged", calls))
        assert await asyncio.wait_for(made, timeout=20) == ("charged", True)
        assert calls == ["factory"]
    finally:
        store.close()
