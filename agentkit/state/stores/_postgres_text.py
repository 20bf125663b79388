"""What PostgreSQL cannot take as it is, made storable: keyword connection strings for
asyncpg, and store keys for ``text`` primary keys.

asyncpg reads only URLs, while libpq (and our docs) also accept ``key=value`` strings,
so those are rewritten into a URL carrying every pair as a query parameter, which
asyncpg reads the way libpq reads the keywords.

A ``text`` column refuses NUL and lone surrogates, and a B-tree index refuses an entry
over 2,704 bytes; SQLite and the in-memory store take all three. A key that is plain
text of modest size is stored as it is (so rows stay readable and existing rows keep
their keys); any other key is stored as ``"\\x01sha256:"`` and the SHA-256 of its code
points. Plain keys never start with ``\\x01``, so the two forms cannot meet.
"""

from __future__ import annotations

import hashlib
import re
from urllib.parse import urlencode

__all__ = ["connection_url", "lock_id", "redact", "stored_key"]

_URL = re.compile(r"postgres(ql)?://", re.IGNORECASE)
_PAIR = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*('(?:[^'\\]|\\.)*'|[^\s']+|(?=\s|$))")
_QUOTED_ESCAPE = re.compile(r"\\(.)")
_MAX_PLAIN_BYTES = 1024
"""Keys up to this size are stored as they are; well under the 2,704-byte index limit,
leaving room for the other columns of a composite key."""
_HASHED = "\x01sha256:"


def connection_url(dsn: str) -> str:
    """``dsn`` as a URL asyncpg reads: a URL unchanged, a libpq keyword string
    (``host=db dbname=prod user=agents``) rewritten; ValueError when it is neither."""
    if not dsn.strip() or _URL.match(dsn.lstrip()):
        return dsn
    pairs: list[tuple[str, str]] = []
    at = 0
    while at < len(dsn):
        if dsn[at:].strip() == "":
            break
        match = _PAIR.match(dsn, at)
        if match is None:
            raise ValueError(
                "PostgresStore(dsn=...) is neither a postgresql:// URL nor a libpq keyword "
                f"string (key=value pairs, values with spaces in single quotes): {redact(dsn)!r}"
            )
        name, value = match.groups()
        if value.startswith("'"):
            value = _QUOTED_ESCAPE.sub(r"\1", value[1:-1])
        pairs.append((name, value))
        at = match.end()
    return "postgresql://?" + urlencode(pairs)


def stored_key(key: str) -> str:
    """The form of ``key`` a ``text`` primary key column holds (see the module doc)."""
    if "\x00" in key or key.startswith("\x01") or _plain_size(key) > _MAX_PLAIN_BYTES:
        return _HASHED + hashlib.sha256(_code_points(key)).hexdigest()
    return key


def _plain_size(key: str) -> int:
    try:
        return len(key.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate: never plain
        return _MAX_PLAIN_BYTES + 1


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
