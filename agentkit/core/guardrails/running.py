"""Running guardrails: in order on a value, or alongside the call they guard.

A guardrail is ``g(value)`` or ``g(value, ctx)``, sync or async, returning None or True
(pass), a :class:`Tripwire` (stop), or a rewritten value. Which form it has is read once,
by :func:`as_guardrail`, never per call. :func:`check` runs guardrails one after
another, each on the value the one before left, and stops at the first trip.
:func:`check_alongside` runs the guardrails that allow it at the same time as the call
they guard (an input guardrail beside the first model call): the first trip cancels the
call, so its answer is never used. A guardrail that rewrites must run before the call
(the call must never see the raw value): one that declares ``rewrites`` (``PII(mode=
"redact")``) is never run alongside, and one that rewrites while running alongside is
an error, :class:`GuardrailMisplaced`, rather than a rewrite that came too late.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from agentkit.core.contracts.errors import AgentkitError
from agentkit.core.contracts.ports import Context
from agentkit.core.guardrails.tripwire import Tripwire

if TYPE_CHECKING:
    from agentkit.core.runtime.context import RunContext

__all__ = [
    "Guardrail",
    "GuardrailMisplaced",
    "GuardrailTrip",
    "as_guardrail",
    "check",
    "check_alongside",
    "input_guardrail",
]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class GuardrailTrip:
    """Which guardrail stopped a run, where, and why."""

    guardrail: str
    """The guardrail's name (a function's ``__name__``, a check's ``repr``)."""
    where: str
    """``"input"``, ``"output"``, or ``"tool <name> arguments"`` / ``"tool <name> result"``."""
    reason: str
    """The :class:`Tripwire`'s reason."""
    info: Mapping[str, Any] | None = None
    """The :class:`Tripwire`'s info."""


class GuardrailMisplaced(AgentkitError, TypeError):
    """A guardrail that ran alongside the call it guards returned a rewritten value,
    which would come too late: the call already saw the raw one."""

    def __init__(self, guardrail: str, where: str) -> None:
        self.guardrail = guardrail
        self.where = where
        super().__init__(
            f"guardrail {guardrail} rewrote the {where} while running alongside the call it "
            "guards, so the call saw the value before the rewrite; wrap it as "
            "input_guardrail(fn, parallel=False), or give it a `rewrites = True` attribute"
        )


@dataclass(frozen=True, slots=True)
class Guardrail:
    """A guardrail with its form read once: how to call it, and whether it may run
    alongside the call it guards."""

    check: Callable[..., Any]
    """The function or callable object."""
    name: str
    """How results and errors name it."""
    takes_ctx: bool
    """Called as ``check(value, ctx)``, not ``check(value)``."""
    parallel: bool
    """May run alongside the guarded call (never when it rewrites)."""

    async def __call__(self, value: Any, ctx: Context) -> Any:
        outcome = self.check(value, ctx) if self.takes_ctx else self.check(value)
        if inspect.isawaitable(outcome):
            outcome = await outcome
        return outcome


def _takes_ctx(check: Callable[..., Any], name: str) -> bool:
    try:
        signature = inspect.signature(check)
    except (TypeError, ValueError):
        return False  # a builtin without a signature: called with the value alone
    positional = [
        p for p in signature.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    varargs = any(p.kind == p.VAR_POSITIONAL for p in signature.parameters.values())
    if not positional and not varargs:
        raise TypeError(
            f"guardrail {name} must take the value it checks: g(value) or g(value, ctx)"
        )
    return len(positional) >= 2 or varargs


def as_guardrail(check: Any, *, parallel: bool | None = None) -> Guardrail:
    """``check`` as a :class:`Guardrail` (one already is stays as it is). ``parallel``
    None: alongside unless ``check`` declares ``rewrites``. Raises ``TypeError`` for
    something that cannot be a guardrail."""
    if isinstance(check, Guardrail):
        return check
    if not callable(check):
        raise TypeError(
            f"a guardrail is a function g(value) or g(value, ctx), sync or async, or an "
            f"object with such a __call__ (e.g. PII(), MaxLength(1000)); got {check!r}"
        )
    name = getattr(check, "__name__", None) or repr(check)
    rewrites = bool(getattr(check, "rewrites", False))
    if parallel and rewrites:
        raise ValueError(
            f"guardrail {name} rewrites the value, so it must run before the call it "
            "guards: parallel=True is not possible for it"
        )
    return Guardrail(check, name, _takes_ctx(check, name),
                     (not rewrites) if parallel is None else parallel)


def input_guardrail(check: Any, *, parallel: bool = True) -> Guardrail:
    """An input guardrail; ``parallel=False`` runs it before the first model call
    instead of alongside it (for a check that must finish first, or has a cost)."""
    return as_guardrail(check, parallel=parallel)


def _trip(guardrail: Guardrail, where: str, outcome: Any) -> GuardrailTrip | None:
    if isinstance(outcome, Tripwire):
        return GuardrailTrip(guardrail.name, where, outcome.reason, outcome.info)
    return None


async def check(
    guardrails: Iterable[Guardrail], value: Any, ctx: RunContext, where: str
) -> tuple[Any, GuardrailTrip | None]:
    """Run ``guardrails`` in order on ``value``: the value as the last one left it, and
    the first trip (None when every one passed)."""
    for guardrail in guardrails:
        outcome = await guardrail(value, ctx)
        if outcome is None or outcome is True:
            continue
        trip = _trip(guardrail, where, outcome)
        if trip is not None:
            return value, trip
        value = outcome
    return value, None


async def check_alongside(
    guardrails: Iterable[Guardrail],
    value: Any,
    ctx: RunContext,
    where: str,
    call: Callable[[Any], Awaitable[T]],
) -> tuple[T | None, Any, GuardrailTrip | None]:
    """Run the guardrails that must come first on ``value``, then ``call(value)``
    alongside the others: ``(answer, value, None)`` when all passed, or ``(None, value,
    trip)`` when one tripped, with the call cancelled if it was still running.

    The call runs in a task of its own only when some guardrail runs alongside it. An
    error of the call or of a guardrail is raised once the other side has ended.
    """
    chosen = tuple(guardrails)
    value, trip = await check((g for g in chosen if not g.parallel), value, ctx, where)
    if trip is not None:
        return None, value, trip
    beside = tuple(g for g in chosen if g.parallel)
    if not beside:
        return await call(value), value, None
    task = asyncio.ensure_future(call(value))
    try:
        for guardrail in beside:
            outcome = await guardrail(value, ctx)
            if outcome is None or outcome is True:
                continue
            trip = _trip(guardrail, where, outcome)
            if trip is None:
                raise GuardrailMisplaced(guardrail.name, where)
            return None, value, trip
    except BaseException:
        await _cancelled(task)
        raise
    finally:
        if trip is not None:
            await _cancelled(task)
    return await task, value, None


async def _cancelled(task: asyncio.Future[Any]) -> None:
    """Cancel ``task`` and wait for it to end, without letting its cancellation (or
    its failure) escape; a cancellation of the caller itself still propagates."""
    if task.done():
        if not task.cancelled():
            task.exception()  # retrieved: its failure does not matter once tripped
        return
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            raise
    except Exception:
        pass  # the call failed while being cancelled: the trip decides the outcome
