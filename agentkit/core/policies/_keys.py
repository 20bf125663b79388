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


def hash_arguments(arguments: Mapping[str, Any]) -> str:
    """A SHA-256 hex digest of the arguments' canonical JSON."""
    text = json.dumps(
        arguments, sort_keys=True, separators=(",", ":"), default=_json_default, ensure_ascii=False
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def hash_value(value: Any) -> str:
    """A SHA-256 hex digest of any value: its canonical JSON when it has one, else repr."""
    try:
        text = json.dumps(
            value, sort_keys=True, separators=(",", ":"), default=_json_default, ensure_ascii=False
        )
    except (TypeError, ValueError):
        text = repr(value)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
