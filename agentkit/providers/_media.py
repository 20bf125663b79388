"""Which attached media a provider can show the model as real images."""

from __future__ import annotations

from typing import Any

__all__ = ["NATIVE_IMAGE_TYPES", "native_image"]

NATIVE_IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""The image formats both the Messages API and Chat Completions accept inline."""


def native_image(media: Any) -> bool:
    """True for an image in a format the provider renders; every other attachment is
    left to the one-line description already in the message text."""
    return getattr(media, "kind", None) == "image" and media.mime_type in NATIVE_IMAGE_TYPES
