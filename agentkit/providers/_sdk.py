"""What both provider adapters share: SDK client options and priced usage."""

from __future__ import annotations

import dataclasses
from typing import Any

from agentkit.core.contracts.types import Usage
from agentkit.core.policies.prices import PriceTable

__all__ = ["client_options", "priced"]


def client_options(
    api_key: str | None, base_url: str | None, timeout: float | None, max_retries: int | None
) -> dict[str, Any]:
    """The SDK client keywords that were given; absent ones fall back to the SDK's own
    defaults and environment variables."""
    given = {
        "api_key": api_key,
        "base_url": base_url,
        "timeout": timeout,
        "max_retries": max_retries,
    }
    return {name: value for name, value in given.items() if value is not None}


def priced(usage: Usage, model: str, prices: PriceTable) -> Usage:
    """``usage`` with its cost filled in from ``prices``."""
    return dataclasses.replace(usage, cost_usd=prices.cost(model, usage))
