"""Budget: the ceilings of one run (money, calls, depth, concurrency) and what is spent.

A budget is shared by a run and every nested run (``ctx.child()`` passes it down), and
its check-and-reserve never awaits between the check and the reservation, so on one
event loop concurrent calls cannot both slip under a ceiling. Money is counted in
whole nano-dollars, so a hundred charges of $0.01 add up to exactly $1.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentkit.core.contracts.errors import BudgetExceeded
from agentkit.core.contracts.ports import BudgetLedger

__all__ = ["Budget", "run_budget"]

_NANOS = 1_000_000_000


def _to_nanos(usd: float) -> int:
    return round(usd * _NANOS)


@dataclass(slots=True)
class Budget:
    """Ceilings for a run; ``None`` means no ceiling. Counters show what was spent."""

    max_cost_usd: float | None = None
    """Money, in US dollars, over every model and tool call."""
    max_calls: int | None = None
    """Metered calls (model and tool) over the whole run."""
    max_depth: int | None = None
    """How deep agents may nest."""
    max_concurrency: int | None = None
    """Metered calls in flight at once; one more is refused, not queued."""
    calls: int = field(default=0, init=False)
    """Calls admitted so far."""
    in_flight: int = field(default=0, init=False)
    """Calls admitted and not yet finished."""
    _spent: int = field(default=0, init=False, repr=False)
    _reserved: int = field(default=0, init=False, repr=False)

    @property
    def spent_usd(self) -> float:
        """Money charged so far."""
        return self._spent / _NANOS

    @property
    def reserved_usd(self) -> float:
        """Money held for calls in flight (their worst case), released when they finish."""
        return self._reserved / _NANOS

    @property
    def remaining_usd(self) -> float | None:
        """Money left under the ceiling, or None without one."""
        if self.max_cost_usd is None:
            return None
        return (_to_nanos(self.max_cost_usd) - self._spent - self._reserved) / _NANOS

    def admit(self, what: str, *, estimate_usd: float = 0.0, depth: int = 0) -> int:
        """Admit one call or raise :class:`BudgetExceeded`.

        Returns the reservation to hand back to :meth:`release` when the call ends.
        """
        if self.max_depth is not None and depth > self.max_depth:
            raise BudgetExceeded("depth", self.max_depth, depth, what)
        if self.max_calls is not None and self.calls + 1 > self.max_calls:
            raise BudgetExceeded("calls", self.max_calls, self.calls + 1, what)
        if self.max_concurrency is not None and self.in_flight + 1 > self.max_concurrency:
            raise BudgetExceeded("concurrency", self.max_concurrency, self.in_flight + 1, what)
        reservation = _to_nanos(estimate_usd)
        if self.max_cost_usd is not None:
            would_be = self._spent + self._reserved + reservation
            if would_be > _to_nanos(self.max_cost_usd):
                raise BudgetExceeded("cost_usd", self.max_cost_usd, would_be / _NANOS, what)
        self.calls += 1
        self.in_flight += 1
        self._reserved += reservation
        return reservation

    def release(self, reservation: int, *, cost_usd: float = 0.0) -> None:
        """Finish an admitted call: drop its reservation and charge what it really cost."""
        self.in_flight -= 1
        self._reserved -= reservation
        self._spent += _to_nanos(cost_usd)


def run_budget(
    template: BudgetLedger | None, spent: tuple[int, int] = (0, 0)
) -> BudgetLedger | None:
    """The budget of one run (or one activity of it) on a shared base context:
    ``template``'s ceilings, starting from what the run has ``spent`` so far (metered
    calls, nano-dollars). Anything but a Budget is shared as it is."""
    if not isinstance(template, Budget):
        return template
    budget = Budget(
        max_cost_usd=template.max_cost_usd,
        max_calls=template.max_calls,
        max_depth=template.max_depth,
        max_concurrency=template.max_concurrency,
    )
    budget.calls, budget._spent = spent
    return budget
