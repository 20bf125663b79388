"""InMemoryStore: the process-local store, for tests and single-process runs."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from agentkit.core.contracts.errors import VersionConflict

__all__ = ["InMemoryStore"]


class InMemoryStore:
    """A dict with expiry, single-flight ``get_or_set`` and append-only logs.

    Values are kept by reference. Expired entries are dropped when next read.
    """

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        self._values: dict[str, tuple[Any, float | None]] = {}
        self._logs: dict[str, list[Any]] = {}
        self._inflight: dict[str, asyncio.Future[Any]] = {}
        self._versioned: dict[str, tuple[Any, int]] = {}
        self._clock = clock

    def _lookup(self, key: str) -> tuple[bool, Any]:
        entry = self._values.get(key)
        if entry is None:
            return False, None
        value, expires = entry
        if expires is not None and self._clock() >= expires:
            del self._values[key]
            return False, None
        return True, value

    @staticmethod
    def _check_ttl(ttl: float | None) -> None:
        if ttl is not None and ttl <= 0:
            raise ValueError(f"ttl must be a positive number of seconds, got {ttl!r}")

    def _expiry(self, ttl: float | None) -> float | None:
        self._check_ttl(ttl)
        return None if ttl is None else self._clock() + ttl

    async def get(self, key: str) -> Any | None:
        """The value under ``key``, or None when absent or expired."""
        return self._lookup(key)[1]

    async def set(self, key: str, value: Any, *, ttl: float | None = None) -> None:
        """Store ``value``; with ``ttl`` seconds it expires."""
        self._values[key] = (value, self._expiry(ttl))

    async def get_or_set(
        self,
        key: str,
        factory: Callable[[], Awaitable[Any]],
        *,
        ttl: float | None = None,
    ) -> tuple[Any, bool]:
        """Return ``(value, created)``; concurrent callers for one key share one ``factory()``.

        A factory that raises stores nothing: its concurrent waiters see the same
        exception, and the next caller runs the factory afresh.
        """
        while True:
            found, value = self._lookup(key)
            if found:
                return value, False
            pending = self._inflight.get(key)
            if pending is None:
                break
            try:
                return await asyncio.shield(pending), False
            except asyncio.CancelledError:
                # The caller running the factory was cancelled, not us: take over.
                task = asyncio.current_task()
                if pending.cancelled() and task is not None and not task.cancelling():
                    continue
                raise
        self._check_ttl(ttl)  # refuse a bad ttl before the factory acts
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            value = await factory()
        except Exception as error:
            future.set_exception(error)
            future.exception()  # retrieved: no "never retrieved" warning without waiters
            raise
        except BaseException:
            future.cancel()
            raise
        else:
            # The ttl runs from when the value is stored: timed from the claim, a factory
            # slower than its ttl would store a value already expired, and an idempotent
            # retry right after it would act a second time.
            self._values[key] = (value, None if ttl is None else self._clock() + ttl)
            future.set_result(value)
            return value, True
        finally:
            del self._inflight[key]

    async def delete(self, key: str) -> bool:
        """Remove ``key``; True when something was there."""
        found, _ = self._lookup(key)
        self._values.pop(key, None)
        return found

    async def append(self, log: str, value: Any) -> None:
        """Append ``value`` to the log named ``log``."""
        self._logs.setdefault(log, []).append(value)

    async def list(self, log: str) -> tuple[Any, ...]:
        """Every value appended to ``log``, oldest first."""
        return tuple(self._logs.get(log, ()))

    async def get_versioned(self, key: str) -> tuple[Any, int]:
        """``(value, version)`` under ``key``; ``(None, 0)`` when never written."""
        return self._versioned.get(key, (None, 0))

    async def set_versioned(self, key: str, value: Any, *, expected_version: int) -> int:
        """Write ``value`` if the version is still ``expected_version``; the new version."""
        _, version = self._versioned.get(key, (None, 0))
        if version != expected_version:
            raise VersionConflict(key, expected_version, version)
        self._versioned[key] = (value, version + 1)
        return version + 1
