"""Evaluators of the tool calls a run made: ToolTrajectory, ToolArguments, MaxToolCalls,
NoToolCall. They read ``EvalContext.trajectory``: every call the model asked for, in
order, whether or not it ran (a refused or gated call was still the model's choice)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from agentkit.core.contracts.types import ToolCall
from agentkit.evals.scores import EvalContext, Score

__all__ = ["MaxToolCalls", "NoToolCall", "ToolArguments", "ToolTrajectory"]

TrajectoryMode = Literal["exact", "in_order", "any_order"]
_MODES = ("exact", "in_order", "any_order")

Expected = tuple[str, Mapping[str, Any] | None]


def _expected(item: Any) -> Expected:
    if isinstance(item, str):
        return item, None
    if (isinstance(item, tuple | list) and len(item) == 2 and isinstance(item[0], str)
            and isinstance(item[1], Mapping)):
        return item[0], item[1]
    raise TypeError(
        f"ToolTrajectory takes tool names or (name, arguments) pairs, got {item!r}"
    )


def _fits(call: ToolCall, want: Expected) -> bool:
    name, arguments = want
    if call.name != name:
        return False
    return arguments is None or all(
        key in call.arguments and call.arguments[key] == value
        for key, value in arguments.items()
    )


def _show(want: Expected) -> str:
    return want[0] if want[1] is None else f"{want[0]}({dict(want[1])})"


def names(calls: Sequence[ToolCall]) -> list[str]:
    """The tool names of ``calls``, in order."""
    return [c.name for c in calls]


class ToolTrajectory:
    """The run's tool calls match ``expected``: names, or ``(name, arguments)`` pairs
    whose arguments must each be present with that value.

    ``mode="exact"``: these calls and no others, in this order; ``"in_order"``: these
    calls in this order, others may come between; ``"any_order"``: each of these calls,
    in any order, others allowed.
    """

    __slots__ = ("expected", "mode")

    def __init__(self, expected: Sequence[Any], mode: TrajectoryMode = "exact") -> None:
        if mode not in _MODES:
            raise ValueError(f"unknown ToolTrajectory mode {mode!r}; expected one of {_MODES}")
        self.expected = tuple(_expected(item) for item in expected)
        self.mode = mode

    def __call__(self, ctx: EvalContext) -> Score:
        calls = ctx.trajectory
        want = [_show(w) for w in self.expected]
        got = names(calls)
        if self.mode == "exact":
            ok = len(calls) == len(self.expected) and all(
                _fits(c, w) for c, w in zip(calls, self.expected, strict=True)
            )
        elif self.mode == "in_order":
            rest = iter(calls)
            ok = all(any(_fits(c, w) for c in rest) for w in self.expected)
        else:
            free = list(calls)
            ok = True
            for w in self.expected:
                match = next((c for c in free if _fits(c, w)), None)
                if match is None:
                    ok = False
                    break
                free.remove(match)
        if ok:
            return Score.check(True)
        return Score.check(False, f"expected calls {want} ({self.mode}), got {got}")


class ToolArguments:
    """Every call of tool ``name`` has arguments that satisfy ``predicate``; at least
    one such call was made."""

    __slots__ = ("name", "predicate", "tool")

    def __init__(self, name: str, predicate: Callable[[Mapping[str, Any]], bool]) -> None:
        self.tool = name
        self.predicate = predicate
        self.name = f"ToolArguments({name})"

    def __call__(self, ctx: EvalContext) -> Score:
        calls = [c for c in ctx.trajectory if c.name == self.tool]
        if not calls:
            return Score.check(False, f"no call to {self.tool!r} was made; calls: "
                                      f"{names(ctx.trajectory)}")
        bad = [c for c in calls if not self.predicate(c.arguments)]
        if bad:
            shown = ", ".join(f"{c.id} {dict(c.arguments)}" for c in bad)
            return Score.check(False, f"arguments of {self.tool!r} rejected: {shown}")
        return Score.check(True)


class MaxToolCalls:
    """The run made at most ``n`` tool calls."""

    __slots__ = ("n",)

    def __init__(self, n: int) -> None:
        self.n = n

    def __call__(self, ctx: EvalContext) -> Score:
        made = len(ctx.trajectory)
        if made <= self.n:
            return Score.check(True)
        return Score.check(False, f"{made} tool calls, more than {self.n}: "
                                  f"{names(ctx.trajectory)}")


class NoToolCall:
    """The run never asked for tool ``name``."""

    __slots__ = ("name", "tool")

    def __init__(self, name: str) -> None:
        self.tool = name
        self.name = f"NoToolCall({name})"

    def __call__(self, ctx: EvalContext) -> Score:
        ids = [c.id for c in ctx.trajectory if c.name == self.tool]
        if not ids:
            return Score.check(True)
        return Score.check(False, f"{self.tool!r} was called ({', '.join(ids)})")
