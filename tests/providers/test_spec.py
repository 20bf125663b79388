"""Model specs and llm_for."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agentkit.providers import AnthropicLLM, ModelSpec, OpenAILLM, llm_for, parse_model_spec
from agentkit.providers.spec import model_id


@pytest.mark.parametrize(
    ("spec", "parsed"),
    [
        ("anthropic:claude-sonnet-4-6", ModelSpec("anthropic", "claude-sonnet-4-6")),
        ("openai:gpt-4o-mini", ModelSpec("openai", "gpt-4o-mini")),
        ("openai-chat:gpt-4o-mini", ModelSpec("openai-chat", "gpt-4o-mini")),
        ("openai:llama3.1@http://localhost:11434/v1",
         ModelSpec("openai", "llama3.1", "http://localhost:11434/v1")),
        ("google:gemini-2.5-flash", ModelSpec("google", "gemini-2.5-flash")),
        ("vertex:gemini-2.5-pro", ModelSpec("vertex", "gemini-2.5-pro")),
    ],
)
def test_specs_parse(spec: str, parsed: ModelSpec) -> None:
    assert parse_model_spec(spec) == parsed


@pytest.mark.parametrize(
    "spec", ["claude", "mistral:large", "openai:", "openai:llama@localhost:11434", ":x"]
)
def test_bad_specs_say_what_is_accepted(spec: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_model_spec(spec)
    assert repr(spec) in str(info.value)


def test_llm_for_builds_the_named_provider_with_options() -> None:
    anthropic = llm_for("anthropic:claude-sonnet-4-6", api_key="k", timeout=3, max_retries=0)
    assert isinstance(anthropic, AnthropicLLM)
    assert anthropic.client.max_retries == 0
    local = llm_for("openai:llama3.1@http://127.0.0.1:11434/v1", api_key="unused")
    assert isinstance(local, OpenAILLM)
    assert str(local.client.base_url).rstrip("/") == "http://127.0.0.1:11434/v1"


def test_environment_variables_work_as_the_sdks_define_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9999/v1")
    provider = OpenAILLM()
    assert provider.client.api_key == "sk-from-env"
    assert str(provider.client.base_url).rstrip("/") == "http://127.0.0.1:9999/v1"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
    assert AnthropicLLM().client.api_key == "sk-ant-from-env"


def test_model_ids_drop_provider_prefix_and_base_url() -> None:
    assert model_id("anthropic:claude-sonnet-4-6") == "claude-sonnet-4-6"
    assert model_id("openai:llama3.1@http://h/v1") == "llama3.1"
    assert model_id("gpt-4o") == "gpt-4o"
    assert model_id("openai-chat:gpt-4o") == "gpt-4o"
    assert model_id("google:gemini-2.5-flash") == "gemini-2.5-flash"
    assert model_id("vertex:gemini-2.5-pro") == "gemini-2.5-pro"


@pytest.mark.parametrize(("cls", "extra"), [("AnthropicLLM", "anthropic"), ("OpenAILLM", "openai")])
def test_a_missing_sdk_names_the_extra_to_install(cls: str, extra: str) -> None:
    code = (
        f"import sys; sys.modules[{extra!r}] = None\n"
        f"from agentkit.providers import {cls}\n"
        f"try:\n    {cls}()\nexcept ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert f'pip install "agentkit-framework[{extra}]"' in out.stdout


def test_a_missing_google_sdk_names_the_google_extra() -> None:
    code = (
        "import sys; sys.modules['google.genai'] = None\n"
        "from agentkit.providers import GeminiLLM\n"
        "try:\n    GeminiLLM(api_key='k')\nexcept ImportError as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout == (
        'the Gemini provider needs the google-genai package: pip install '
        '"agentkit-framework[google]"\n'
    )
