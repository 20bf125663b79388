"""Tools from the Tools page's examples, for `agentkit tools inspect` tests."""

from enum import Enum
from typing import Literal

from agentkit.tools import tool


@tool(side_effecting=False, idempotent=True)
def city_population(city: str) -> int:
    """Look up the most recent census population for a named city."""
    return {"lisbon": 545_000, "porto": 231_000}.get(city.lower(), 0)


class Unit(Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


@tool(side_effecting=False, idempotent=True)
def forecast(
    city: str,
    unit: Unit,
    days: int = 3,
    mode: Literal["hourly", "daily"] = "daily",
) -> str:
    """Return a short weather forecast for a city over the next few days."""
    return f"{city}: mild for {days} days ({unit}, {mode})"


@tool(side_effecting=False, idempotent=True)
def list_projects(prefix: str, ctx) -> list[str]:  # type: ignore[no-untyped-def]
    """List the calling tenant's projects whose name starts with a prefix."""
    return []


@tool(side_effecting=False)
def flexible(query: str, **filters) -> str:  # type: ignore[no-untyped-def]
    """Search the catalogue with a free-form set of extra filter keys."""
    return query


@tool(side_effecting=True, requires_approval=True)
def refund(order_id: str, amount_usd: float) -> str:
    """Issue a refund against a customer order and return the confirmation id."""
    return "ok"
