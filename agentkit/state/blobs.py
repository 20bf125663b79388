"""Content-addressed blobs in a :class:`~agentkit.core.contracts.ports.Store`.

A blob is stored once under the hash of its bytes (``blob:sha256:<hex>``) and passed
around by that key: the same bytes always get the same key, so writing a blob twice is
harmless, a key can be computed without I/O, and code that must be deterministic (a
Temporal workflow) can hold keys while other code does the reading and writing. A blob
read back is checked against its key, so a tampered or truncated row is refused rather
than returned. Large payloads on Temporal are stored this way; media will be too.

Blobs never expire unless ``ttl=`` is given: a store that several processes share
(SQLite on one machine, PostgreSQL across machines) is what makes a key written by one
process readable by another.
"""

from __future__ import annotations

import hashlib

from agentkit.core.contracts.errors import AgentkitError
from agentkit.core.contracts.ports import Store
from agentkit.core.contracts.state_errors import CheckpointCorrupt

__all__ = ["BLOB_PREFIX", "BlobMissing", "blob_key", "get_blob", "is_blob_key", "put_blob"]

BLOB_PREFIX = "blob:sha256:"
"""What every blob key starts with; the rest is the SHA-256 of the bytes, in hex."""


class BlobMissing(AgentkitError, LookupError):
    """No blob is stored under a key: it was never written to this store, expired, or
    was deleted. ``key`` is the blob key."""

    def __init__(self, key: str, hint: str = "") -> None:
        self.key = key
        self.hint = hint
        message = f"no blob is stored under {key!r} in this store"
        super().__init__(f"{message}; {hint}" if hint else message)


def blob_key(data: bytes) -> str:
    """The key ``data`` is stored under (no I/O)."""
    return BLOB_PREFIX + hashlib.sha256(data).hexdigest()


def is_blob_key(key: object) -> bool:
    """Whether ``key`` has the form of a blob key."""
    if not isinstance(key, str) or not key.startswith(BLOB_PREFIX):
        return False
    digest = key[len(BLOB_PREFIX):]
    return len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)


async def put_blob(store: Store, data: bytes, *, ttl: float | None = None) -> str:
    """Store ``data`` under its content key and return the key."""
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"a blob is bytes, got a {type(data).__name__}")
    data = bytes(data)
    key = blob_key(data)
    await store.set(key, data, ttl=ttl)
    return key


async def get_blob(store: Store, key: str, *, hint: str = "") -> bytes:
    """The bytes stored under blob ``key``.

    Raises ``ValueError`` for a string that is not a blob key, :class:`BlobMissing`
    (with ``hint`` appended, e.g. which store should hold it) when nothing is stored
    there, and :class:`CheckpointCorrupt` when what is stored is not bytes whose hash is
    the key.
    """
    if not is_blob_key(key):
        raise ValueError(f"{key!r} is not a blob key; blob keys are {BLOB_PREFIX!r} "
                         "followed by 64 lowercase hex digits")
    data = await store.get(key)
    if data is None:
        raise BlobMissing(key, hint)
    if not isinstance(data, bytes) or blob_key(data) != key:
        raise CheckpointCorrupt(key, "the stored value is not the bytes this key names "
                                     "(its SHA-256 differs)")
    return data
