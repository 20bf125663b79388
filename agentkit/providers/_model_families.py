"""Which models can do what, by model-id prefix: the tables the providers check settings
against before sending (like the price table, a list of every family known, not
examples)."""

from __future__ import annotations

__all__ = [
    "ANTHROPIC_NO_STRUCTURED_OUTPUT",
    "ANTHROPIC_NO_THINKING",
    "OPENAI_NO_REASONING",
    "OPENAI_REASONING",
]

ANTHROPIC_NO_THINKING = ("claude-3-5", "claude-3-haiku", "claude-3-opus", "claude-3-sonnet",
                         "claude-2", "claude-instant")
"""Claude models without extended thinking (it arrived with Claude 3.7 Sonnet)."""

ANTHROPIC_NO_STRUCTURED_OUTPUT = ("claude-3", "claude-2", "claude-instant",
                                  "claude-sonnet-4-0", "claude-sonnet-4-2", "claude-opus-4-0",
                                  "claude-opus-4-2")
"""Claude models without structured outputs (they came with Sonnet 4.5, Opus 4.1 and
Haiku 4.5)."""

OPENAI_REASONING = ("o1", "o3", "o4", "gpt-5", "codex")
"""OpenAI models that reason whether asked or not: their reasoning comes back encrypted,
to be sent back, even when ``ModelSettings.reasoning`` is unset."""

OPENAI_NO_REASONING = ("gpt-4", "gpt-3.5", "chatgpt-4o")
"""OpenAI models with no reasoning: ``ModelSettings.reasoning`` is refused for them."""
