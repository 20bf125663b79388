"""llm_for: the provider a model spec names."""

from __future__ import annotations

from typing import Any

from agentkit.core.contracts.ports import LLM
from agentkit.providers.anthropic import AnthropicLLM
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
    (:class:`OpenAILLM`). Missing credentials are a
    :class:`~agentkit.core.contracts.errors.ProviderError` here, before any call.
    """
    parsed = parse_model_spec(spec)
    if parsed.base_url is not None:
        options.setdefault("base_url", parsed.base_url)
    if parsed.provider == "anthropic":
        anthropic = AnthropicLLM(**options)
        anthropic._check_credentials()  # now, in the same shape as OpenAILLM, not at a call
        return anthropic
    if parsed.provider == "openai-chat" or parsed.base_url is not None:
        return OpenAILLM(**options)
    return OpenAIResponsesLLM(**options)
