"""InMemoryStore: expiry, single-flight get_or_set that never stores a failure, logs."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agentkit.state.stores import InMemoryStore

DEADLINE = 5.0
"""Seconds a concurrent test may wait on an event before it fails instead of hanging."""


class FakeClock:
    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def constant(value: Any, calls: list[str], label: str = "factory") -> Any:
    async def factory() -> Any:
        calls.append(label)
        return value

    return factory


async def test_get_set_and_delete() -> None:
    store = InMemoryStore()
    assert await store.get("k") is None
    await store.set("k", {"sent": True})
    assert await store.get("k") == {"sent": True}
    await store.set("k", "replaced")
    assert await store.get("k") == "replaced"
    assert await store.delete("k") is True
    assert await store.get("k") is None
    assert await store.delete("k") is False


async def test_values_expire_after_their_ttl() -> None:
    clock = FakeClock(1000.0)
    store = InMemoryStore(clock=clock)
    await store.set("short", "a", ttl=10)
    await store.set("forever", "b")
    clock.now = 1009.999
    assert await store.get("short") == "a"
    clock.now = 1010.0
    assert await store.get("short") is None
    assert await store.delete("short") is False
    clock.now = 10**9
    assert await store.get("forever") == "b"


@pytest.mark.parametrize("ttl", [0, -1, -0.5])
async def test_a_ttl_that_is_not_positive_is_refused(ttl: float) -> None:
    store = InMemoryStore()
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


async def test_get_or_set_creates_once_then_returns_the_stored_value() -> None:
    store = InMemoryStore()
    calls: list[str] = []
    assert await store.get_or_set("k", constant("first", calls)) == ("first", True)
    assert await store.get_or_set("k", constant("second", calls, "again")) == ("first", False)
    assert calls == ["factory"]
    assert await store.get("k") == "first"


async def test_get_or_set_returns_a_value_put_there_by_set() -> None:
    store = InMemoryStore()
    await store.set("k", "preset")
    calls: list[str] = []
    assert await store.get_or_set("k", constant("fresh", calls)) == ("preset", False)
    assert calls == []


async def test_a_stored_none_is_a_hit_not_a_miss() -> None:
    store = InMemoryStore()
    calls: list[str] = []
    assert await store.get_or_set("k", constant(None, calls)) == (None, True)
    assert await store.get_or_set("k", constant("other", calls, "again")) == (None, False)
    assert calls == ["factory"]
    assert await store.delete("k") is True


async def test_get_or_set_creates_again_after_expiry() -> None:
    clock = FakeClock()
    store = InMemoryStore(clock=clock)
    calls: list[str] = []
    assert await store.get_or_set("k", constant("a", calls, "1"), ttl=5) == ("a", True)
    clock.now = 4.0
    assert await store.get_or_set("k", constant("b", calls, "2"), ttl=5) == ("a", False)
    clock.now = 5.0
    assert await store.get_or_set("k", constant("c", calls, "3"), ttl=5) == ("c", True)
    assert calls == ["1", "3"]


async def test_concurrent_get_or_set_runs_one_factory() -> None:
    callers = 10
    calls: list[int] = []
    arrived: list[int] = []
    all_arrived = asyncio.Event()
    release = asyncio.Event()
    store = InMemoryStore()

    async def call(index: int) -> tuple[Any, bool]:
        async def factory() -> str:
            calls.append(index)
            await release.wait()
            return f"made by {index}"

        arrived.append(index)
        if len(arrived) == callers:
            all_arrived.set()
        return await store.get_or_set("k", factory)

    async with asyncio.timeout(DEADLINE):
        tasks = [asyncio.create_task(call(i)) for i in range(callers)]
        await all_arrived.wait()
        release.set()
        results = await asyncio.gather(*tasks)

    assert calls == [0]
    assert results == [("made by 0", True)] + [("made by 0", False)] * (callers - 1)


async def test_a_raising_factory_stores_nothing_and_its_waiters_share_the_error() -> None:
    store = InMemoryStore()
    error = ConnectionError("upstream refused")
    started = asyncio.Event()
    waiting = asyncio.Event()
    release = asyncio.Event()
    waiter_calls: list[str] = []

    async def failing() -> str:
        started.set()
        await release.wait()
        raise error

    async def wait_for_it() -> tuple[Any, bool]:
        waiting.set()
        return await store.get_or_set("k", constant("waiter's own", waiter_calls))

    async with asyncio.timeout(DEADLINE):
        runner = asyncio.create_task(store.get_or_set("k", failing))
        await started.wait()
        waiter = asyncio.create_task(wait_for_it())
        await waiting.wait()
        release.set()
        for task in (runner, waiter):
            with pytest.raises(ConnectionError) as info:
                await task
            assert info.value is error
    assert waiter_calls == []
    assert await store.get("k") is None

    retry_calls: list[str] = []
    assert await store.get_or_set("k", constant("ok", retry_calls)) == ("ok", True)
    assert retry_calls == ["factory"]


async def test_a_cancelled_factory_lets_a_waiter_take_over() -> None:
    store = InMemoryStore()
    started = asyncio.Event()
    waiting = asyncio.Event()
    never = asyncio.Event()
    waiter_calls: list[str] = []

    async def stuck() -> str:
        started.set()
        await never.wait()
        return "unreachable"

    async def wait_for_it() -> tuple[Any, bool]:
        waiting.set()
        return await store.get_or_set("k", constant("taken over", waiter_calls))

    async with asyncio.timeout(DEADLINE):
        runner = asyncio.create_task(store.get_or_set("k", stuck))
        await started.wait()
        waiter = asyncio.create_task(wait_for_it())
        await waiting.wait()
        runner.cancel()
        assert await waiter == ("taken over", True)
    assert runner.cancelled()
    assert waiter_calls == ["factory"]
    assert await store.get("k") == "taken over"


async def test_a_cancelled_waiter_is_cancelled_and_the_factory_carries_on() -> None:
    store = InMemoryStore()
    started = asyncio.Event()
    waiting = asyncio.Event()
    release = asyncio.Event()

    async def slow() -> str:
        started.set()
        await release.wait()
        return "done"

    async def wait_for_it() -> tuple[Any, bool]:
        waiting.set()
        return await store.get_or_set("k", constant("never", []))

    async with asyncio.timeout(DEADLINE):
        runner = asyncio.create_task(store.get_or_set("k", slow))
        await started.wait()
        waiter = asyncio.create_task(wait_for_it())
        await waiting.wait()
        waiter.cancel()
        with pytest.raises(asyncio.CancelledError):
            await waiter
        release.set()
        assert await runner == ("done", True)


async def test_append_and_list_keep_order_per_log() -> None:
    store = InMemoryStore()
    assert await store.list("audit") == ()
    await store.append("audit", {"n": 1})
    await store.append("audit", {"n": 2})
    await store.append("other", "x")
    assert await store.list("audit") == ({"n": 1}, {"n": 2})
    assert await store.list("other") == ("x",)


async def test_get_or_set_counts_the_ttl_from_when_the_value_is_stored() -> None:
    """A factory slower than the ttl must not store a value that is already expired."""
    clock = FakeClock()
    store = InMemoryStore(clock=clock)

    async def slow() -> str:
        clock.now = 8.0  # the work took longer than the ttl
        return "sent"

    assert await store.get_or_set("k", slow, ttl=5) == ("sent", True)
    calls: list[str] = []
    assert await store.get_or_set("k", constant("again", calls), ttl=5) == ("sent", False)
    assert calls == []
    clock.now = 13.0
    assert await store.get("k") is None
