"""Model prices, for turning token usage into money.

Prices are US dollars per million tokens. A row prices its exact model id, that id's
dated snapshots (``-20250514``, ``-2024-07-18``) and its ``-latest`` alias, and nothing
else: ``o3-pro`` is not ``o3``, whose price is a tenth of it, so matching by prefix
would let a money ceiling admit ten times its sum. They are list prices as published
by each provider when this table was written; providers change them and release new
models, so pass your own ``PriceTable`` to ``meter()`` when money matters, and check it
against your provider's price page. A model missing from the table is refused under a
money ceiling (``UnpricedModel``); without one its calls cost 0 and their ``Usage``
names it in ``unpriced_models``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal

from agentkit.core.contracts.types import Usage

__all__ = ["DEFAULT_PRICES", "CacheTTL", "ModelPrice", "PriceTable"]


CacheTTL = Literal["5m", "1h"]
"""How long a provider keeps a prompt-cache entry: Anthropic's two lifetimes."""


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """US dollars per million tokens of each kind."""

    input: float
    output: float
    cache_read: float | None = None
    """Defaults to the input price."""
    cache_write: float | None = None
    """A write to a 5-minute cache entry; defaults to the input price."""
    cache_write_1h: float | None = None
    """A write to a 1-hour cache entry; defaults to ``cache_write``."""

    def cost(self, usage: Usage, *, cache_ttl: CacheTTL = "5m") -> float:
        """The price of ``usage`` in US dollars, its cache writes at ``cache_ttl``'s rate
        (reasoning tokens at the output price, as every provider bills them)."""
        read = self.input if self.cache_read is None else self.cache_read
        write = self.input if self.cache_write is None else self.cache_write
        if cache_ttl == "1h" and self.cache_write_1h is not None:
            write = self.cache_write_1h
        return (
            usage.input_tokens * self.input
            + (usage.output_tokens + usage.reasoning_tokens) * self.output
            + usage.cache_read_tokens * read
            + usage.cache_write_tokens * write
        ) / 1_000_000


def _anthropic(input_: float, output: float) -> ModelPrice:
    # Anthropic bills cache reads at a tenth of input, cache writes at 1.25x input for a
    # 5-minute entry and 2x for a 1-hour one (the same multipliers for every model).
    return ModelPrice(
        input_, output, cache_read=input_ * 0.1, cache_write=input_ * 1.25,
        cache_write_1h=input_ * 2,
    )


def _openai(input_: float, output: float, cached: float) -> ModelPrice:
    # OpenAI's prefix cache is automatic: writes cost nothing extra, hits the cached rate.
    return ModelPrice(input_, output, cache_read=cached, cache_write=input_)


def _gemini(input_: float, output: float, cached: float) -> ModelPrice:
    # Gemini's implicit cache is automatic: nothing is written at a price, hits are billed
    # at the cached rate (the cache's hourly storage fee is for explicit caches only).
    # Pro models' rates double past 200k prompt tokens; these rows hold the <=200k tier.
    return ModelPrice(input_, output, cache_read=cached, cache_write=input_)


_PROVIDER_PREFIX = re.compile(r"[a-z][a-z0-9-]*")
"""What names a provider in ``provider:model`` (``anthropic``, ``openai-chat``, ``bedrock``)."""

_BEDROCK_GEOGRAPHIES = ("us", "eu", "apac", "jp", "au")
"""The prefixes of Bedrock's geographic cross-region inference profiles."""


def _bedrock(model: str, regional: ModelPrice, global_: ModelPrice) -> dict[str, ModelPrice]:
    # A Bedrock model id, its geographic inference profiles (``us.`` + id) at the
    # in-region price, and its global profile (``global.`` + id) at the global price:
    # each is its own exact row, so no id is priced by resemblance to another.
    rows = {model: regional, f"global.{model}": global_}
    rows.update({f"{geography}.{model}": regional for geography in _BEDROCK_GEOGRAPHIES})
    return rows


_SNAPSHOT = re.compile(r"-(?:[0-9]{8}|[0-9]{4}-[0-9]{2}-[0-9]{2}|latest)$")
"""The suffixes that name a version of one model: a dated snapshot or the latest one."""


