"""The tools the provider tests offer their models: one that answers, one that fails."""

from __future__ import annotations

from agentkit.tools import tool


@tool(side_effecting=False, idempotent=True)
def city_population(city: str) -> int:
    """Look up the most recent census population for a named city."""
    return {"lisbon": 545_000, "porto": 231_000}.get(city.lower(), 0)


@tool(side_effecting=False)
def broken_lookup(code: str) -> str:
    """Look up an airport by its code; this one always fails, for tests."""
    raise RuntimeError("airport database offline")
