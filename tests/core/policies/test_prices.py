"""The price table: cache reads and writes priced as each provider bills them, and a price
for every model id the docs and the demo mention."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agentkit.core.contracts.types import Usage
from agentkit.core.policies import DEFAULT_PRICES, ModelPrice, PriceTable
from agentkit.providers.spec import EXAMPLE_SPECS, parse_model_spec

ROOT = Path(__file__).resolve().parents[3]
MODEL_ID = re.compile(
    # A Bedrock id (``us.anthropic.claude-...-v1:0``) first, whole, so that its Claude
    # part is not taken for an Anthropic id.
    r"\b((?:(?:us|eu|apac|global)\.)?(?:anthropic|amazon)\.[a-z0-9.-]*-v[0-9]+:[0-9]+"
    r"|claude-[a-z0-9-]*[a-z0-9]|gpt-[0-9][a-z0-9.-]*[a-z0-9]|o[1-9](?:-mini)?)\b"
)


def mentioned_model_ids() -> set[str]:
    sources = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md",
               ROOT / "agentkit" / "demo.py", *sorted((ROOT / "agentkit" / "cli").glob("*.py"))]
    found: set[str] = set()
    for path in sources:
        found.update(MODEL_ID.findall(path.read_text(encoding="utf-8")))
    return found


def test_every_model_id_the_docs_and_the_demo_mention_has_a_price() -> None:
    mentioned = mentioned_model_ids()
    assert {"claude-sonnet-4-6", "gpt-4o-mini"} <= mentioned  # the scan finds ids at all
    assert sorted(m for m in mentioned if DEFAULT_PRICES.price(m) is None) == []


def test_every_hosted_example_spec_has_a_price() -> None:
    hosted = [parse_model_spec(spec) for name, spec in EXAMPLE_SPECS.items() if name != "local"]
    assert [s.model for s in hosted if DEFAULT_PRICES.price(s.model) is None] == []


def test_anthropic_cache_writes_cost_more_by_lifetime_and_reads_a_tenth() -> None:
    usage = Usage(input_tokens=1_000_000, cache_read_tokens=1_000_000,
                  cache_write_tokens=1_000_000, output_tokens=1_000_000)
    # Sonnet: $3 input, $15 output, reads $0.30, 5m writes $3.75, 1h writes $6.
    assert DEFAULT_PRICES.cost("claude-sonnet-4-6", usage) == pytest.approx(3 + 15 + 0.3 + 3.75)
    assert DEFAULT_PRICES.cost("claude-sonnet-4-6", usage, cache_ttl="1h") == pytest.approx(
        3 + 15 + 0.3 + 6
    )
    # Opus 4.5 is priced on its own row, not as the older, dearer Opus 4.
    assert DEFAULT_PRICES.cost("claude-opus-4-5-20251101", usage) == pytest.approx(
        5 + 25 + 0.5 + 6.25
    )
    assert DEFAULT_PRICES.cost("claude-opus-4-1", usage) == pytest.approx(15 + 75 + 1.5 + 18.75)


def test_openai_cached_input_has_its_own_price_and_writes_cost_input() -> None:
    usage = Usage(input_tokens=1_000_000, cache_read_tokens=1_000_000,
                  cache_write_tokens=1_000_000)
    assert DEFAULT_PRICES.cost("gpt-4o-mini", usage) == pytest.approx(0.15 + 0.075 + 0.15)
    assert DEFAULT_PRICES.cost("gpt-4o-mini", usage, cache_ttl="1h") == pytest.approx(
        0.15 + 0.075 + 0.15
    )


def test_a_price_without_a_1h_write_rate_uses_its_5m_rate() -> None:
    table = PriceTable({"m": ModelPrice(1.0, 2.0, cache_read=0.5, cache_write=1.5)})
    usage = Usage(cache_write_tokens=1_000_000)
    assert table.cost("m", usage, cache_ttl="1h") == pytest.approx(1.5)


def test_a_row_prices_its_id_its_dated_snapshots_and_latest_only() -> None:
    table = PriceTable({"o3": ModelPrice(2.0, 8.0), "claude-opus-4": ModelPrice(15.0, 75.0)})
    o3, opus = table.price("o3"), table.price("claude-opus-4")
    assert [table.price(m) for m in (
        "o3", "openai:o3", "o3-20250416", "o3-2025-04-16", "o3-latest",
        "claude-opus-4-20250514", "anthropic:claude-opus-4-latest",
    )] == [o3, o3, o3, o3, o3, opus, opus]
    # A longer id is another model, not a version of this one.
    assert [table.price(m) for m in (
        "o3-pro", "o3-mini", "o3-pro-2025-06-10", "o3-2025-4-16", "o3-latest-20250416",
        "claude-opus-4-7", "claude-opus-4-1-20250805", "o3x",
    )] == [None] * 8


def test_variant_models_are_priced_on_their_own_rows_or_not_at_all() -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000)
    assert DEFAULT_PRICES.cost("o3", usage) == pytest.approx(2 + 8)
    assert DEFAULT_PRICES.cost("o3-pro", usage) == pytest.approx(20 + 80)
    assert DEFAULT_PRICES.cost("o3-mini", usage) == pytest.approx(1.1 + 4.4)
    assert DEFAULT_PRICES.cost("claude-opus-4-7", usage) == pytest.approx(5 + 25)
    assert DEFAULT_PRICES.cost("claude-opus-4-20250514", usage) == pytest.approx(15 + 75)
    assert DEFAULT_PRICES.price("gpt-5-pro") is None
    assert DEFAULT_PRICES.price("gpt-5-pro-2025-10-06") is None


def test_a_usage_priced_without_a_price_names_its_model() -> None:
    usage = Usage(input_tokens=10, output_tokens=5, requests=1)
    assert DEFAULT_PRICES.priced("gpt-5-pro", usage) == Usage(
        input_tokens=10, output_tokens=5, requests=1, unpriced_models=("gpt-5-pro",))
    assert DEFAULT_PRICES.priced("o3", usage) == Usage(
        input_tokens=10, output_tokens=5, requests=1, cost_usd=pytest.approx(6e-05))


def test_a_bedrock_id_is_priced_on_its_own_row_and_its_version_suffix_is_kept() -> None:
    """The ``:0`` of a Bedrock id is part of the id, not a ``provider:`` prefix."""
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000,
                  cache_read_tokens=1_000_000, cache_write_tokens=1_000_000)
    # Global cross-region inference is Anthropic's list price; in-region and geographic
    # (us., eu., apac.) inference of Sonnet 4.5 cost 10% more.
    assert DEFAULT_PRICES.cost("global.anthropic.claude-sonnet-4-5-20250929-v1:0", usage) == (
        pytest.approx(3 + 15 + 0.3 + 3.75)
    )
    regional = pytest.approx(3.3 + 16.5 + 0.33 + 4.125)
    for model in ("anthropic.claude-sonnet-4-5-20250929-v1:0",
                  "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
                  "bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0"):
        assert DEFAULT_PRICES.cost(model, usage) == regional, model
    assert DEFAULT_PRICES.price("anthropic.claude-sonnet-4-5-20250929-v1") is None
    assert DEFAULT_PRICES.price("anthropic.claude-sonnet-4-5-20250929-v2:0") is None
    assert DEFAULT_PRICES.price("0") is None


def test_gemini_3_preview_ids_the_gemini_api_serves_are_priced() -> None:
    """Gemini 3 is served under ``-preview`` ids; a row prices only its exact id."""
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000, cache_read_tokens=1_000_000)
    assert DEFAULT_PRICES.cost("gemini-3-flash-preview", usage) == pytest.approx(0.5 + 3.0 + 0.05)
    assert DEFAULT_PRICES.cost("google:gemini-3-pro-preview", usage) == pytest.approx(
        2.0 + 12.0 + 0.2)