class PriceTable:
    """Model id to :class:`ModelPrice`; a row also prices the id's dated snapshots
    (``-YYYYMMDD``, ``-YYYY-MM-DD``) and ``-latest``, and no other id."""

    __slots__ = ("_prices",)

    def __init__(self, prices: Mapping[str, ModelPrice]) -> None:
        self._prices = dict(prices)

    def price(self, model: str) -> ModelPrice | None:
        """The price of ``model`` (a provider prefix such as ``anthropic:`` is ignored),
        or None when no row is for it."""
        # Only a word before the colon is a provider prefix: a Bedrock id
        # (``anthropic.claude-sonnet-4-5-20250929-v1:0``) has its own colon, after a dot.
        prefix, colon, rest = model.partition(":")
        name = rest if colon and _PROVIDER_PREFIX.fullmatch(prefix) else model
        found = self._prices.get(name)
        if found is None:
            base = _SNAPSHOT.sub("", name)
            if base != name:
                found = self._prices.get(base)
        return found

    def cost(self, model: str, usage: Usage, *, cache_ttl: CacheTTL = "5m") -> float:
        """The price of ``usage`` on ``model``; 0 for a model the table does not know
        (see :meth:`priced` for a usage that says so)."""
        price = self.price(model)
        return 0.0 if price is None else price.cost(usage, cache_ttl=cache_ttl)

    def priced(self, model: str, usage: Usage, *, cache_ttl: CacheTTL = "5m") -> Usage:
        """``usage`` with its ``cost_usd`` set from this table (cache writes at
        ``cache_ttl``'s rate); for a model without a price, 0 and ``model`` named in
        ``unpriced_models``."""
        price = self.price(model)
        if price is None:
            return replace(usage, cost_usd=0.0, unpriced_models=(model,))
        return replace(usage, cost_usd=price.cost(usage, cache_ttl=cache_ttl))

    def with_prices(self, prices: Mapping[str, ModelPrice]) -> PriceTable:
        """This table with ``prices`` added or overriding."""
        return PriceTable({**self._prices, **prices})


