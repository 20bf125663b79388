"""Media values: images, audio and files a user gives, a tool returns or a model is shown.

They cross every seam as bytes plus a MIME type, never as inline text, or as a URL the
provider fetches itself (``Image.from_url``: no bytes held). A provider that accepts a
kind of media renders it natively; where media can only be text (a tool result on a
text-only API), a value is shown as its one-line description (``[image: image/png,
4,033 bytes]``), so a 300 KB picture never becomes 400,000 characters of base64 in a
prompt. A part a provider cannot take in a user message is refused before any request
(:class:`~agentkit.core.contracts.errors.UnsupportedMedia`).
"""

from __future__ import annotations

import mimetypes
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

__all__ = ["Audio", "File", "Image", "Media"]

# Types the standard table may lack or spell differently on some systems.
_EXTRA_TYPES = {".webp": "image/webp", ".md": "text/markdown", ".flac": "audio/flac",
                ".m4a": "audio/mp4", ".opus": "audio/ogg"}


def _check(kind: str, data: object, mime_type: object, url: object) -> None:
    if not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"{kind}.data must be bytes, got {type(data).__name__}")
    if not isinstance(mime_type, str) or "/" not in mime_type:
        raise ValueError(
            f"{kind}.mime_type must be a MIME type such as 'image/png', got {mime_type!r}"
        )
    if url is None:
        return
    if not isinstance(url, str) or urlsplit(url).scheme not in ("http", "https") or not (
        urlsplit(url).netloc
    ):
        raise ValueError(f"{kind}.url must be an http(s) URL, got {url!r}")
    if len(data):
        raise ValueError(
            f"{kind} holds either bytes or a URL, not both: got {len(data):,} bytes and "
            f"url={url!r}"
        )


def _guess(kind: str, where: str, given: str | None, default: str | None) -> str:
    """The MIME type ``given``, else the one ``where``'s extension names, else ``default``."""
    if given is not None:
        return given
    suffix = os.path.splitext(urlsplit(where).path if "://" in where else where)[1].lower()
    guessed = _EXTRA_TYPES.get(suffix) or mimetypes.types_map.get(suffix)
    if guessed is not None:
        return guessed
    if default is not None:
        return default
    raise ValueError(
        f"{kind}: cannot tell the media type of {where!r} from its extension; pass "
        f"mime_type=, e.g. {kind}.from_path(path, mime_type='image/png')"
    )


def _repr(media: Image | Audio | File) -> str:
    # The url only when there is one, so a value made from bytes reads as it always did.
    shown = [f"mime_type={media.mime_type!r}"]
    if isinstance(media, File):
        shown.append(f"name={media.name!r}")
    if media.url is not None:
        shown.append(f"url={media.url!r}")
    shown.append(f"kind={media.kind!r}")
    return f"{type(media).__name__}({', '.join(shown)})"


def _size(data: bytes, url: str | None) -> str:
    return url if url is not None else f"{len(data):,} bytes"


@dataclass(frozen=True, slots=True, repr=False)
class Image:
    """An image: raw bytes (not base64) and its MIME type, e.g. ``image/png``; or, made
    by :meth:`from_url`, a URL the provider fetches and no bytes."""

    data: bytes = field(default=b"", repr=False)
    """The image's bytes; empty for an image referenced by ``url``."""
    mime_type: str = "image/png"
    """Its MIME type."""
    url: str | None = field(default=None, kw_only=True)
    """Where the provider fetches it, for an image held by reference."""
    kind: Literal["image"] = field(default="image", init=False)

    def __post_init__(self) -> None:
        _check("Image", self.data, self.mime_type, self.url)
        object.__setattr__(self, "data", bytes(self.data))

    @classmethod
    def from_path(cls, path: str | os.PathLike[str], mime_type: str | None = None) -> Image:
        """The image in the file at ``path``; its type from the extension unless given."""
        return cls(Path(path).read_bytes(), _guess("Image", os.fspath(path), mime_type, None))

    @classmethod
    def from_url(cls, url: str, mime_type: str | None = None) -> Image:
        """An image the provider fetches from ``url``; its type from the extension unless
        given."""
        return cls(b"", _guess("Image", url, mime_type, None), url=url)

    __repr__ = _repr

    def describe(self) -> str:
        """``[image: image/png, 4,033 bytes]``: what a text-only reader is shown."""
        return f"[image: {self.mime_type}, {_size(self.data, self.url)}]"


@dataclass(frozen=True, slots=True, repr=False)
class Audio:
    """A sound clip: raw bytes and its MIME type, e.g. ``audio/wav``; or a URL."""

    data: bytes = field(default=b"", repr=False)
    """The clip's bytes; empty for a clip referenced by ``url``."""
    mime_type: str = "audio/wav"
    """Its MIME type."""
    url: str | None = field(default=None, kw_only=True)
    """Where the provider fetches it, for a clip held by reference."""
    kind: Literal["audio"] = field(default="audio", init=False)

    def __post_init__(self) -> None:
        _check("Audio", self.data, self.mime_type, self.url)
        object.__setattr__(self, "data", bytes(self.data))

    @classmethod
    def from_path(cls, path: str | os.PathLike[str], mime_type: str | None = None) -> Audio:
        """The clip in the file at ``path``; its type from the extension unless given."""
        return cls(Path(path).read_bytes(), _guess("Audio", os.fspath(path), mime_type, None))

    @classmethod
    def from_url(cls, url: str, mime_type: str | None = None) -> Audio:
        """A clip the provider fetches from ``url``."""
        return cls(b"", _guess("Audio", url, mime_type, None), url=url)

    __repr__ = _repr

    def describe(self) -> str:
        """``[audio: audio/wav, 12,000 bytes]``."""
        return f"[audio: {self.mime_type}, {_size(self.data, self.url)}]"


@dataclass(frozen=True, slots=True, repr=False)
class File:
    """A document or any other binary content: bytes, MIME type and an optional name or
    URI; or a URL. PDFs (``application/pdf``) and plain text (``text/plain``) are the
    documents providers read natively."""

    data: bytes = field(default=b"", repr=False)
    """The file's bytes; empty for a file referenced by ``url``."""
    mime_type: str = "application/octet-stream"
    """Its MIME type."""
    name: str | None = None
    """A file name or URI, shown to the model."""
    url: str | None = field(default=None, kw_only=True)
    """Where the provider fetches it, for a file held by reference."""
    kind: Literal["file"] = field(default="file", init=False)

    def __post_init__(self) -> None:
        _check("File", self.data, self.mime_type, self.url)
        object.__setattr__(self, "data", bytes(self.data))

    @classmethod
    def from_path(cls, path: str | os.PathLike[str], mime_type: str | None = None) -> File:
        """The file at ``path``, named by its file name; its type from the extension
        unless given (``application/octet-stream`` when the extension says nothing)."""
        where = os.fspath(path)
        return cls(Path(path).read_bytes(),
                   _guess("File", where, mime_type, "application/octet-stream"),
                   name=Path(where).name)

    @classmethod
    def from_url(cls, url: str, mime_type: str | None = None) -> File:
        """A file the provider fetches from ``url``, named by the URL's last segment."""
        name = Path(urlsplit(url).path).name or None
        return cls(b"", _guess("File", url, mime_type, "application/octet-stream"),
                   name=name, url=url)

    __repr__ = _repr

    def describe(self) -> str:
        """``[file report.pdf: application/pdf, 52,113 bytes]``."""
        label = f"file {self.name}" if self.name else "file"
        return f"[{label}: {self.mime_type}, {_size(self.data, self.url)}]"


Media = Image | Audio | File
"""Any media value."""
