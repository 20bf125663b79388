"""SQLiteWorker: one thread and one connection per SQLite file user, off the event loop.

sqlite3 connections belong to the thread that made them, and every call blocks; so each
SQLite-backed object owns one worker thread holding one connection (WAL mode, a busy
timeout so processes wait for each other's locks), and awaits its calls from there.
"""

from __future__ import annotations

import asyncio
import random
import sqlite3
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

__all__ = ["SQLiteWorker"]

_T = TypeVar("_T")

_LOCKED = (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)


class SQLiteWorker:
    """Runs functions of a connection to ``path`` on a dedicated thread.

    ``schema`` is run once when the connection opens (at construction, so a bad path
    fails there rather than mid-run), then ``upgrade(connection)``, which brings a file
    an older release made up to date. ``owner`` names the user in error messages.
    """

    def __init__(
        self, path: str, *, schema: str, owner: str, busy_timeout: float = 30.0,
        upgrade: Callable[[sqlite3.Connection], None] | None = None,
    ) -> None:
        self.path = path
        self._schema = schema
        self._upgrade = upgrade
        self._owner = owner
        self._busy_timeout = busy_timeout
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentkit-sqlite")
        self._local = threading.local()
        self._closed = False
        self._executor.submit(self._connection).result()

    def _connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.path, timeout=self._busy_timeout, isolation_level=None)
            try:
                self._set_up(conn)
            except BaseException:
                conn.close()
                raise
            self._local.conn = conn
        return conn

    def _set_up(self, conn: sqlite3.Connection) -> None:
        """WAL mode and the schema, retried while another process holds the lock.

        Switching a new file to WAL needs an exclusive lock, and SQLite reports a
        competing switch as "database is locked" at once, without waiting on the busy
        timeout; so several processes opening one new file together retry here, until
        the busy timeout runs out.
        """
        deadline = time.monotonic() + self._busy_timeout
        pause = 0.001
        while True:
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.executescript(self._schema)
                if self._upgrade is not None:
                    self._upgrade(conn)
                return
            except sqlite3.OperationalError as exc:
                code = getattr(exc, "sqlite_errorcode", sqlite3.SQLITE_BUSY) & 0xFF
                if code not in _LOCKED or time.monotonic() + pause > deadline:
                    raise
            time.sleep(pause * (0.5 + random.random()))
            pause = min(pause * 2, 0.1)

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError(f"{self._owner}({self.path!r}) is closed")

    async def run(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        """``fn(connection)`` on the worker thread (autocommit: each statement commits)."""
        self._check_open()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, lambda: fn(self._connection()))

    async def transaction(self, fn: Callable[[sqlite3.Connection], _T]) -> _T:
        """``fn(connection)`` inside ``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back if it
        raises: all-or-nothing, and no other process writes in between."""
        self._check_open()

        def run() -> _T:
            conn = self._connection()
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = fn(conn)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            return result

        return await asyncio.get_running_loop().run_in_executor(self._executor, run)

    def close(self) -> None:
        """Close the connection and stop the thread; later calls raise a clear error."""
        if self._closed:
            return
        self._closed = True

        def shut() -> None:
            conn = getattr(self._local, "conn", None)
            if conn is not None:
                conn.close()
                self._local.conn = None

        self._executor.submit(shut).result()
        self._executor.shutdown(wait=True)
