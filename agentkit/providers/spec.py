"""Model specs: ``provider:model[@base_url]`` strings for configuration and the command line."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agentkit._examples import EXAMPLE_SPECS

__all__ = ["EXAMPLE_SPECS", "ModelSpec", "model_id", "parse_model_spec"]

Provider = Literal["anthropic", "openai", "openai-chat", "google", "vertex", "bedrock"]
_PROVIDERS: tuple[Provider, ...] = (
    "anthropic", "openai", "openai-chat", "google", "vertex", "bedrock"
)


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """A parsed model spec."""

    provider: Provider
    """``anthropic``, ``openai`` (the Responses API; Chat Completions when a ``base_url``
    is given, for every OpenAI-compatible server), ``openai-chat`` (Chat Completions),
    ``google`` (the Gemini API), ``vertex`` (Gemini on Vertex AI) or ``bedrock`` (Amazon
    Bedrock; the model is a Bedrock model or inference-profile id)."""
    model: str
    """The model id to pass as ``Agent(model=...)``."""
    base_url: str | None = None
    """A server address, for OpenAI-compatible servers (Ollama, vLLM, llama.cpp, LiteLLM)."""


def parse_model_spec(spec: str) -> ModelSpec:
    """Parse ``anthropic:claude-sonnet-4-6``, ``openai:gpt-4o-mini``,
    ``openai-chat:gpt-4o-mini``, ``openai:llama3.1@http://localhost:11434/v1``,
    ``google:gemini-2.5-flash``, ``vertex:gemini-2.5-pro`` or
    ``bedrock:anthropic.claude-sonnet-4-5-20250929-v1:0`` (only the first colon ends the
    provider: a Bedrock id keeps its own); a bad spec is a ``ValueError`` that says what
    is accepted."""
    provider, sep, rest = spec.partition(":")
    if not sep or provider not in _PROVIDERS or not rest:
        raise ValueError(
            f"model spec {spec!r} is not PROVIDER:MODEL[@BASE_URL]; providers: "
            f"{list(_PROVIDERS)}; e.g. {', '.join(EXAMPLE_SPECS.values())}"
        )
    model, at, base_url = rest.partition("@")
    if not model or (at and not base_url.startswith(("http://", "https://"))):
        raise ValueError(
            f"model spec {spec!r}: expected MODEL or MODEL@http(s)://HOST/PATH after "
            f"'{provider}:'"
        )
    return ModelSpec(provider, model, base_url or None)


def model_id(model: str) -> str:
    """The bare model id from ``Agent(model=...)``: a ``provider:`` prefix and an
    ``@base_url`` suffix, if present, are dropped."""
    provider, sep, rest = model.partition(":")
    if sep and provider in _PROVIDERS:
        model = rest
    return model.partition("@")[0]
