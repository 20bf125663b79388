"""make_ctx(store=PostgresStore(...)) wherever a SQLiteStore works: workflows resumed
and recovered through another store handle (another host), and the default tool chain's
audit log and idempotency records kept in Postgres, and nested single flight."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from agentkit import make_ctx
from agentkit.agents import Agent, Workflow, WorkflowError
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ChatRequest, LLMResult, ToolCall, ToolRequest
from agentkit.core.runtime.context import RunContext
from agentkit.core.testing import FakeLLM, Turn
from agentkit.state.stores.postgres import PostgresStore
from agentkit.tools import as_tool, tool

published: list[str] = []


@tool(side_effecting=True)
def publish(draft: str) -> str:
    """Publish a finished draft to the company blog and return its address."""
    published.append(draft)
    return f"published: {draft}"


def blog() -> Workflow:
    return (
        Workflow("blog")
        .gate("review", "Publish?")
        .add("publish", publish, input=lambda i: {"draft": "final"}, after=["review"])
    )


async def test_a_workflow_gated_on_one_host_is_resumed_on_another(
    postgres_dsn: str, postgres_schema: str
) -> None:
    published.clear()
    async with PostgresStore(postgres_dsn, schema=postgres_schema) as host_a:
        first = await blog().run("t", make_ctx(FakeLLM(), store=host_a))
    assert first.stop_reason == "suspended"
    async with PostgresStore(postgres_dsn, schema=postgres_schema) as host_b:
        result = await blog().resume(
            first.run_id, {"review": "approve"}, make_ctx(FakeLLM(), store=host_b)
        )
    assert result.outputs["publish"] == "published: final"
    assert published == ["final"]


async def test_a_failed_workflow_is_recovered_on_another_host_keeping_finished_steps(
    postgres_dsn: str, postgres_schema: str
) -> None:
    runs: list[str] = []
    healthy = {"ok": False}

    async def first(inputs: Mapping[str, Any], ctx: RunContext) -> str:
        runs.append("first")
        return "one"

    async def second(inputs: Mapping[str, Any], ctx: RunContext) -> str:
        runs.append("second")
        if not healthy["ok"]:
            raise ConnectionError("service down")
        return inputs["first"] + " two"

    wf = Workflow("w").add("first", first).add("second", second, after=["first"])
    async with PostgresStore(postgres_dsn, schema=postgres_schema) as host_a:
        ctx = make_ctx(FakeLLM(), store=host_a)
        with pytest.raises(WorkflowError):
            await wf.run("t", ctx)
    healthy["ok"] = True
    async with PostgresStore(postgres_dsn, schema=postgres_schema) as host_b:
        result = await wf.recover(ctx.correlation_id, make_ctx(FakeLLM(), store=host_b))
    assert result.outputs["second"] == "one two"
    assert runs == ["first", "second", "second"]


async def test_the_default_chain_audits_and_deduplicates_in_postgres(
    postgres_dsn: str, postgres_schema: str
) -> None:
    sent: list[str] = []

    @tool(side_effecting=True)
    def send(to: str) -> str:
        """Send the weekly report by email to one recipient address."""
        sent.append(to)
        return f"sent to {to}"

    agent = Agent("mailer", "fake", "p", cognition=ReActCognition(tools=[send]))
    async with PostgresStore(postgres_dsn, schema=postgres_schema) as host_a:
        llm = FakeLLM.script([
            Turn(tool_calls=(ToolCall("c1", "send", {"to": "ann"}),)),
            Turn(content="Sent."),
        ])
        ctx = make_ctx(llm, store=host_a)
        result = await agent.run("send the report to ann", ctx)
    assert result.output == "Sent."

    async with PostgresStore(postgres_dsn, schema=postgres_schema) as host_b:
        # The same call again in the same run, from another host: replayed, not re-sent.
        again = make_ctx(FakeLLM(), store=host_b, correlation_id=ctx.correlation_id)
        request = ToolRequest("send", {"to": "ann"}, tool=send)
        assert await again.invoker.invoke_tool(request, again) == "sent to ann"
        assert request.meta["idempotency"] == "replayed"
        records = await host_b.list("audit")
    assert sent == ["ann"]
    assert [(r.run_id, r.tool, r.decision) for r in records] == [
        (ctx.correlation_id, "send", "executed"),
        (ctx.correlation_id, "send", "deduped"),
    ]


class _ByTask:
    """A model that answers each agent from the script of the task it was given, so
    concurrent runs and sub-runs never take each other's turns."""

    def __init__(self, scripts: dict[str, list[Turn]]) -> None:
        self.scripts = {task: FakeLLM.script(turns) for task, turns in scripts.items()}

    async def chat(self, request: ChatRequest, ctx: RunContext) -> LLMResult:
        task = next(m.content for m in request.messages if m.role == "user")
        return await self.scripts[task].chat(request, ctx)


async def test_parallel_delegations_under_idempotent_at_both_levels_finish(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """Two runs of five parallel as_tool delegations on the default pool of ten."""
    refunded: list[str] = []

    @tool(side_effecting=True)
    def refund(order_id: str) -> str:
        """Refund a customer's order in full and return the confirmation."""
        refunded.append(order_id)
        return f"refunded {order_id}"

    clerk = Agent("clerk", "fake", "p", cognition=ReActCognition(tools=[refund]))
    delegate = as_tool(clerk, name="clerk", description="Hand one refund to the billing clerk.",
                       side_effecting=True)
    lead = Agent("lead", "fake", "p", cognition=ReActCognition(tools=[delegate]))
    orders = {r: [f"R{r}-{i}" for i in range(5)] for r in range(2)}
    scripts: dict[str, list[Turn]] = {}
    for r, ids in orders.items():
        scripts[f"run {r}"] = [
            Turn(tool_calls=tuple(
                ToolCall(f"c{i}", "clerk", {"task": f"refund {order}"})
                for i, order in enumerate(ids)
            )),
            Turn(content=f"run {r} done"),
        ]
        for order in ids:
            scripts[f"refund {order}"] = [
                Turn(tool_calls=(ToolCall("s1", "refund", {"order_id": order}),)),
                Turn(content=f"{order} refunded"),
            ]
    llm = _ByTask(scripts)
    async with PostgresStore(postgres_dsn, schema=postgres_schema) as store:
        async with asyncio.timeout(30):
            results = await asyncio.gather(
                *(lead.run(f"run {r}", make_ctx(llm, store=store)) for r in orders)
            )
    assert [(res.stop_reason, res.output) for res in results] == [
        ("complete", "run 0 done"), ("complete", "run 1 done"),
    ]
    assert sorted(refunded) == sorted(o for ids in orders.values() for o in ids)
    for script in llm.scripts.values():
        script.assert_all_used()
