"""AgentResult.suspended: typed, None unless the run is suspended; evals["suspended"]
still holds the same value. StopReason names every stop_reason."""

from __future__ import annotations

import typing
from pathlib import Path

from agentkit.agents import Agent, StopReason, Suspended, Workflow
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ToolCall, Usage
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.state.stores.sqlite import SQLiteStore
from agentkit.tools import tool


@tool(side_effecting=True, requires_approval=True)
def refund(order_id: str) -> str:
    """Issue a refund against a customer order and return the confirmation id."""
    return f"refunded {order_id}"


async def test_suspended_is_the_suspension_of_a_suspended_run_and_none_otherwise() -> None:
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "refund", {"order_id": "A-1"}),)),
        Turn(content="Refunded."),
    ])
    agent = Agent("desk", "fake", "p", cognition=ReActCognition(tools=[refund]))
    ctx = make_test_ctx(llm=llm)
    first = await agent.run("refund A-1", ctx)
    assert first.suspended == Suspended(
        first.run_id, (ToolCall("c1", "refund", {"order_id": "A-1"}),), "awaiting_approval"
    )
    assert first.evals["suspended"] is first.suspended
    done = await agent.resume(first.run_id, {"c1": "approve"}, ctx)
    assert (done.stop_reason, done.suspended, "suspended" in done.evals) == (
        "complete", None, False,
    )


async def test_a_workflow_result_has_the_same_attribute() -> None:
    async def draft(inputs: object, ctx: object) -> str:
        return "a draft"

    wf = Workflow("blog").add("draft", draft).gate("review", "Publish?", after=["draft"])
    ctx = make_test_ctx()
    first = await wf.run("tides", ctx)
    assert first.suspended is first.evals["suspended"]
    assert first.suspended is not None
    assert [call.id for call in first.suspended.pending] == ["review"]
    done = await wf.resume(first.run_id, {"review": "approve"}, ctx)
    assert done.suspended is None


def test_stop_reason_lists_every_value_and_the_docs_explain_each() -> None:
    from pathlib import Path

    values = typing.get_args(StopReason)
    assert values == (
        "complete", "suspended", "max_iterations", "cancelled", "budget_exceeded", "guardrail",
        "error",
    )
    page = (Path(__file__).resolve().parents[2] / "docs" / "agents.md").read_text()
    table = [line for line in page.splitlines() if line.startswith("| `")]
    assert [line.split("`")[1] for line in table if line.split("`")[1] in values] == list(values)


async def test_usage_by_model_is_kept_across_a_checkpoint(tmp_path: Path) -> None:
    """Each step's usage is added under the model that answered, and a run resumed from a
    durable store goes on adding to what its checkpoint holds."""
    first_usage = Usage(input_tokens=10, output_tokens=2, requests=1)
    second_usage = Usage(input_tokens=30, output_tokens=4, requests=1)
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "refund", {"order_id": "A-1"}),), usage=first_usage),
        Turn(content="Refunded.", usage=second_usage),
    ])
    store = SQLiteStore(tmp_path / "runs.db")
    try:
        ctx = make_test_ctx(llm=llm, store=store)
        first = await Agent("desk", "model-a", "p", cognition=ReActCognition(tools=[refund])).run(
            "refund A-1", ctx)
        assert dict(first.usage_by_model) == {"model-a": first_usage}
        later = Agent("desk", "model-b", "p", cognition=ReActCognition(tools=[refund]))
        done = await later.resume(first.run_id, {"c1": "approve"}, make_test_ctx(llm=llm,
                                                                                 store=store))
    finally:
        store.close()
    assert dict(done.usage_by_model) == {"model-a": first_usage, "model-b": second_usage}
    assert done.usage == first_usage + second_usage
