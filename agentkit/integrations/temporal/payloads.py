"""Large payloads stored by key: a Temporal payload codec over agentkit's blobs.

Temporal refuses a payload over 2 MiB (and a workflow task whose commands add up to
4 MiB), and a refused workflow task is retried for ever, so a run whose transcript
outgrows that limit would never answer. Every payload that crosses Temporal (activity
inputs and results, workflow inputs and results, updates, queries, failure details) goes
through this codec: one of at most :data:`INLINE_BYTES` stays inline, untouched (no
store round trip for ordinary values); a larger one is written to the store as a blob
(:mod:`agentkit.state.blobs`) and only its key crosses Temporal.

The codec runs in the worker and the client, outside workflow code, so the workflow
still sees whole values and stays deterministic: a blob's key is the hash of its bytes,
so a replayed history names the same keys, and a retried write writes the same blob.
Every worker of a task queue and every client of it must therefore share one durable
store (PostgreSQL across machines, SQLite on one machine).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from temporalio.api.common.v1 import Payload
from temporalio.client import Client
from temporalio.converter import DataConverter, PayloadCodec

from agentkit.core.contracts.ports import Store
from agentkit.state.blobs import BlobMissing, get_blob, put_blob

__all__ = ["INLINE_BYTES", "data_converter", "with_stored_payloads"]

INLINE_BYTES = 128 * 1024
"""Payloads up to this many bytes stay inline; larger ones are stored by key. Well under
Temporal's 2 MiB per payload, so that the parallel tool calls of one step (each
scheduled with its own payload) fit in one 4 MiB workflow task too."""

_ENCODING = b"agentkit/blob"
_KEY = "agentkit-blob"
_NO_STORE = (
    "this client has no store to read it from: give TemporalAgents(..., store=...) the "
    "store the workers use"
)


class _StoredPayloads(PayloadCodec):
    """Stores payloads over :data:`INLINE_BYTES` as blobs, after ``inner`` (a codec the
    client already had, e.g. encryption) encoded them, so blobs hold what it made."""

    def __init__(self, store: Store | None, inner: PayloadCodec | None) -> None:
        self.store = store
        self.inner = inner

    async def encode(self, payloads: Sequence[Payload]) -> list[Payload]:
        encoded = list(payloads) if self.inner is None else await self.inner.encode(payloads)
        if self.store is None:
            return encoded
        out: list[Payload] = []
        for payload in encoded:
            if payload.ByteSize() <= INLINE_BYTES:
                out.append(payload)
                continue
            # Deterministic serialization: the same payload always gets the same key.
            data = payload.SerializeToString(deterministic=True)
            key = await put_blob(self.store, data)
            out.append(Payload(metadata={"encoding": _ENCODING, _KEY: key.encode()}))
        return out

    async def decode(self, payloads: Sequence[Payload]) -> list[Payload]:
        decoded: list[Payload] = []
        for payload in payloads:
            if payload.metadata.get("encoding") != _ENCODING:
                decoded.append(payload)
                continue
            # A reference without a key is refused by get_blob as "not a blob key".
            key = payload.metadata.get(_KEY, b"").decode("ascii", "replace")
            if self.store is None:
                raise BlobMissing(key, _NO_STORE)
            data = await get_blob(
                self.store, key,
                hint="every worker and client of a task queue must share one store",
            )
            decoded.append(Payload.FromString(data))
        return decoded if self.inner is None else await self.inner.decode(decoded)


def data_converter(store: Store | None, *, base: DataConverter | None = None) -> DataConverter:
    """``base`` (Temporal's default) with large payloads stored by key in ``store``:
    for a ``Replayer`` of histories that hold stored payloads. With ``store=None``
    nothing is stored, and a stored payload is refused with :class:`BlobMissing`."""
    base = base if base is not None else DataConverter.default
    inner = base.payload_codec
    if isinstance(inner, _StoredPayloads):
        inner = inner.inner
    return dataclasses.replace(base, payload_codec=_StoredPayloads(store, inner))


def with_stored_payloads(client: Client, store: Store | None) -> Client:
    """``client`` (same connection and namespace) with large payloads stored by key in
    ``store``."""
    config = client.config()
    config["data_converter"] = data_converter(store, base=config["data_converter"])
    return Client(**config)
