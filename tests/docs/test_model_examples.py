"""The example model ids in the docs, the help text and the error messages are the ones
``EXAMPLE_SPECS`` defines: one place, so they cannot drift apart."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from agentkit.core.policies import DEFAULT_PRICES
from agentkit.providers.spec import EXAMPLE_SPECS, parse_model_spec

ROOT = Path(__file__).resolve().parents[2]
# Any Claude or GPT model id (the Claude part of a Bedrock id is not one), and any
# provider:model spec.
_MODEL_ID = re.compile(r"\b(?<!anthropic\.)(?:claude|gpt)-[A-Za-z0-9.-]*[A-Za-z0-9]")
# A Bedrock model or inference-profile id: ``us.anthropic.claude-...-v1:0``.
_BEDROCK_ID = re.compile(r"\b(?:[a-z]+\.)?(?:anthropic|amazon|meta)\.[a-z0-9.-]*-v[0-9]+:[0-9]+")
_SPEC = re.compile(r"\b(?:anthropic|openai):[A-Za-z0-9][A-Za-z0-9.-]*(?:@https?://[^\s`'\")]+)?")


def _texts() -> dict[str, str]:
    paths = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    # The price table, the prompt-cache minimums and the model families list every model
    # they know, not examples.
    tables = ("prices.py", "_prompt_cache.py", "_model_families.py")
    paths += [p for p in sorted((ROOT / "agentkit").rglob("*.py")) if p.name not in tables]
    return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in paths}


def test_every_model_id_and_spec_in_docs_and_code_is_an_example_spec() -> None:
    examples = set(EXAMPLE_SPECS.values())
    example_ids = {parse_model_spec(spec).model for spec in examples}
    strays = {
        (name, found)
        for name, text in _texts().items()
        for found in _MODEL_ID.findall(text)
        if found not in example_ids
    } | {
        (name, found)
        for name, text in _texts().items()
        for found in _SPEC.findall(text)
        if found not in examples and parse_model_spec(found).model not in ("MODEL",)
    }
    assert strays == set()


def test_help_and_a_bad_spec_show_the_example_specs() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "agentkit", "demo", "--help"], capture_output=True, text=True,
        timeout=60, check=False,
    )
    assert " ".join(result.stdout.split()).count(
        "such as anthropic:claude-sonnet-4-6, openai:gpt-4o-mini or "
        "openai:llama3.1@http://localhost:11434/v1"
    ) == 1
    result = subprocess.run(
        [sys.executable, "-m", "agentkit", "demo", "--model", "claude"], capture_output=True,
        text=True, timeout=60, check=False,
    )
    assert result.stderr == (
        "agentkit demo: model 'claude' failed: model spec 'claude' is not "
        "PROVIDER:MODEL[@BASE_URL]; providers: ['anthropic', 'openai', 'openai-chat', 'google', "
        "'vertex', 'bedrock']; e.g. "
        "anthropic:claude-sonnet-4-6, openai:gpt-4o-mini, "
        "openai:llama3.1@http://localhost:11434/v1\n"
    )


def test_every_bedrock_id_in_docs_and_code_has_a_price() -> None:
    """Bedrock ids name real models: each one shown has its own row in the price table."""
    found = {(name, bedrock_id) for name, text in _texts().items()
             for bedrock_id in _BEDROCK_ID.findall(text)}
    assert {bedrock_id for _, bedrock_id in found} >= {
        "anthropic.claude-sonnet-4-5-20250929-v1:0"}  # the scan finds ids at all
    assert {(n, i) for n, i in found if DEFAULT_PRICES.price(i) is None} == set()
