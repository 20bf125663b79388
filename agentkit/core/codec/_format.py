"""The store format's encoder and decoder (see :mod:`agentkit.core.codec`)."""

from __future__ import annotations

import base64
import binascii
import dataclasses
import datetime as dt
import decimal
import importlib
import json
import math
import re
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from agentkit.core.codec._types import AGENTKIT_TYPES as _AGENTKIT_TYPES
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.state_errors import CheckpointCorrupt, NotStorable

__all__ = ["FORMAT_VERSION", "dumps", "loads", "register"]

FORMAT_VERSION = 1
"""The version this agentkit writes and the only one it reads."""

_TAG = "$"

# Built once: json.dumps with non-default options builds a new encoder on every call.
_json_text = json.JSONEncoder(ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode
_ENVELOPE_OPEN = f'{{"agentkit":{FORMAT_VERSION},"value":'
# Deepest JSON nesting a value may have. Reading costs more stack per level than writing,
# so without a common bound dumps() could write a checkpoint loads() cannot read back.
MAX_DEPTH = 200
_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')

Encoder = Callable[[Any], Mapping[str, Any]]
Decoder = Callable[[dict[str, Any]], Any]

_AGENTKIT_TAGS = {place: tag for tag, place in _AGENTKIT_TYPES.items()}

_encoders: dict[type, Callable[[Any], Any]] = {}
_decoders: dict[str, Decoder] = {}
_owners: dict[str, type] = {}


class _Unstorable(Exception):
    def __init__(self, value: Any) -> None:
        self.type_name = type(value).__qualname__
        self.path: list[str] = []


class _Corrupt(Exception):
    pass


# -- encoding -------------------------------------------------------------------------


def _encode(value: Any) -> Any:
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    encoder = _encoders.get(kind)
    if encoder is None:
        encoder = _adopt(kind)
        if encoder is None:
            raise _Unstorable(value)
    return encoder(value)


def _adopt(kind: type) -> Callable[[Any], Any] | None:
    """Register one of agentkit's own types the first time one is written."""
    tag = _AGENTKIT_TAGS.get((kind.__module__, kind.__qualname__))
    if tag is None:
        return None
    register(kind, tag=tag)
    return _encoders[kind]


def _encode_float(value: float) -> Any:
    return value if math.isfinite(value) else {_TAG: "float", "v": repr(value)}


def _encode_items(items: Any) -> list[Any]:
    out = []
    for index, item in enumerate(items):
        try:
            out.append(_encode(item))
        except _Unstorable as exc:
            exc.path.append(f"[{index}]")
            raise
    return out


def _encode_dict(value: Mapping[Any, Any]) -> Any:
    if _TAG not in value and all(type(k) is str for k in value):
        out = {}
        for key, item in value.items():
            try:
                out[key] = _encode(item)
            except _Unstorable as exc:
                exc.path.append(f"[{key!r}]")
                raise
        return out
    pairs = []
    for key, item in value.items():
        try:
            pairs.append([_encode(key), _encode(item)])
        except _Unstorable as exc:
            exc.path.append(f"[{key!r}]")
            raise
    return {_TAG: "dict", "v": pairs}


def _tagged(tag: str, encode: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda value: {_TAG: tag, "v": encode(value)}


def _dataclass_codec(cls: type) -> tuple[Encoder, Decoder]:
    """Field-wise codec for a dataclass: init fields by name, defaults left out."""
    fields = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        if f.default is not dataclasses.MISSING:
            default: Any = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = dataclasses.MISSING
        fields.append((f.name, default))
    names = frozenset(name for name, _ in fields)

    def encode(value: Any) -> dict[str, Any]:
        out = {}
        for name, default in fields:
            item = getattr(value, name)
            if (
                default is not dataclasses.MISSING
                and type(item) is type(default)
                and item == default
                and (type(item) is not float or repr(item) == repr(default))  # keep -0.0
            ):
                continue
            out[name] = item
        return out

    def decode(payload: dict[str, Any]) -> Any:
        unknown = set(payload) - names
        if unknown:
            raise _Corrupt(f"{cls.__qualname__} has no field(s) {sorted(unknown)}")
        return cls(**payload)

    return encode, decode


def _dataclass_encoder(cls: type, tag: str) -> Callable[[Any], dict[str, Any]]:
    """One pass over a dataclass's init fields, plain values written as they are: a
    checkpoint holds many small values, so this is the codec's hot path."""
    fields = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        if f.default is not dataclasses.MISSING:
            fields.append((f.name, True, f.default))
        elif f.default_factory is not dataclasses.MISSING:
            fields.append((f.name, True, f.default_factory()))
        else:
            fields.append((f.name, False, None))
    plain = (str, int, bool, type(None))

    def encode(value: Any) -> dict[str, Any]:
        out: dict[str, Any] = {_TAG: tag}
        name = ""
        try:
            for name, has_default, default in fields:
                item = getattr(value, name)
                kind = type(item)
                if (
                    has_default
                    and kind is type(default)
                    and item == default
                    and (kind is not float or repr(item) == repr(default))  # keep -0.0
                ):
                    continue
                out[name] = item if kind in plain else _encode(item)
        except _Unstorable as exc:
            exc.path.append(f".{name}")
            raise
        return out

    return encode


def register(
    cls: type,
    *,
    tag: str,
    encode: Encoder | None = None,
    decode: Decoder | None = None,
) -> None:
    """Make ``cls`` storable under ``tag``.

    ``encode(value)`` returns a mapping of field names to storable values, and
    ``decode(fields)`` rebuilds the value from that mapping (decoded); for a dataclass
    both default to its init fields. Register at import time of the module defining
    ``cls``, so every worker that may read the value has the codec: a tag with no codec
    reads as :class:`CheckpointCorrupt`, never as an import.
    """
    if not tag or not isinstance(tag, str) or tag.startswith(_TAG):
        raise ValueError(
            f"a codec tag must be a non-empty string not starting with '$', got {tag!r}"
        )
    owner = _owners.get(tag)
    if owner is not None and (owner.__module__, owner.__qualname__) != (
        cls.__module__,
        cls.__qualname__,
    ):
        raise ValueError(
            f"codec tag {tag!r} is already taken by {owner.__module__}.{owner.__qualname__}; "
            "choose another tag"
        )
    if encode is None or decode is None:
        if not dataclasses.is_dataclass(cls):
            raise TypeError(
                f"register({cls.__qualname__}, ...) needs encode= and decode=: only a "
                "dataclass has a field-wise codec by default"
            )
        default_encode, default_decode = _dataclass_codec(cls)
        fast = _dataclass_encoder(cls, tag) if encode is None else None
        encode = encode or default_encode
        decode = decode or default_decode
    else:
        fast = None
    fields_of = encode

    def encode_tagged(value: Any) -> dict[str, Any]:
        if fast is not None:
            return fast(value)
        out: dict[str, Any] = {_TAG: tag}
        for name, item in fields_of(value).items():
            if name == _TAG:
                raise ValueError(f"the codec for {tag!r} returned a field named '$'")
            try:
                out[name] = _encode(item)
            except _Unstorable as exc:
                exc.path.append(f".{name}")
                raise
        return out

    rebuild = decode

    def decode_tagged(payload: dict[str, Any]) -> Any:
        return rebuild({k: _decode(v) for k, v in payload.items() if k != _TAG})

    _owners[tag] = cls
    _encoders[cls] = encode_tagged
    _decoders[tag] = decode_tagged


def dumps(value: Any) -> str:
    """``value`` as the store's JSON text, in a format-version envelope.

    Raises :class:`NotStorable` naming where inside ``value`` something is not storable
    data (a class instance nobody registered, a function, an exception, ...).
    """
    try:
        body = _encode(value)
    except _Unstorable as exc:
        raise NotStorable(exc.type_name, "$" + "".join(reversed(exc.path))) from None
    except RecursionError:
        raise NotStorable(_too_deep(value), "$") from None
    try:
        text = _json_text(body)
    except (ValueError, RecursionError) as exc:  # an int too long for str(), say
        raise NotStorable(f"{type(value).__name__} JSON cannot hold ({exc})", "$") from None
    if text.count("[") + text.count("{") > MAX_DEPTH and _depth(text) > MAX_DEPTH:
        raise NotStorable(_too_deep(value), "$")
    return _ENVELOPE_OPEN + text + "}"


def _too_deep(value: Any) -> str:
    return f"{type(value).__name__} nested more than {MAX_DEPTH} levels (as JSON)"


def _depth(text: str) -> int:
    """The deepest bracket nesting of JSON ``text``, brackets inside strings skipped."""
    depth = deepest = 0
    for token in _JSON_TOKENS.findall(text):
        if token in ("[", "{"):
            depth += 1
            deepest = max(deepest, depth)
        elif token in ("]", "}"):
            depth -= 1
    return deepest


# -- decoding -------------------------------------------------------------------------


def _decode(data: Any) -> Any:
    kind = type(data)
    if kind is dict:
        tag = data.get(_TAG)
        if tag is None:
            return {k: _decode(v) for k, v in data.items()}
        decoder = _decoders.get(tag) if type(tag) is str else None
        if decoder is None:
            decoder = _load_home(tag)
        return decoder(data)
    if kind is list:
        return [_decode(v) for v in data]
    return data


def _load_home(tag: Any) -> Decoder:
    place = _AGENTKIT_TYPES.get(tag) if type(tag) is str else None
    if place is None:
        raise _Corrupt(f"unknown type tag {tag!r}")
    cls = getattr(importlib.import_module(place[0]), place[1])
    if tag not in _decoders:
        register(cls, tag=tag)
    return _decoders[tag]


def _payload(data: dict[str, Any]) -> Any:
    if set(data) != {_TAG, "v"}:
        raise _Corrupt(f"a {data[_TAG]!r} value must have exactly the keys '$' and 'v'")
    return data["v"]


def _decode_list(data: dict[str, Any]) -> list[Any]:
    items = _payload(data)
    if type(items) is not list:
        raise _Corrupt(f"a {data[_TAG]!r} value must hold a JSON array")
    return [_decode(v) for v in items]


def _decode_str(data: dict[str, Any]) -> str:
    text = _payload(data)
    if type(text) is not str:
        raise _Corrupt(f"a {data[_TAG]!r} value must hold a string")
    return text


def _decode_dict(data: dict[str, Any]) -> dict[Any, Any]:
    out = {}
    for pair in _decode_list(data):
        if type(pair) is not list or len(pair) != 2:
            raise _Corrupt("a 'dict' value must hold [key, value] pairs")
        out[pair[0]] = pair[1]
    return out


def _decode_mapping(data: dict[str, Any]) -> dict[Any, Any]:
    inner = _decode(_payload(data))
    if type(inner) is not dict:
        raise _Corrupt(f"a {data[_TAG]!r} value must hold a JSON object")
    return inner


def _decode_float(data: dict[str, Any]) -> float:
    text = _decode_str(data)
    if text not in ("nan", "inf", "-inf"):
        raise _Corrupt(f"a 'float' value must be 'nan', 'inf' or '-inf', got {text[:40]!r}")
    return float(text)


def _decode_bytes(data: dict[str, Any]) -> bytes:
    try:
        return base64.b64decode(_decode_str(data), validate=True)
    except binascii.Error as exc:
        raise _Corrupt(f"a 'bytes' value is not valid base64 ({exc})") from None


def loads(text: str | bytes, *, key: str) -> Any:
    """The value :func:`dumps` wrote, read back from the store's ``key``.

    Raises :class:`CheckpointCorrupt` naming ``key`` for anything else: bytes that are
    not UTF-8 JSON, an empty value, a missing or unknown format version, an unknown type
    tag or a malformed value. Nothing named in the data is ever imported or executed.
    """
    try:
        return _loads(text)
    except _Corrupt as exc:
        raise CheckpointCorrupt(key, str(exc)) from None
    except RecursionError:
        raise CheckpointCorrupt(key, "the value is nested too deeply to read") from None
    except (TypeError, ValueError, KeyError, AttributeError, ArithmeticError) as exc:
        # A registered decoder refused its fields (a constructor's own validation).
        reason = f"a value does not decode: {type(exc).__name__}: {exc}"
        raise CheckpointCorrupt(key, reason) from None


def _loads(text: str | bytes) -> Any:
    if isinstance(text, bytes | bytearray | memoryview):
        raw = bytes(text)
        if raw[:1] == b"\x80":
            raise _Corrupt(
                "it is a pickle, written by an agentkit before the JSON store format; "
                "pickled stores are no longer read (see the changelog in README.md)"
            )
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _Corrupt(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    elif not isinstance(text, str):
        raise _Corrupt(f"expected JSON text, got a {type(text).__name__}")
    if not text.strip():
        raise _Corrupt("the value is empty")
    try:
        envelope = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _Corrupt(f"not JSON ({exc.msg} at character {exc.pos})") from None
    if type(envelope) is not dict or "agentkit" not in envelope or "value" not in envelope:
        raise _Corrupt('not an agentkit value: expected {"agentkit": <version>, "value": ...}')
    version = envelope["agentkit"]
    if version != FORMAT_VERSION or type(version) is not int:
        raise _Corrupt(
            f"unknown format version {version!r}; this agentkit reads version {FORMAT_VERSION}"
        )
    return _decode(envelope["value"])


def _date(kind: Any) -> Callable[[dict[str, Any]], Any]:
    return lambda data: kind.fromisoformat(_decode_str(data))


def _install() -> None:
    _encoders[float] = _encode_float
    _encoders[list] = _encode_items
    _encoders[dict] = _encode_dict
    _encoders[tuple] = _tagged("tuple", _encode_items)
    _encoders[FrozenDict] = _tagged("frozendict", _encode_dict)
    _encoders[set] = _tagged("set", _encode_items)
    _encoders[frozenset] = _tagged("frozenset", _encode_items)
    _encoders[bytes] = _tagged("bytes", lambda v: base64.b64encode(v).decode("ascii"))
    _encoders[bytearray] = _tagged("bytearray", lambda v: base64.b64encode(v).decode("ascii"))
    _encoders[dt.datetime] = _tagged("datetime", dt.datetime.isoformat)
    _encoders[dt.date] = _tagged("date", dt.date.isoformat)
    _encoders[dt.time] = _tagged("time", dt.time.isoformat)
    _encoders[dt.timedelta] = _tagged(
        "timedelta", lambda v: [v.days, v.seconds, v.microseconds]
    )
    _encoders[decimal.Decimal] = _tagged("decimal", str)
    _encoders[uuid.UUID] = _tagged("uuid", str)

    _decoders["tuple"] = lambda data: tuple(_decode_list(data))
    _decoders["set"] = lambda data: set(_decode_list(data))
    _decoders["frozenset"] = lambda data: frozenset(_decode_list(data))
    _decoders["dict"] = _decode_dict
    _decoders["frozendict"] = lambda data: FrozenDict(_decode_mapping(data))
    _decoders["float"] = _decode_float
    _decoders["bytes"] = _decode_bytes
    _decoders["bytearray"] = lambda data: bytearray(_decode_bytes(data))
    _decoders["datetime"] = _date(dt.datetime)
    _decoders["date"] = _date(dt.date)
    _decoders["time"] = _date(dt.time)
    _decoders["timedelta"] = lambda data: dt.timedelta(*_decode_timedelta(data))
    _decoders["decimal"] = lambda data: decimal.Decimal(_decode_str(data))
    _decoders["uuid"] = lambda data: uuid.UUID(_decode_str(data))


def _decode_timedelta(data: dict[str, Any]) -> tuple[int, int, int]:
    parts = _decode_list(data)
    if len(parts) != 3 or any(type(p) is not int for p in parts):
        raise _Corrupt("a 'timedelta' value must hold [days, seconds, microseconds]")
    return parts[0], parts[1], parts[2]


_install()
