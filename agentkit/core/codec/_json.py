"""The store format's JSON text: written by json's C encoder, built once, and measured
for depth (see :mod:`agentkit.core.codec`)."""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["depth", "json_text"]

# Built once: json.dumps with non-default options builds a new encoder on every call.
_python_json = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode


def _not_json(value: Any) -> Any:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# The C encoder json.JSONEncoder.encode ends in, with the same options, built once: every
# store write encodes, and the Python layers around it were a fifth of a small value's
# calls. Without a circular-reference check: the body _encode builds is new lists and
# dicts, so a cycle in the value has already stopped _encode (RecursionError).
_make_c_encoder = getattr(json.encoder, "c_make_encoder", None)
_chunks = None if _make_c_encoder is None else _make_c_encoder(
    None, _not_json, json.encoder.encode_basestring_ascii, None, ":", ",", False, False, False
)
_join = "".join


def json_text(body: Any) -> str:
    return _python_json(body) if _chunks is None else _join(_chunks(body, 0))


_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')


def depth(text: str) -> int:
    """The deepest bracket nesting of JSON ``text``, brackets inside strings skipped."""
    level = deepest = 0
    for token in _JSON_TOKENS.findall(text):
        if token in ("[", "{"):
            level += 1
            deepest = max(deepest, level)
        elif token in ("]", "}"):
            level -= 1
    return deepest
