"""Evaluators of the answer: Equals, Contains, Matches, IsInstance, MatchesSchema."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from agentkit.evals.scores import EvalContext, Score
from agentkit.tools.declarations.jsonschema import schema_errors

__all__ = ["Contains", "Equals", "IsInstance", "Matches", "MatchesSchema"]

_EXPECTED: Any = object()
"""No value given: compare with the case's ``expected``."""


def _target(ctx: EvalContext, value: Any, who: str) -> Any:
    if value is not _EXPECTED:
        return value
    if ctx.expected is None:
        raise ValueError(
            f"{who}() with no value compares with Case.expected, and case {ctx.case.id!r} "
            "has none; give the case expected= or the evaluator a value"
        )
    return ctx.expected


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Equals:
    """The answer equals ``value`` (by default the case's ``expected``)."""

    __slots__ = ("value",)

    def __init__(self, value: Any = _EXPECTED) -> None:
        self.value = value

    def __call__(self, ctx: EvalContext) -> Score:
        want = _target(ctx, self.value, "Equals")
        if ctx.output == want:
            return Score.check(True)
        return Score.check(False, f"expected {_short(want)}, got {_short(ctx.output)}")


class Contains:
    """The answer contains ``value`` (by default the case's ``expected``): a substring of
    a text answer, an item of a list, a key of a dict."""

    __slots__ = ("case_sensitive", "value")

    def __init__(self, value: Any = _EXPECTED, *, case_sensitive: bool = True) -> None:
        self.value = value
        self.case_sensitive = case_sensitive

    def __call__(self, ctx: EvalContext) -> Score:
        want = _target(ctx, self.value, "Contains")
        output = ctx.output
        if output is None:
            return Score.check(False, f"no answer to look for {_short(want)} in")
        if isinstance(output, str) and isinstance(want, str) and not self.case_sensitive:
            found = want.casefold() in output.casefold()
        else:
            try:
                found = want in output
            except TypeError:
                found = False
        if found:
            return Score.check(True)
        return Score.check(False, f"{_short(want)} not found in {_short(output)}")


class Matches:
    """The text answer matches the regular expression ``pattern`` (``re.search``)."""

    __slots__ = ("pattern",)

    def __init__(self, pattern: str | re.Pattern[str]) -> None:
        self.pattern = re.compile(pattern) if isinstance(pattern, str) else pattern

    def __call__(self, ctx: EvalContext) -> Score:
        if not isinstance(ctx.output, str):
            return Score.check(False, f"expected a text answer, got {_short(ctx.output)}")
        if self.pattern.search(ctx.output):
            return Score.check(True)
        return Score.check(
            False, f"{self.pattern.pattern!r} does not match {_short(ctx.output)}"
        )


class IsInstance:
    """The answer is an instance of ``kind`` (the ``Agent(output=...)`` type, say)."""

    __slots__ = ("kind",)

    def __init__(self, kind: type | tuple[type, ...]) -> None:
        self.kind = kind

    def __call__(self, ctx: EvalContext) -> Score:
        if isinstance(ctx.output, self.kind):
            return Score.check(True)
        names = [k.__name__ for k in self.kind] if isinstance(self.kind, tuple) else (
            self.kind.__name__
        )
        return Score.check(
            False, f"expected {names}, got {type(ctx.output).__name__} {_short(ctx.output)}"
        )


class MatchesSchema:
    """The answer, as JSON data (a dataclass or Pydantic model turned into a dict),
    fits the JSON Schema ``schema``."""

    __slots__ = ("schema",)

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.schema = schema

    def __call__(self, ctx: EvalContext) -> Score:
        errors = schema_errors(_as_data(ctx.output), self.schema)
        if not errors:
            return Score.check(True)
        return Score.check(False, "; ".join(errors))


def _as_data(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    dump = getattr(value, "model_dump", None)
    return dump() if callable(dump) else value
