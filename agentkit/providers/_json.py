"""JSON from a model's reply, decoded without letting hostile input crash a run.

``json.loads`` accepts what Python cannot then handle: an integer past the interpreter's
digit limit raises ``ValueError`` and nesting past the recursion limit raises
``RecursionError``; nesting a few hundred levels deep parses, and then breaks whatever
walks it recursively (freezing, schema checks, error messages). :func:`decode` keeps an
over-long integer as a :class:`HugeInt` marker instead of failing, so a check can say
where it was, and tool-call arguments are held to :data:`MAX_ARGUMENT_DEPTH`.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any

__all__ = [
    "MAX_ARGUMENT_DEPTH",
    "HugeInt",
    "arguments_from_text",
    "arguments_from_value",
    "decode",
    "describe",
    "excerpt",
]

MAX_ARGUMENT_DEPTH = 100
"""How deeply tool-call arguments may nest (the arguments object itself is level 1)."""

Arguments = tuple[dict[str, Any], str | None]
"""``(arguments, None)``, or ``({}, reason)`` for arguments the model has to repair."""


@dataclass(frozen=True, slots=True)
class HugeInt:
    """An integer literal with more digits than ``int()`` accepts, kept unconverted."""

    digits: int
    """How many digits it had."""


def _integer(literal: str) -> int | HugeInt:
    try:
        return int(literal)
    except ValueError:  # more digits than sys.get_int_max_str_digits()
        return HugeInt(len(literal.lstrip("-")))


def decode(text: str) -> Any:
    """``json.loads`` with over-long integers kept as :class:`HugeInt`.

    Raises ``json.JSONDecodeError`` for text that is not JSON and ``RecursionError``
    for JSON nested too deeply to parse.
    """
    return json.loads(text, parse_int=_integer)


def describe(value: Any) -> str:
    """A JSON value's kind in words, for error messages: never the value itself."""
    if value is None:
        return "null"
    if isinstance(value, HugeInt):
        return f"an integer of {value.digits} digits"
    for kind, words in _KINDS:
        if isinstance(value, kind):
            return words
    return type(value).__name__


_KINDS: tuple[tuple[type, str], ...] = (
    (bool, "a boolean"),  # before int: a bool is an int to isinstance
    (int, "an integer"),
    (float, "a number"),
    (str, "a string"),
    (list, "a list"),
    (dict, "an object"),
)


def excerpt(text: str, limit: int = 80) -> str:
    """The start of ``text``, quoted, for an error message of bounded length."""
    return repr(text if len(text) <= limit else text[:limit] + "...")


def arguments_from_text(text: str) -> Arguments:
    """Tool-call arguments from the JSON text a model sent; empty text is no arguments."""
    if not text.strip():
        return {}, None
    try:
        value = decode(text)
    except json.JSONDecodeError as exc:
        return {}, f"not valid JSON ({exc.msg}: char {exc.pos}): {excerpt(text, 197)}"
    except RecursionError:
        return {}, _too_deep()
    return arguments_from_value(value)


def arguments_from_value(value: Any) -> Arguments:
    """Tool-call arguments from an already decoded value: a JSON object within bounds."""
    if not isinstance(value, dict):
        return {}, f"expected a JSON object, got {describe(value)}"
    problem = _out_of_bounds(value)
    return ({}, problem) if problem else (value, None)


def _too_deep() -> str:
    limit = MAX_ARGUMENT_DEPTH
    return f"nested deeper than {limit} levels; at most {limit} are accepted"


def _out_of_bounds(arguments: dict[str, Any]) -> str | None:
    # Iterative on purpose: the point is to refuse what recursion cannot walk.
    pending: list[tuple[Any, int]] = [(arguments, 1)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, dict | list):
            if depth > MAX_ARGUMENT_DEPTH:
                return _too_deep()
            items = value.values() if isinstance(value, dict) else value
            pending.extend((item, depth + 1) for item in items)
        elif isinstance(value, HugeInt):
            return (
                f"contains an integer of {value.digits} digits; at most "
                f"{sys.get_int_max_str_digits()} digits are accepted"
            )
    return None
