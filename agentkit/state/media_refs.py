"""Media in stored messages by reference: the bytes once, as a content-addressed blob.

A checkpoint is rewritten at every step, and a session keeps its turns, so an image or
a PDF written inline would be stored again in every checkpoint that carries it (and
base64 grows it by a third). Before a checkpoint or a session row is written, each
:class:`~agentkit.core.contracts.media.Image`, ``Audio`` or ``File`` holding bytes in
its messages is put in the same store as a blob (:mod:`agentkit.state.blobs`, keyed by
the SHA-256 of the bytes, so the same bytes are one blob however many times they are
written) and the message holds a :class:`StoredMedia` naming it. Reading puts the bytes
back, so code above the store only ever sees whole media. Media by URL hold no bytes and
stay as they are; a checkpoint written before this holds its bytes inline and reads as
it always did.

Blobs are not deleted with the checkpoint or session that refers to them: another run
may refer to the same bytes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, cast

from agentkit.core.contracts.media import Audio, File, Image, Media
from agentkit.core.contracts.ports import Store
from agentkit.core.contracts.types import Message, media_in_messages
from agentkit.state.blobs import get_blob, put_blob

__all__ = ["StoredMedia", "by_reference", "by_value", "holds_media"]


@dataclass(frozen=True, slots=True)
class StoredMedia:
    """How a message in a store holds media with bytes: the blob key of the bytes and
    the media value without them. Never seen above the store."""

    blob: str
    """The key of the bytes in the same store (``blob:sha256:<hex>``)."""
    media: Media
    """The media value with its ``data`` empty (type, name and the rest kept)."""


async def by_reference(store: Store, value: Any) -> Any:
    """``value`` with the bytes of every media in its messages put in ``store`` as blobs
    and referred to; ``value`` itself when it holds none."""

    async def stored(media: Media) -> Media | StoredMedia:
        if isinstance(media, Image | Audio | File) and media.data:
            key = await put_blob(store, media.data)
            return StoredMedia(key, dataclasses.replace(media, data=b""))
        return media

    if not holds_media(value):
        return value
    return await _mapped(value, stored)


async def by_value(store: Store, value: Any) -> Any:
    """``value`` with every :class:`StoredMedia` in its messages read back from
    ``store`` into whole media; raises :class:`~agentkit.state.blobs.BlobMissing` when a
    blob is not there."""

    async def loaded(media: Any) -> Any:
        if isinstance(media, StoredMedia):
            data = await get_blob(store, media.blob, hint="the message that refers to it "
                                  "was stored in this store, with its media")
            return dataclasses.replace(media.media, data=data)
        return media

    if not holds_media(value):
        return value
    return await _mapped(value, loaded)


def holds_media(value: Any) -> bool:
    """Whether any message in ``value`` has attachments: :func:`by_reference` and
    :func:`by_value` give such a value back as it is. The common case is told apart at
    no cost while the process has never built a message with media, and otherwise by a
    plain scan, so a caller may ask before it starts a coroutine to map nothing."""
    return media_in_messages() and _holds_media(value)


_FIELDS: dict[type, tuple[str, ...]] = {}
"""Per dataclass type, the names of its init fields (read once, not at every save)."""


def _holds_media(value: Any) -> bool:
    """Whether any message in ``value`` (as :func:`_mapped` walks it) has attachments."""
    if isinstance(value, Message):
        return bool(value.attachments)
    if isinstance(value, tuple | list):
        for item in value:
            if isinstance(item, Message):
                if item.attachments:
                    return True
            elif (isinstance(item, tuple | list) or dataclasses.is_dataclass(item)) and (
                _holds_media(item)
            ):
                return True
        return False
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = _FIELDS.get(type(value))
        if names is None:
            names = _FIELDS[type(value)] = tuple(
                f.name for f in dataclasses.fields(value) if f.init
            )
        for name in names:
            item = getattr(value, name)
            if isinstance(item, Message | tuple | list) and _holds_media(item):
                return True
    return False


async def _mapped(value: Any, change: Any) -> Any:
    """``value`` with ``change`` applied to each attachment of each message in it: a
    message, a tuple or list of values, or a dataclass with such fields. New values
    only where something changed, so a state without media is returned as it is."""
    if isinstance(value, Message):
        if not value.attachments:
            return value
        attachments = tuple([await change(m) for m in value.attachments])
        if all(a is b for a, b in zip(attachments, value.attachments, strict=True)):
            return value
        return dataclasses.replace(value, attachments=cast(tuple[Media, ...], attachments))
    if isinstance(value, tuple | list):
        items = [await _mapped(item, change) for item in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return type(value)(items)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changed = {}
        for field in dataclasses.fields(value):
            if not field.init:
                continue
            item = getattr(value, field.name)
            if isinstance(item, Message | tuple | list):
                new = await _mapped(item, change)
                if new is not item:
                    changed[field.name] = new
        return dataclasses.replace(value, **changed) if changed else value
    return value
