"""The write lock of a note tree on disk: ``flock`` on the hidden file ``.lock`` in it.

An ``flock`` belongs to an open file, not to a process, so each holder opens the lock
file anew: two holders in one process exclude each other just as two processes do, and
the kernel releases the lock of a holder that dies. Waiting for it blocks a thread, so
the coroutines of one event loop first queue on an :class:`asyncio.Lock` per directory:
at most one of them waits in a thread. Otherwise the waiters could fill the default
thread pool and starve the holder, which needs a thread to write.
"""

from __future__ import annotations

import asyncio
import errno
import fcntl
import os
import stat
import threading
import weakref
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from agentkit.tools.files.errors import PathRefused

__all__ = ["LOCK_NAME", "write_lock"]

LOCK_NAME = ".lock"
"""The lock file's name in the memory directory (hidden from the model)."""

_LOCK_FLAGS = os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC

_LOOP_LOCKS: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[int, int], asyncio.Lock]
] = weakref.WeakKeyDictionary()
_LOOP_LOCKS_GUARD = threading.Lock()


def _loop_lock(key: tuple[int, int]) -> asyncio.Lock:
    loop = asyncio.get_running_loop()
    with _LOOP_LOCKS_GUARD:
        locks = _LOOP_LOCKS.setdefault(loop, {})
        lock = locks.get(key)
        if lock is None:
            lock = locks[key] = asyncio.Lock()
        return lock


def _refused() -> PathRefused:
    return PathRefused(f"/memories/{LOCK_NAME}", "the lock file is not a regular file")


def _take(open_root: Callable[[], int]) -> int:
    """Block until this open file holds the flock; its descriptor, which releases the
    lock when closed. A link, FIFO or device planted as ``.lock`` is refused, not used."""
    root = open_root()
    try:
        fd = os.open(LOCK_NAME, _LOCK_FLAGS, 0o600, dir_fd=root)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO):
            raise _refused() from None
        raise
    finally:
        os.close(root)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _refused()
        fcntl.flock(fd, fcntl.LOCK_EX)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _unlock_late(locking: asyncio.Future[int]) -> None:
    """Release a flock whose waiter was cancelled before the lock came."""
    if not locking.cancelled() and locking.exception() is None:
        os.close(locking.result())


@asynccontextmanager
async def write_lock(open_root: Callable[[], int], key: tuple[int, int]) -> AsyncIterator[None]:
    """Hold the flock of the directory ``open_root()`` opens (``key``: its device and
    inode) for the block."""
    async with _loop_lock(key):
        locking = asyncio.get_running_loop().run_in_executor(None, _take, open_root)
        try:
            fd = await asyncio.shield(locking)
        except asyncio.CancelledError:
            locking.add_done_callback(_unlock_late)
            raise
        try:
            yield
        finally:
            os.close(fd)
