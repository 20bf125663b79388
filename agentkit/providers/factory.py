"""llm_for: the provider a model spec names."""

from __future__ import annotations

from typing import Any

from agentkit.core.contracts.ports import LLM
from agentkit.providers.anthropic import AnthropicLLM
from agentkit.providers.bedrock import BedrockLLM
from agentkit.providers.openai import OpenAILLM
from agentkit.providers.openai_responses import OpenAIResponsesLLM
from agentkit.providers.spec import parse_model_spec

__all__ = ["llm_for"]


def llm_for(spec: str, **options: Any) -> LLM:
    """The provider a spec names, built with ``options`` (``api_key=``, ``timeout=``, ...).

    The model itself is chosen per agent (``Agent(model=parse_model_spec(spec).model)``);
    a spec's ``@base_url`` becomes the provider's ``base_url``. ``openai:MODEL`` is the
    Responses API (:class:`OpenAIResponsesLLM`, also with ``base_url=`` or
    ``OPENAI_BASE_URL``, for proxies of OpenAI); ``openai-chat:MODEL`` and every
    ``@BASE_URL`` spec (Ollama, vLLM, llama.cpp, LiteLLM) are Chat Completions
    (:class:`OpenAILLM`); for Bedrock the ``@base_url`` is its ``endpoint_url``. Missing
    credentials (and, for Bedrock, a missing region) are a
    :class:`~agentkit.core.contracts.errors.ProviderError` here, before any call.
    """
    parsed = parse_model_spec(spec)
    if parsed.provider == "bedrock":
        if parsed.base_url is not None:
            options.setdefault("endpoint_url", parsed.base_url)
        bedrock = BedrockLLM(**options)
        bedrock._check_credentials()
        return bedrock
    if parsed.base_url is not None:
        options.setdefault("base_url", parsed.base_url)
    if parsed.provider in ("google", "vertex"):
        from agentkit.providers.gemini import GeminiLLM  # its SDK loads only when asked for

        return GeminiLLM(vertexai=parsed.provider == "vertex", **options)
    if parsed.provider == "anthropic":
        anthropic = AnthropicLLM(**options)
        anthropic._check_credentials()  # now, in the same shape as OpenAILLM, not at a call
        return anthropic
    if parsed.provider == "openai-chat" or parsed.base_url is not None:
        return OpenAILLM(**options)
    return OpenAIResponsesLLM(**options)
