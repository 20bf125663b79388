"""Content-addressed blobs: stored once under the hash of their bytes, read back only
when the bytes still match the key, on every store agentkit ships."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agentkit.core.contracts.state_errors import CheckpointCorrupt
from agentkit.state.blobs import BlobMissing, blob_key, get_blob, is_blob_key, put_blob
from agentkit.state.stores import InMemoryStore
from agentkit.state.stores.postgres import PostgresStore
from agentkit.state.stores.sqlite import SQLiteStore


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Any]:
    if request.param == "memory":
        yield InMemoryStore()
    elif request.param == "sqlite":
        sqlite = SQLiteStore(tmp_path / "blobs.db")
        yield sqlite
        sqlite.close()
    else:
        postgres = PostgresStore(request.getfixturevalue("postgres_dsn"),
                                 schema=request.getfixturevalue("postgres_schema"))
        yield postgres
        await postgres.close()


async def test_a_blob_is_stored_under_the_hash_of_its_bytes(store: Any) -> None:
    data = b"\x00\xffpage " * 200_000  # 1.2 MB, not UTF-8
    key = await put_blob(store, data)
    assert key == "blob:sha256:" + hashlib.sha256(data).hexdigest()
    assert key == blob_key(data)
    assert await get_blob(store, key) == data
    assert await put_blob(store, bytearray(data)) == key  # same bytes, same key
    assert await get_blob(store, key) == data


async def test_a_missing_blob_is_a_typed_error_naming_the_key(store: Any) -> None:
    key = blob_key(b"never written")
    with pytest.raises(BlobMissing) as caught:
        await get_blob(store, key, hint="workers and clients must share one store")
    assert caught.value.key == key
    assert str(caught.value) == (
        f"no blob is stored under {key!r} in this store; "
        "workers and clients must share one store"
    )


async def test_bytes_that_do_not_match_their_key_are_refused(store: Any) -> None:
    key = blob_key(b"the original")
    await store.set(key, b"something else")
    with pytest.raises(CheckpointCorrupt) as caught:
        await get_blob(store, key)
    assert str(caught.value) == (
        f"stored value under key {key!r} is corrupt: the stored value is not the bytes "
        "this key names (its SHA-256 differs). It was left as it is; delete the key (or "
        "restore it from a backup) to start over"
    )
    assert await store.get(key) == b"something else"


async def test_only_bytes_and_blob_keys_are_accepted() -> None:
    assert is_blob_key(blob_key(b"x"))
    assert not is_blob_key("blob:sha256:" + "A" * 64)
    assert not is_blob_key("run:1")
    with pytest.raises(ValueError) as caught:
        await get_blob(None, "run:1")  # type: ignore[arg-type]
    assert str(caught.value) == (
        "'run:1' is not a blob key; blob keys are 'blob:sha256:' followed by 64 "
        "lowercase hex digits"
    )
    with pytest.raises(TypeError) as typed:
        await put_blob(None, "text")  # type: ignore[arg-type]
    assert str(typed.value) == "a blob is bytes, got a str"