# Each row: list prices in US dollars per million tokens, with where they were read and
# when. Checked on 2026-11-30 without access to the providers' sites: the only sources
# were stored copies of public pages, so a row marked "third-party" was read from a page
# quoting the provider, not from the provider. Anthropic rows share the multipliers in
# _anthropic(), which Anthropic's pricing page states for every model (stored copy of
# docs.anthropic.com/en/docs/about-claude/pricing; the per-model overview pages on
# platform.claude.com list the same 5m/1h/read figures for Opus 4.5, Opus 5, Opus 5.5).
# Rows for o3-mini, o3-pro, claude-opus-4-1 and claude-opus-4-7 were added on 2026-12-01,
# when prefix matching (which priced them as o3 and Opus 4) ended, from the same kind of
# stored pages. gpt-5-pro has no row: no stored page gave both of its prices.
DEFAULT_PRICES = PriceTable(
    {
        "fake": ModelPrice(0.0, 0.0),  # FakeLLM, for tests and the scripted demo
        # Anthropic
        "claude-opus-4-7": _anthropic(5.0, 25.0),  # third-party (allthings.how, 2026-04-16)
        "claude-opus-5-5": _anthropic(4.0, 20.0),  # platform.claude.com models/opus-5-5 (2026)
        "claude-opus-5": _anthropic(5.0, 25.0),  # platform.claude.com models/opus-5 (2026)
        "claude-sonnet-5": _anthropic(2.0, 10.0),  # platform.claude.com lineup table (2026)
        "claude-opus-4-6": _anthropic(5.0, 25.0),  # third-party (deploybase.ai, 2026-03-21)
        "claude-opus-4-5": _anthropic(5.0, 25.0),  # platform.claude.com models/opus-4-5
        "claude-opus-4": _anthropic(15.0, 75.0),  # docs.anthropic.com pricing (4, 4.1)
        "claude-opus-4-1": _anthropic(15.0, 75.0),  # docs.anthropic.com pricing (4, 4.1)
        # Anthropic's documented aliases of the dated Claude 4 ids (models overview):
        # each is the model of the row above it, so it takes that row's price.
        "claude-opus-4-0": _anthropic(15.0, 75.0),  # alias of claude-opus-4-20250514
        "claude-sonnet-4-6": _anthropic(3.0, 15.0),  # third-party (apidog.com, 2026-02-18)
        "claude-sonnet-4-5": _anthropic(3.0, 15.0),  # third-party (electronhub.ai docs)
        "claude-sonnet-4": _anthropic(3.0, 15.0),  # docs.anthropic.com pricing
        "claude-sonnet-4-0": _anthropic(3.0, 15.0),  # alias of claude-sonnet-4-20250514
        "claude-3-7-sonnet": _anthropic(3.0, 15.0),  # docs.anthropic.com pricing
        "claude-3-5-sonnet": _anthropic(3.0, 15.0),  # docs.anthropic.com pricing
        "claude-haiku-4-5": _anthropic(1.0, 5.0),  # platform.claude.com models/haiku-4-5
        "claude-haiku-4": _anthropic(1.0, 5.0),  # as Haiku 4.5, the only Haiku 4 model
        "claude-3-5-haiku": _anthropic(0.8, 4.0),  # docs.anthropic.com pricing
        "claude-3-haiku": ModelPrice(  # docs.anthropic.com pricing: its cache rates are
            0.25, 1.25, cache_read=0.03, cache_write=0.30, cache_write_1h=0.50,  # rounded
        ),
        # OpenAI: input, output, cached input
        "gpt-4o": _openai(2.5, 10.0, 1.25),  # kept from the earlier table, not re-checked
        "gpt-4o-mini": _openai(0.15, 0.6, 0.075),  # kept from the earlier table, not re-checked
        "gpt-4.1": _openai(2.0, 8.0, 0.5),  # third-party (github/docs Copilot price table)
        "gpt-4.1-mini": _openai(0.4, 1.6, 0.1),  # kept from the earlier table, not re-checked
        "gpt-4.1-nano": _openai(0.1, 0.4, 0.025),  # kept from the earlier table, not re-checked
        "gpt-5": _openai(1.25, 10.0, 0.125),  # kept from the earlier table, not re-checked
        "gpt-5-mini": _openai(0.25, 2.0, 0.025),  # third-party (github/docs Copilot table)
        "gpt-5-nano": _openai(0.05, 0.4, 0.005),  # kept from the earlier table, not re-checked
        "gpt-5.1": _openai(1.25, 10.0, 0.125),  # third-party (koishiai.com, 2025-11)
        "gpt-5.2": _openai(1.75, 14.0, 0.175),  # third-party (github/docs Copilot table)
        "gpt-5.4": _openai(2.5, 15.0, 0.25),  # third-party (adk-model pricing.rs, 2026-03)
        "gpt-5.4-mini": _openai(0.75, 4.5, 0.075),  # third-party (adk-model, 2026-03)
        "o3": _openai(2.0, 8.0, 0.5),  # kept from the earlier table, not re-checked
        "o3-mini": _openai(1.1, 4.4, 0.55),  # third-party (llmcalc.app, 2026-05-06)
        # o3-pro lists no cached-input rate: cached input is billed as input.
        "o3-pro": _openai(20.0, 80.0, 20.0),  # third-party (modelpedia.dev, 2026-03-21)
        "o4-mini": _openai(1.1, 4.4, 0.275),  # kept from the earlier table, not re-checked
        # Google Gemini (the Gemini API; Vertex AI lists the same rates): input, output,
        # cached input. Added on 2026-12-01 from stored third-party pages quoting
        # ai.google.dev/pricing; the cached rate is a tenth of input ("90% discount").
        "gemini-2.5-pro": _gemini(1.25, 10.0, 0.125),  # third-party (deploybase.ai, 2026-01)
        "gemini-2.5-flash": _gemini(0.30, 2.50, 0.03),  # third-party (deploybase.ai, 2026-01)
        "gemini-2.5-flash-lite": _gemini(0.10, 0.40, 0.01),  # third-party (morphllm.com)
        "gemini-3-flash": _gemini(0.50, 3.0, 0.05),  # third-party (morphllm.com)
        "gemini-3.1-pro": _gemini(2.0, 12.0, 0.20),  # third-party (morphllm.com)
        # The ids the Gemini API serves Gemini 3 under, added on 2026-12-01 from stored
        # third-party pages quoting ai.google.dev/gemini-api/docs/pricing.
        "gemini-3-flash-preview": _gemini(0.50, 3.0, 0.05),  # third-party (factquire.com)
        # <=200k prompt tokens; no cached rate on the page: a tenth of input, as above
        "gemini-3-pro-preview": _gemini(2.0, 12.0, 0.20),  # third-party (aifreeapi.com)
        # Amazon Bedrock, read on 2026-12-01 from third-party pages quoting AWS's pricing
        # (clauder-navi.com/en/bedrock-claude-cost, sam.mehdi.consulting "Saving money on
        # Bedrock is hard"): Claude on Bedrock costs Anthropic's list price through the
        # global profile; from Sonnet 4.5, Haiku 4.5 and Opus 4.5 on, in-region and
        # geographic inference cost 10% more. Cache writes 1.25x, reads 0.1x, as Anthropic.
        **_bedrock("anthropic.claude-sonnet-4-5-20250929-v1:0",
                   _anthropic(3.3, 16.5), _anthropic(3.0, 15.0)),
        **_bedrock("anthropic.claude-haiku-4-5-20251001-v1:0",
                   _anthropic(1.1, 5.5), _anthropic(1.0, 5.0)),
        **_bedrock("anthropic.claude-opus-4-5-20251101-v1:0",
                   _anthropic(5.5, 27.5), _anthropic(5.0, 25.0)),
        # Before Sonnet 4.5 there is no regional premium.
        **_bedrock("anthropic.claude-sonnet-4-20250514-v1:0",
                   _anthropic(3.0, 15.0), _anthropic(3.0, 15.0)),
    }
)
