"""Model prices, for turning token usage into money.

Prices are US dollars per million tokens, matched by the longest model-id prefix.
They are list prices as published by each provider when this table was written;
providers change them and release new models, so pass your own ``PriceTable`` to
``meter()`` when money matters, and check it against your provider's price page. A
model missing from the table is refused under a money ceiling (``UnpricedModel``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from agentkit.core.contracts.types import Usage

__all__ = ["DEFAULT_PRICES", "ModelPrice", "PriceTable"]


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """US dollars per million tokens of each kind."""

    input: float
    output: float
    cache_read: float | None = None
    """Defaults to the input price."""
    cache_write: float | None = None
    """Defaults to the input price."""

    def cost(self, usage: Usage) -> float:
        """The price of ``usage`` in US dollars."""
        read = self.input if self.cache_read is None else self.cache_read
        write = self.input if self.cache_write is None else self.cache_write
        return (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_read_tokens * read
            + usage.cache_write_tokens * write
        ) / 1_000_000


def _anthropic(input_: float, output: float) -> ModelPrice:
    # Anthropic bills cache reads at a tenth of input and 5-minute cache writes at 1.25x.
    return ModelPrice(input_, output, cache_read=input_ * 0.1, cache_write=input_ * 1.25)


def _openai(input_: float, output: float, cached: float) -> ModelPrice:
    return ModelPrice(input_, output, cache_read=cached, cache_write=input_)


class PriceTable:
    """Model id prefix to :class:`ModelPrice`; the longest matching prefix wins."""

    __slots__ = ("_prices",)

    def __init__(self, prices: Mapping[str, ModelPrice]) -> None:
        self._prices = dict(sorted(prices.items(), key=lambda item: -len(item[0])))

    def price(self, model: str) -> ModelPrice | None:
        """The price of ``model`` (a provider prefix such as ``anthropic:`` is ignored)."""
        name = model.split(":", 1)[1] if ":" in model else model
        for prefix, price in self._prices.items():
            if name.startswith(prefix):
                return price
        return None

    def cost(self, model: str, usage: Usage) -> float:
        """The price of ``usage`` on ``model``; 0 for a model the table does not know."""
        price = self.price(model)
        return 0.0 if price is None else price.cost(usage)

    def with_prices(self, prices: Mapping[str, ModelPrice]) -> PriceTable:
        """This table with ``prices`` added or overriding."""
        return PriceTable({**self._prices, **prices})


DEFAULT_PRICES = PriceTable(
    {
        "fake": ModelPrice(0.0, 0.0),  # FakeLLM, for tests and the scripted demo
        "claude-opus-4": _anthropic(15.0, 75.0),
        "claude-opus-4-5": _anthropic(5.0, 25.0),
        "claude-sonnet-4": _anthropic(3.0, 15.0),
        "claude-3-7-sonnet": _anthropic(3.0, 15.0),
        "claude-3-5-sonnet": _anthropic(3.0, 15.0),
        "claude-haiku-4": _anthropic(1.0, 5.0),
        "claude-3-5-haiku": _anthropic(0.8, 4.0),
        "claude-3-haiku": _anthropic(0.25, 1.25),
        "gpt-4o": _openai(2.5, 10.0, 1.25),
        "gpt-4o-mini": _openai(0.15, 0.6, 0.075),
        "gpt-4.1": _openai(2.0, 8.0, 0.5),
        "gpt-4.1-mini": _openai(0.4, 1.6, 0.1),
        "gpt-4.1-nano": _openai(0.1, 0.4, 0.025),
        "gpt-5": _openai(1.25, 10.0, 0.125),
        "gpt-5-mini": _openai(0.25, 2.0, 0.025),
        "gpt-5-nano": _openai(0.05, 0.4, 0.005),
        "o3": _openai(2.0, 8.0, 0.5),
        "o4-mini": _openai(1.1, 4.4, 0.275),
    }
)
