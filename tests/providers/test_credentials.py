"""Missing credentials are one line in the same shape for both providers, said when the
provider is built; a server address without a key needs no key."""

from __future__ import annotations

import pytest

from agentkit.core.contracts.errors import ProviderError
from agentkit.providers import OpenAILLM, llm_for

_KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "ANTHROPIC_PROFILE",
         "OPENAI_API_KEY", "OPENAI_BASE_URL")


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _KEYS:
        monkeypatch.delenv(name, raising=False)


def test_without_a_key_or_an_address_both_providers_refuse_in_one_shape() -> None:
    messages = []
    for spec in ("anthropic:claude-sonnet-4-6", "openai:gpt-4o-mini", "openai-chat:gpt-4o-mini"):
        with pytest.raises(ProviderError) as info:
            llm_for(spec)
        assert (info.value.kind, info.value.transient) == ("authentication", False)
        messages.append(str(info.value))
    assert messages == [
        "anthropic: no credentials: set ANTHROPIC_API_KEY or pass AnthropicLLM(api_key=...)",
        "openai: no credentials: set OPENAI_API_KEY or pass OpenAIResponsesLLM(api_key=...) "
        "(a local OpenAI-compatible server needs only its address: "
        "openai:MODEL@http://HOST/v1)",
        "openai: no credentials: set OPENAI_API_KEY or pass OpenAILLM(api_key=...) (a local "
        "OpenAI-compatible server needs only its address: openai:MODEL@http://HOST/v1)",
    ]


def test_a_server_address_without_a_key_sends_a_placeholder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert OpenAILLM(base_url="http://127.0.0.1:11434/v1").client.api_key == "no-key"
    assert llm_for("openai:llama3.1@http://127.0.0.1:11434/v1").client.api_key == "no-key"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
    assert OpenAILLM().client.api_key == "no-key"


def test_a_given_key_is_always_the_one_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    assert OpenAILLM(api_key="sk-given", base_url="http://127.0.0.1:1/v1").client.api_key == (
        "sk-given"
    )
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    assert OpenAILLM(base_url="http://127.0.0.1:1/v1").client.api_key == "sk-env"
