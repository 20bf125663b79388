"""Media values: images, audio and files a tool returns or a model is shown.

They cross every seam as bytes plus a MIME type, never as inline text. A provider that
accepts media in tool results renders them natively; everywhere else a value is shown as
its one-line description (``[image: image/png, 4,033 bytes]``), so a 300 KB picture never
becomes 400,000 characters of base64 in a prompt.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Audio", "File", "Image", "Media"]


def _check(kind: str, data: object, mime_type: object) -> None:
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"{kind}.data must be bytes, got {type(data).__name__}")
    if not isinstance(mime_type, str) or "/" not in mime_type:
        raise ValueError(
            f"{kind}.mime_type must be a MIME type such as 'image/png', got {mime_type!r}"
        )


@dataclass(frozen=True, slots=True)
class Image:
    """An image: raw bytes (not base64) and its MIME type, e.g. ``image/png``."""

    data: bytes = field(repr=False)
    mime_type: str = "image/png"
    kind: Literal["image"] = field(default="image", init=False)

    def __post_init__(self) -> None:
        _check("Image", self.data, self.mime_type)
        object.__setattr__(self, "data", bytes(self.data))

    def describe(self) -> str:
        """``[image: image/png, 4,033 bytes]``: what a text-only reader is shown."""
        return f"[image: {self.mime_type}, {len(self.data):,} bytes]"


@dataclass(frozen=True, slots=True)
class Audio:
    """A sound clip: raw bytes and its MIME type, e.g. ``audio/wav``."""

    data: bytes = field(repr=False)
    mime_type: str = "audio/wav"
    kind: Literal["audio"] = field(default="audio", init=False)

    def __post_init__(self) -> None:
        _check("Audio", self.data, self.mime_type)
        object.__setattr__(self, "data", bytes(self.data))

    def describe(self) -> str:
        """``[audio: audio/wav, 12,000 bytes]``."""
        return f"[audio: {self.mime_type}, {len(self.data):,} bytes]"


@dataclass(frozen=True, slots=True)
class File:
    """Any other binary content: bytes, MIME type and an optional name or URI."""

    data: bytes = field(repr=False)
    mime_type: str = "application/octet-stream"
    name: str | None = None
    kind: Literal["file"] = field(default="file", init=False)

    def __post_init__(self) -> None:
        _check("File", self.data, self.mime_type)
        object.__setattr__(self, "data", bytes(self.data))

    def describe(self) -> str:
        """``[file report.pdf: application/pdf, 52,113 bytes]``."""
        label = f"file {self.name}" if self.name else "file"
        return f"[{label}: {self.mime_type}, {len(self.data):,} bytes]"


Media = Image | Audio | File
"""Any media value."""
