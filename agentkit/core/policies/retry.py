"""retry(): try again after transient failures, and never act twice by accident.

Only failures :func:`~agentkit.core.contracts.errors.is_transient` accepts are retried
(timeouts, dropped connections, rate limits, overload, 5xx). A side-effecting tool
that does not declare ``idempotent=True`` is retried only when an ``idempotent()``
layer sits *inside* this one: then a retry of a call that did act replays the recorded
result instead of acting again. Without that layer it is not retried at all, because
a timeout may have hidden an effect that already happened.

A provider that asks for a wait (``Retry-After``, carried as ``ProviderError.retry_after``)
gets it, capped by ``max_delay``. Around a model call, retry() is the one place that
retries: :func:`under_retry` tells the provider, which then sends one request per
attempt instead of letting its SDK retry too (3 attempts x 3 SDK tries was 9 requests).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from agentkit.core.contracts.errors import ProviderError, is_transient
from agentkit.core.contracts.ports import Context
from agentkit.core.contracts.types import ChatRequest, ToolRequest

if TYPE_CHECKING:
    pass

__all__ = ["exponential_backoff", "retry", "under_retry"]

_log = logging.getLogger("agentkit.retry")

# Set while a retry() layer runs a model call. A context variable rather than a flag on
# the request or the provider: it holds for exactly the calls this layer wraps, in this
# task, however the chain is built, and one provider may serve chains with and without.
_AROUND_CHAT: ContextVar[bool] = ContextVar("agentkit_retry_around_chat", default=False)


def under_retry() -> bool:
    """True inside a model call that an agentkit ``retry()`` layer retries.

    A provider then sends a single request per call (its SDK's own retries off), so
    that one attempt of ``retry()`` is one request and the two never multiply.
    """
    return _AROUND_CHAT.get()

Backoff = Callable[[int], float]
"""Seconds to wait before retry number ``n`` (1 for the first retry)."""


def exponential_backoff(
    initial: float = 0.25, factor: float = 2.0, maximum: float = 20.0, *, jitter: bool = True
) -> Backoff:
    """``initial * factor**(n-1)`` capped at ``maximum``; with ``jitter`` a uniformly random
    fraction of that ("full jitter"), so many clients do not retry in lockstep."""

    def delay(attempt: int) -> float:
        ceiling = min(maximum, initial * factor ** (attempt - 1))
        return random.uniform(0, ceiling) if jitter else ceiling

    return delay


def retry(
    max_attempts: int = 3,
    backoff: Backoff | None = None,
    *,
    max_delay: float = 30.0,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
) -> _Retry:
    """Retry transient failures up to ``max_attempts`` tries in all (tool or chat chain).

    ``backoff`` defaults to :func:`exponential_backoff`. A provider's ``Retry-After``
    replaces the backoff for that wait. No wait is longer than ``max_delay`` seconds.
    Permanent errors (definition, argument, shape, budget, egress, permanent provider
    errors) are raised at once.
    """
    if max_attempts < 1:
        raise ValueError(f"max_attempts must be at least 1, got {max_attempts}")
    if not max_delay >= 0:
        raise ValueError(f"max_delay must be a number of seconds >= 0, got {max_delay}")
    return _Retry(max_attempts, backoff or exponential_backoff(), max_delay, sleep)


def _asked_wait(error: BaseException) -> float | None:
    """The wait a provider asked for, on ``error`` or what caused it."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ProviderError):
            return current.retry_after
        current = current.__cause__
    return None


class _Retry:
    __slots__ = ("_backoff", "_max", "_max_delay", "_sleep")

    def __init__(
        self,
        max_attempts: int,
        backoff: Backoff,
        max_delay: float,
        sleep: Callable[[float], Awaitable[Any]],
    ) -> None:
        self._max = max_attempts
        self._backoff = backoff
        self._max_delay = max_delay
        self._sleep = sleep

    @staticmethod
    def _safe_to_repeat(request: Any) -> bool:
        if not isinstance(request, ToolRequest) or not request.is_side_effecting:
            return True
        if request.traits.idempotent:
            return True
        # Set by an idempotent() layer inside this one, before it ran the call.
        return "idempotency_key" in request.meta

    async def __call__(self, request: Any, ctx: Context, call_next: Any) -> Any:
        # Inline rather than a helper coroutine: this sits on every tool call's path.
        token = _AROUND_CHAT.set(True) if isinstance(request, ChatRequest) else None
        attempt = 1
        try:
            while True:
                try:
                    return await call_next(request, ctx)
                except Exception as error:
                    if attempt >= self._max or not is_transient(error):
                        raise
                    if not self._safe_to_repeat(request):
                        _log.info(
                            "not retrying %s: side-effecting, not idempotent, and no "
                            "idempotent() layer inside retry()", getattr(request, "name", request)
                        )
                        raise
                    asked = _asked_wait(error)
                    delay = min(self._backoff(attempt) if asked is None else asked,
                                self._max_delay)
                    _log.info("transient failure (%s); retry %d in %.2fs",
                              type(error).__name__, attempt, delay)
                    if isinstance(request, ToolRequest):
                        request.meta["retries"] = attempt
                    attempt += 1
                    await self._sleep(delay)
        finally:
            if token is not None:
                _AROUND_CHAT.reset(token)

    def __repr__(self) -> str:
        return f"retry(max_attempts={self._max}, max_delay={self._max_delay})"
