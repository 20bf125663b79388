"""Media on the wire: which parts a provider shows natively, and the checks made before
a request is sent (the type, the limits a provider documents), each failing as
:class:`UnsupportedMedia` naming the provider, the part and what is accepted."""

from __future__ import annotations

import base64
from typing import Any

from agentkit.core.contracts.errors import UnsupportedMedia
from agentkit.core.contracts.media import Media

__all__ = [
    "NATIVE_IMAGE_TYPES",
    "PDF",
    "PLAIN_TEXT",
    "base64_data",
    "check_size",
    "data_url",
    "native_image",
    "refuse",
]

NATIVE_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""The image formats both the Messages API and Chat Completions accept inline."""

PDF = "application/pdf"
PLAIN_TEXT = "text/plain"

MB = 1024 * 1024


def native_image(media: Any) -> bool:
    """True for an image in a format the provider renders; every other attachment of a
    tool result is left to the one-line description already in the message text."""
    return getattr(media, "kind", None) == "image" and media.mime_type in NATIVE_IMAGE_TYPES


def base64_data(media: Media) -> str:
    """The part's bytes as base64 text."""
    return base64.b64encode(media.data).decode("ascii")


def data_url(media: Media) -> str:
    """The part as a ``data:`` URL, or its own URL when it is held by reference."""
    return media.url or f"data:{media.mime_type};base64,{base64_data(media)}"


def refuse(
    provider: str, media: Media, accepted: str, where: str, *, limit: str | None = None
) -> UnsupportedMedia:
    """The error for ``media`` at ``where`` (e.g. ``messages[0] (user)``)."""
    how = "by URL" if media.url is not None else f"as {media.kind} bytes"
    return UnsupportedMedia(provider, f"{media.mime_type} ({how})", accepted, where=where,
                            limit=limit)


def check_size(
    provider: str, media: Media, most: int, what: str, accepted: str, where: str
) -> None:
    """Refuse ``media`` when its bytes pass ``most``; ``what`` names the limit's rule
    (``"the Messages API takes images of at most 5 MB"``)."""
    if len(media.data) > most:
        raise refuse(provider, media, accepted, where, limit=(
            f"{what} ({most:,} bytes); this one is {len(media.data):,} bytes"
        ))
