"""What both provider adapters share: SDK client options, retries and priced usage."""

from __future__ import annotations

from typing import Any

from agentkit.core.contracts.types import Usage
from agentkit.core.policies import under_retry
from agentkit.core.policies.prices import CacheTTL, PriceTable

__all__ = ["SdkClients", "client_options", "priced"]


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


def priced(usage: Usage, model: str, prices: PriceTable, *, cache_ttl: CacheTTL = "5m") -> Usage:
    """``usage`` with its cost filled in from ``prices`` (cache writes at ``cache_ttl``'s
    rate), or ``model`` named in ``unpriced_models`` when it has no price."""
    return prices.priced(model, usage, cache_ttl=cache_ttl)


class SdkClients:
    """The SDK client a provider built, and its single-try twin for calls ``retry()`` retries.

    Unless ``max_retries=`` was given, the SDK's own retries are off inside an agentkit
    ``retry()`` layer (``under_retry()``), so one attempt there is one request; outside
    one, the SDK's defaults apply. An explicit ``max_retries=``, or a client passed in
    ready-made, is used as it is everywhere.
    """

    __slots__ = ("client", "single_try")

    def __init__(self, client: Any, *, retries_chosen: bool) -> None:
        self.client = client
        self.single_try = None if retries_chosen else client.with_options(max_retries=0)

    def for_call(self) -> Any:
        """The client for the call in progress."""
        if self.single_try is not None and under_retry():
            return self.single_try
        return self.client
