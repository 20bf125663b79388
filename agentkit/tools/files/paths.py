"""Memory paths: the one place a model-supplied path is judged before anything touches it.

A path is accepted only when it is ``/memories`` or starts with ``/memories/`` and every
name after that is a plain name. Paths are taken literally — nothing is decoded — so
anything that *another* layer might decode into a separator or a ``..`` is refused
rather than trusted:

- ``..`` and ``.`` components, and names starting with ``.`` (reserved: the disk backend
  keeps its temporary files under such names);
- backslashes, NUL and every other control character;
- percent escapes such as ``%2e%2e%2f``;
- Unicode look-alikes of ``.``, ``/``, ``\\`` and ``%`` (``．``, ``／``, ``∕``, ``‥`` ...),
  invisible formatting characters (bidi overrides, zero-width joiners) and lone
  surrogates (``\\udc2e`` would be written to disk as the byte ``.``);
- names with leading or trailing whitespace, names over 255 bytes, paths deeper than
  the depth limit (:data:`MAX_DEPTH` unless the caller sets another).

Accepted names are NFC-normalised, so the same text typed two ways is one file.
Symbolic and hard links are a matter for the disk backend (``LocalFiles``), which
refuses them as it walks.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from agentkit.tools.files.errors import PathRefused

__all__ = ["DEPTH_CEILING", "MAX_DEPTH", "ROOT", "MemoryPath", "check_name", "parse_path"]

MAX_DEPTH = 16
"""The most names a path may have below ``/memories``, unless configured otherwise."""

DEPTH_CEILING = 64
"""The highest depth limit that may be configured."""

_MAX_NAME_BYTES = 255
_PREFIX = "/memories"
_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_DANGEROUS_ASCII = frozenset("./\\%")
# Look-alikes of '/' and '\' that NFKC leaves alone, so the generic check below misses them.
_SLASH_LOOKALIKES = frozenset("\u2215\u2044\u29f8\u29f9\u2216\u29f5\u29f6\u29f7\u2afd\u2cc6")
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


@dataclass(frozen=True, slots=True, order=True)
class MemoryPath:
    """A checked path inside ``/memories``: the names below the root, in order."""

    parts: tuple[str, ...] = ()
    """The names after ``/memories``; empty for the root itself."""

    def __str__(self) -> str:
        return _PREFIX + "".join("/" + part for part in self.parts)

    @property
    def is_root(self) -> bool:
        """True for ``/memories`` itself."""
        return not self.parts

    @property
    def name(self) -> str:
        """The last name (``""`` for the root)."""
        return self.parts[-1] if self.parts else ""

    @property
    def parent(self) -> MemoryPath:
        """The directory holding this path (the root is its own parent)."""
        return MemoryPath(self.parts[:-1])

    @property
    def key(self) -> str:
        """The path relative to the root, ``/``-joined: how backends store it."""
        return "/".join(self.parts)

    def child(self, name: str) -> MemoryPath:
        """The path of ``name`` inside this directory; ``name`` is checked like any other."""
        return MemoryPath((*self.parts, check_name(name, f"{self}/{name}")))

    def is_within(self, other: MemoryPath) -> bool:
        """True when this path is ``other`` or lies below it."""
        return self.parts[: len(other.parts)] == other.parts

    def __repr__(self) -> str:
        return f"MemoryPath({str(self)!r})"


ROOT = MemoryPath()
"""``/memories``."""


def parse_path(raw: str, *, max_depth: int = MAX_DEPTH) -> MemoryPath:
    """The :class:`MemoryPath` ``raw`` names; :class:`PathRefused` when it is not a plain
    path inside ``/memories`` at most ``max_depth`` names deep. A trailing ``/`` and
    repeated ``/`` are tolerated."""
    _check_characters(raw)
    if raw != _PREFIX and not raw.startswith(_PREFIX + "/"):
        raise PathRefused(
            raw, "paths must start with /memories/ (or be /memories itself), "
            "e.g. /memories/notes.md"
        )
    names = [name for name in raw[len(_PREFIX):].split("/") if name]
    if len(names) > max_depth:
        raise PathRefused(raw, f"it is {len(names)} levels deep, over the limit of {max_depth}")
    return MemoryPath(tuple(check_name(name, raw) for name in names))


def check_name(name: str, raw: str) -> str:
    """``name`` NFC-normalised, when it is a plain file or directory name; else
    :class:`PathRefused` for ``raw``, the path it came from."""
    _check_characters(name, raw)
    name = unicodedata.normalize("NFC", name)
    if name in (".", ".."):
        if name == "..":
            raise PathRefused(raw, "'..' is not allowed: a path may not climb out of a directory")
        raise PathRefused(raw, "'.' components are not allowed; write the path without them")
    if "/" in name:
        raise PathRefused(raw, f"the name {name!r} contains '/'")
    if name.startswith("."):
        raise PathRefused(raw, f"names starting with '.' are reserved ({name!r})")
    if name != name.strip():
        raise PathRefused(raw, f"the name {name!r} starts or ends with whitespace")
    size = len(name.encode("utf-8"))
    if size > _MAX_NAME_BYTES:
        raise PathRefused(
            raw, f"a name is {size} bytes long, over the limit of {_MAX_NAME_BYTES}"
        )
    return name


def _check_characters(text: str, raw: str | None = None) -> None:
    raw = text if raw is None else raw
    if "\\" in text:
        raise PathRefused(raw, "backslashes are not path separators here; use '/'")
    escape = _PERCENT_ESCAPE.search(text)
    if escape:
        raise PathRefused(
            raw, f"it contains the percent escape {escape.group()!r}; paths are taken "
            "literally, so write the character itself"
        )
    for char in text:
        if char.isascii() and char.isprintable():
            continue
        category = unicodedata.category(char)
        if category in _INVISIBLE_CATEGORIES:
            raise PathRefused(
                raw, f"it contains {_describe(char)}, a control or invisible character"
            )
        if char in _SLASH_LOOKALIKES or _DANGEROUS_ASCII & set(
            unicodedata.normalize("NFKC", char)
        ):
            raise PathRefused(
                raw, f"it contains {_describe(char)}, which can stand in for '.', '/', '\\' "
                "or '%'; use plain ASCII punctuation"
            )


def _describe(char: str) -> str:
    name = unicodedata.name(char, "")
    code = f"U+{ord(char):04X}"
    return f"{code} ({name})" if name else code
