"""circuit_breaker(): stop calling what keeps failing, and try again after a pause.

After ``failure_threshold`` transient failures in a row for one tool (or one model),
the circuit opens: calls to it fail at once with :class:`CircuitOpen` instead of
waiting on a service that is down. After ``reset_after`` seconds one trial call goes
through (half-open); its success closes the circuit, its failure opens it again.
Place it outside ``retry()``, so a call's retries count as one failure.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentkit.core.contracts.errors import AgentkitError, is_transient
from agentkit.core.contracts.ports import Context
from agentkit.core.contracts.types import ChatRequest, ToolRequest

if TYPE_CHECKING:
    pass

__all__ = ["CircuitOpen", "circuit_breaker"]


class CircuitOpen(AgentkitError):
    """Calls to ``target`` are paused after repeated failures; not retried."""

    def __init__(self, target: str, failures: int, retry_in: float) -> None:
        self.target = target
        self.failures = failures
        self.retry_in = retry_in
        super().__init__(
            f"{target} is paused after {failures} failures in a row; it will be tried again "
            f"in {retry_in:.0f}s. Continue without it for now."
        )


@dataclass(slots=True)
class _Circuit:
    failures: int = 0
    opened_at: float | None = None
    trial_running: bool = False


def circuit_breaker(
    failure_threshold: int = 5,
    reset_after: float = 30.0,
    *,
    clock: Callable[[], float] = time.monotonic,
) -> _CircuitBreaker:
    """Fail fast on a tool or model that keeps failing transiently (see module docs)."""
    if failure_threshold < 1:
        raise ValueError(f"failure_threshold must be at least 1, got {failure_threshold}")
    if reset_after <= 0:
        raise ValueError(f"reset_after must be positive, got {reset_after}")
    return _CircuitBreaker(failure_threshold, reset_after, clock)


class _CircuitBreaker:
    __slots__ = ("_circuits", "_clock", "_reset_after", "_threshold")

    def __init__(self, threshold: int, reset_after: float, clock: Callable[[], float]) -> None:
        self._threshold = threshold
        self._reset_after = reset_after
        self._clock = clock
        self._circuits: dict[str, _Circuit] = {}

    @staticmethod
    def _target(request: Any) -> str:
        if isinstance(request, ToolRequest):
            return f"tool {request.name!r}"
        if isinstance(request, ChatRequest):
            return f"model {request.model!r}"
        return type(request).__name__

    async def __call__(self, request: Any, ctx: Context, call_next: Any) -> Any:
        target = self._target(request)
        circuit = self._circuits.setdefault(target, _Circuit())
        trial = False
        if circuit.opened_at is not None:
            waited = self._clock() - circuit.opened_at
            if waited < self._reset_after or circuit.trial_running:
                raise CircuitOpen(target, circuit.failures, max(0.0, self._reset_after - waited))
            circuit.trial_running = trial = True
        try:
            result = await call_next(request, ctx)
        except Exception as error:
            if is_transient(error):
                circuit.failures += 1
                if trial or circuit.failures >= self._threshold:
                    circuit.opened_at = self._clock()
            raise
        else:
            circuit.failures = 0
            circuit.opened_at = None
            return result
        finally:
            if trial:
                circuit.trial_running = False

    def __repr__(self) -> str:
        return (
            f"circuit_breaker(failure_threshold={self._threshold}, "
            f"reset_after={self._reset_after})"
        )
