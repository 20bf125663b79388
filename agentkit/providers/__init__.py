"""Real models: Anthropic's Messages API, OpenAI's Responses API, (OpenAI-compatible)
Chat Completions, Gemini (the Gemini API and Vertex AI) and Amazon Bedrock's Converse API.

Each provider needs its SDK (``pip install "agentkit-framework[anthropic]"``,
``[openai]``, ``[google]`` or ``[bedrock]``), imported only when a provider is built.
"""

from agentkit.core.contracts.errors import UnservedModel
from agentkit.providers.anthropic import AnthropicLLM
from agentkit.providers.bedrock import BedrockLLM
from agentkit.providers.factory import llm_for
from agentkit.providers.fallback import FallbackLLM
from agentkit.providers.gemini import GeminiLLM
from agentkit.providers.openai import OpenAILLM
from agentkit.providers.openai_responses import OpenAIResponsesLLM
from agentkit.providers.routing import route_models
from agentkit.providers.spec import ModelSpec, parse_model_spec

__all__ = [
    "AnthropicLLM",
    "BedrockLLM",
    "FallbackLLM",
    "GeminiLLM",
    "ModelSpec",
    "OpenAILLM",
    "OpenAIResponsesLLM",
    "UnservedModel",
    "llm_for",
    "parse_model_spec",
    "route_models",
]
