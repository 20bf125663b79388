"""The example model specs, in one place (public as ``agentkit.providers.spec.EXAMPLE_SPECS``).

A module of its own, with no imports, so the command line's help can show them without
loading the provider adapters.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["EXAMPLE_SPECS"]

EXAMPLE_SPECS: Mapping[str, str] = MappingProxyType({
    "anthropic": "anthropic:claude-sonnet-4-6",
    "openai": "openai:gpt-4o-mini",
    "local": "openai:llama3.1@http://localhost:11434/v1",
})
"""The model specs that help texts, error messages and the docs show as examples; a
test holds the docs and the code to these, so they cannot drift apart."""
