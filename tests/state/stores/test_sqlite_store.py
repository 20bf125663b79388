"""SQLiteStore: the durable store: key-value with expiry, logs, versioned slots, and a
get_or_set that is single-flight across tasks and across processes."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

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


async def test_values_round_trip_as_python_objects(store: SQLiteStore) -> None:
    value = {"receipt": Receipt("r-1", 500), "args": FrozenDict({"to": "a"}), "n": (1, 2)}
    await store.set("k", value)
    loaded = await store.get("k")
    assert loaded == value
    assert type(loaded["args"]) is FrozenDict


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
