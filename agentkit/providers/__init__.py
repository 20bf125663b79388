"""Real models: Anthropic's Messages API, OpenAI's Responses API and (OpenAI-compatible)
Chat Completions.

Each provider needs its SDK (``pip install "agentkit-framework[anthropic]"`` or
``[openai]``), imported only when a provider is built.
"""

from agentkit.providers.anthropic import AnthropicLLM
from agentkit.providers.factory import llm_for
from agentkit.providers.fallback import FallbackLLM
from agentkit.providers.openai import OpenAILLM
from agentkit.providers.openai_responses import OpenAIResponsesLLM
from agentkit.providers.spec import ModelSpec, parse_model_spec

__all__ = [
    "AnthropicLLM",
    "FallbackLLM",
    "ModelSpec",
    "OpenAILLM",
    "OpenAIResponsesLLM",
    "llm_for",
    "parse_model_spec",
]
