"""Values that cross the Temporal boundary arrive whole."""

from __future__ import annotations

from agentkit.agents import AgentResult
from agentkit.core.contracts.types import LLMResult, Usage
from agentkit.integrations.temporal._values import pack, result_from, result_to, unpack


def test_usage_naming_unpriced_models_crosses_the_boundary_whole() -> None:
    usage = Usage(5, 2, cost_usd=0.25, requests=2, unpriced_models=("gpt-5-pro",))
    result = AgentResult("done", "complete", usage, run_id="r1", steps=2)
    assert result_from(result_to(result)).usage == usage
    answer = LLMResult("hi", usage=usage, model="gpt-5-pro")
    assert unpack(pack(answer), "model result") == answer
