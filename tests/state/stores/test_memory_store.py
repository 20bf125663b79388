"""InMemoryStore: expiry, single-flight get_or_set that never stores a failure, logs."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from agentkit.core.contracts.state_errors import NotStorable
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


async def test_plain_values_are_kept_as_they_are_and_everything_else_through_the_codec() -> None:
    """A string, a bool, None and a machine-sized int skip the codec (every store keeps
    them, and nobody can change them); a list still comes back as a copy, a huge int
    and a function are still refused as a durable store would refuse them."""
    store = InMemoryStore()
    text = "".join(["refunded ", "A-1"])  # a new object, not an interned constant
    for key, value in (("s", text), ("b", True), ("n", None), ("i", 2**62), ("f", 1.5)):
        await store.set(key, value)
        assert await store.get(key) == value
    assert await store.get("s") is text
    listed = [1, {"a": (2, 3)}]
    await store.set("l", listed)
    read = await store.get("l")
    assert (read, read is listed) == ([1, {"a": (2, 3)}], False)
    value, created = await store.get_or_set("g", _answer("done"))
    assert (value, created, await store.get("g")) == ("done", True, "done")
    await store.append("log", "one")
    await store.append("log", 2)
    await store.append("log", [3])
    assert await store.list("log") == ("one", 2, [3])
    with pytest.raises(NotStorable) as info:
        await store.set("fn", len)
    assert str(info.value) == (
        "cannot store $: type builtin_function_or_method is not storable. Stores keep JSON "
        "data: None, bool, int, float, str, bytes, bytearray, list, tuple, dict, set, "
        "frozenset, datetime, date, time, timedelta, Decimal, UUID and agentkit's own values "
        "(Message, ToolCall, Usage, media, ...). Return plain data from the tool, or register "
        "the type with agentkit.state.codec.register(...)"
    )
    await store.set("big", 10**30)
    assert await store.get("big") == 10**30


def _answer(value: object) -> Callable[[], Awaitable[object]]:
    async def factory() -> object:
        return value

    return factory
