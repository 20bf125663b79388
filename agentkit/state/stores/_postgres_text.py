"""Connection strings and lock ids of a PostgreSQL store."""

from __future__ import annotations

import hashlib
import re

__all__ = ["lock_id", "redact"]


def _code_points(text: str) -> bytes:
    # surrogatepass: every Python string, lone surrogates included, has one encoding.
    return text.encode("utf-8", "surrogatepass")


def lock_id(*parts: str) -> int:
    """A 64-bit advisory-lock id for ``parts`` (signed, as PostgreSQL wants it)."""
    digest = hashlib.blake2b(_code_points("\0".join(parts)), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def redact(dsn: str) -> str:
    """``dsn`` without its password, for messages and reprs."""
    redacted = re.sub(r"(://[^:/@]*):[^@/]*@", r"\1:***@", dsn)
    return re.sub(r"(password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+)", r"\1***", redacted)
