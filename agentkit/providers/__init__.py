"""Real models: Anthropic's Messages API, OpenAI-compatible Chat Completions and Amazon
Bedrock's Converse API.

Each provider needs its SDK (``pip install "agentkit-framework[anthropic]"``,
``[openai]`` or ``[bedrock]``), imported only when a provider is built.
"""

from agentkit.providers.anthropic import AnthropicLLM
from agentkit.providers.bedrock import BedrockLLM
from agentkit.providers.factory import llm_for
from agentkit.providers.openai import OpenAILLM
from agentkit.providers.spec import ModelSpec, parse_model_spec

__all__ = ["AnthropicLLM", "BedrockLLM", "ModelSpec", "OpenAILLM", "llm_for", "parse_model_spec"]
