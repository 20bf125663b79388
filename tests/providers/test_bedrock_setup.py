"""Setting BedrockLLM up: region and credentials from the AWS chain, specs, llm_for, the
demo's one line when something is missing, and one request per retry() attempt."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from agentkit.agents import Agent
from agentkit.core.contracts.errors import ProviderError
from agentkit.core.contracts.types import ChatRequest, Message
from agentkit.core.policies import retry
from agentkit.core.testing import make_test_ctx
from agentkit.providers import BedrockLLM, ModelSpec, llm_for, parse_model_spec
from agentkit.providers.spec import model_id

from .fake_bedrock import AWS_ENVIRONMENT, MODEL, FakeBedrock, Reply, converse_reply, isolate_aws

PROFILE = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
NO_REGION = (
    "bedrock: no AWS region: set AWS_REGION (or AWS_DEFAULT_REGION, or region in your AWS "
    "profile), or pass BedrockLLM(region=...)"
)
NO_CREDENTIALS = (
    "bedrock: no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and "
    "AWS_SESSION_TOKEN for temporary ones), or AWS_PROFILE naming a profile in ~/.aws, or run "
    "with an instance or task role"
)


@pytest.mark.parametrize(
    ("spec", "parsed"),
    [
        (f"bedrock:{MODEL}", ModelSpec("bedrock", MODEL)),
        (f"bedrock:{PROFILE}", ModelSpec("bedrock", PROFILE)),
        (f"bedrock:{MODEL}@https://vpce-1.bedrock-runtime.us-east-1.vpce.amazonaws.com",
         ModelSpec("bedrock", MODEL, "https://vpce-1.bedrock-runtime.us-east-1.vpce.amazonaws.com")),
    ],
)
def test_bedrock_specs_keep_the_ids_own_colon(spec: str, parsed: ModelSpec) -> None:
    assert parse_model_spec(spec) == parsed
    assert model_id(spec.partition("@")[0]) == parsed.model
    assert model_id(parsed.model) == parsed.model


def test_no_region_anywhere_is_an_error_naming_aws_region(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    isolate_aws(monkeypatch)
    with pytest.raises(ProviderError) as info:
        BedrockLLM()
    assert str(info.value) == NO_REGION
    assert (info.value.kind, info.value.transient) == ("configuration", False)


def test_the_region_comes_from_the_argument_then_aws_region_then_the_chain(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    isolate_aws(monkeypatch)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")
    assert BedrockLLM().region == "eu-west-1"
    monkeypatch.setenv("AWS_REGION", "eu-central-1")
    assert BedrockLLM().region == "eu-central-1"
    llm = BedrockLLM(region="ap-northeast-1")
    assert (llm.region, llm.client.meta.region_name) == ("ap-northeast-1", "ap-northeast-1")
    assert repr(llm) == "BedrockLLM(region='ap-northeast-1')"


def test_llm_for_builds_bedrock_with_its_endpoint_and_checks_credentials(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    isolate_aws(monkeypatch)
    monkeypatch.setenv("AWS_REGION", "us-west-2")
    llm = llm_for(f"bedrock:{PROFILE}@http://127.0.0.1:9")
    assert isinstance(llm, BedrockLLM)
    assert llm.client.meta.endpoint_url == "http://127.0.0.1:9"
    isolate_aws(monkeypatch, credentials=False)
    monkeypatch.setenv("AWS_REGION", "us-west-2")
    with pytest.raises(ProviderError) as info:
        llm_for(f"bedrock:{MODEL}")
    assert str(info.value) == NO_CREDENTIALS
    assert (info.value.kind, info.value.transient) == ("authentication", False)


def test_without_botocore_the_error_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "botocore", None)
    with pytest.raises(ImportError) as info:
        BedrockLLM(region="us-east-1")
    assert str(info.value) == (
        "the Amazon Bedrock provider needs the 'bedrock' package: "
        'pip install "agentkit-framework[bedrock]"')


def _demo_env(**extra: str) -> dict[str, str]:
    hidden = {"AGENTKIT_MODEL", "AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION",
              "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"}
    env = {k: v for k, v in os.environ.items() if k not in hidden}
    env.update({k: v for k, v in AWS_ENVIRONMENT.items() if "KEY" not in k}, **extra)
    return env


@pytest.mark.parametrize(
    ("extra", "reason"),
    [({}, NO_REGION), ({"AWS_REGION": "us-east-1"}, NO_CREDENTIALS)],
)
def test_the_demo_says_which_aws_setting_is_missing_in_one_line(
    extra: dict[str, str], reason: str,
) -> None:
    spec = f"bedrock:{PROFILE}"
    result = subprocess.run(
        [sys.executable, "-m", "agentkit", "demo", "--model", spec], capture_output=True,
        text=True, timeout=60, env=_demo_env(**extra), check=False,
    )
    assert (result.returncode, result.stdout, result.stderr) == (
        2, "", f"agentkit demo: model {spec!r} failed: {reason}\n")


async def test_under_retry_each_attempt_is_one_request(
    bedrock_server: FakeBedrock, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """botocore's own retries are off inside retry(), as the other providers' are."""
    isolate_aws(monkeypatch)
    llm = BedrockLLM(region="us-east-1", endpoint_url=bedrock_server.url)
    throttled = Reply(429, {"message": "slow down"}, error_type="ThrottlingException")
    bedrock_server.reply(throttled, converse_reply([{"text": "hi"}]))
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    ctx = make_test_ctx(llm=llm, chat_middleware=[retry(sleep=sleep)])
    result = await ctx.invoker.chat(
        ChatRequest(model=MODEL, messages=(Message("user", "hi"),)), ctx)
    assert result.content == "hi"
    assert len(bedrock_server.requests) == 2
    assert len(waits) == 1


async def test_an_agent_with_a_bedrock_model_spec_runs(bedrock_server: FakeBedrock,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_aws(monkeypatch)
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    llm = llm_for(f"bedrock:{PROFILE}@{bedrock_server.url}", max_retries=0)
    bedrock_server.reply(converse_reply([{"text": "Bonjour."}]))
    result = await Agent(name="a", model=f"bedrock:{PROFILE}", prompt="p").run(
        "hi", make_test_ctx(llm=llm))
    assert result.output == "Bonjour."
    assert bedrock_server.requests[0].model == PROFILE
