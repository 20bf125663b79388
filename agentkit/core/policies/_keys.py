"""Stable keys for tool calls: the same call, in any key order, hashes the same."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from enum import Enum
from typing import Any


def _json_default(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    if isinstance(value, tuple):
        return list(value)
    return repr(value)


# Built once: json.dumps with these options would build an encoder at every call, and
# every side-effecting call hashes its arguments and its result.
_canonical = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), default=_json_default, ensure_ascii=False
).encode


def hash_arguments(arguments: Mapping[str, Any]) -> str:
    """A SHA-256 hex digest of the arguments' canonical JSON."""
    return hashlib.sha256(_canonical(arguments).encode("utf-8")).hexdigest()


def hash_value(value: Any) -> str:
    """A SHA-256 hex digest of any value: its canonical JSON when it has one, else repr."""
    try:
        text = _canonical(value)
    except (TypeError, ValueError):
        text = repr(value)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
