"""The lifecycle keeps the run registry: a record per top-level run, written when the
run is claimed and when it stops advancing, with what it waits for."""

from __future__ import annotations

from dataclasses import dataclass

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.runs import RunQuery, WaitingCall
from agentkit.core.contracts.types import ToolCall
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.tools import as_tool, tool


@tool(side_effecting=True)
def refund(order_id: str) -> str:
    """Refund a customer order in full to the card it was paid with."""
    return "refunded"


BILLING = Agent("billing", "fake", "You refund.", cognition=ReActCognition([refund]))
SUPPORT = Agent("support", "fake", "You help.", cognition=ReActCognition([
    refund, as_tool(BILLING, name="ask_billing", side_effecting=False,
                    description="Ask the billing team to handle a refund request."),
]))


async def test_a_finished_run_is_registered_with_its_output_and_usage() -> None:
    ctx = make_test_ctx(llm=FakeLLM.script([Turn(content="Hello.")]), correlation_id="r1")
    result = await SUPPORT.run("hi", ctx, session="s1")
    record = await ctx.store.get_run("r1")
    assert record is not None
    assert (record.agent, record.status, record.scope, record.session) == (
        "support", "complete", ctx.scope.key(), "s1")
    assert (record.output, record.stop_reason, record.usage) == (
        "Hello.", "complete", result.usage)
    assert record.created <= record.updated


async def test_a_suspended_run_lists_the_calls_it_waits_on_and_sub_runs_are_not_registered(
) -> None:
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "ask_billing", {"task": "refund A1"}),)),
        Turn(tool_calls=(ToolCall("s1", "refund", {"order_id": "A1"}),)),
        Turn(content="done"), Turn(content="Billing refunded A1."),
    ])
    ctx = make_test_ctx(llm=llm, autonomy="gated", correlation_id="r2")
    await SUPPORT.run("refund A1 via billing", ctx)
    record = await ctx.store.get_run("r2")
    assert record is not None and record.status == "suspended"
    assert record.pending == (WaitingCall(
        call_id="c1/s1", tool="refund", arguments=FrozenDict({"order_id": "A1"}),
        kind="approval", agents=("support", "billing"), since=record.pending[0].since),)
    page = await ctx.store.list_runs(RunQuery())
    assert [r.run_id for r in page.records] == ["r2"]  # one record: the sub-run has none

    await SUPPORT.resume("r2", {"c1/s1": "approve"}, make_test_ctx(llm=llm, store=ctx.store,
                                                                  autonomy="gated"))
    done = await ctx.store.get_run("r2")
    assert done is not None
    assert (done.status, done.pending, done.output, done.created) == (
        "complete", (), "Billing refunded A1.", record.created)


async def test_a_structured_output_is_registered_as_its_json_data() -> None:
    @dataclass
    class Quote:
        order: str
        usd: int

    quoter = Agent("quoter", "fake", "You quote.", output=Quote)
    ctx = make_test_ctx(llm=FakeLLM.script([Turn(content='{"order": "A", "usd": 3}')]),
                        correlation_id="r9")
    assert (await quoter.run("quote A", ctx)).output == Quote("A", 3)
    record = await ctx.store.get_run("r9")
    assert record is not None and record.output == {"order": "A", "usd": 3}
