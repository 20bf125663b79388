"""A decision over HTTP on a Temporal run that continues as new (past
``continue_as_new_after`` model calls) before it suspends again or ends: the server
hands it over (202) and follows the run across the continue to its final event."""

from __future__ import annotations

import uuid

import httpx2
from temporalio.client import Client

from agentkit.core.contracts.types import ToolCall
from agentkit.core.testing import Turn
from agentkit.integrations.temporal import AgentWorker, RunOptions
from agentkit.serve.temporal import TemporalEngine
from agentkit.state.stores.memory import InMemoryStore
from tests.serve.served import TOKENS, ByTask, Shop, bearer, context_for, create_app, served
from tests.serve.test_api import sse

ANA = bearer("tok-ana")


async def test_a_decision_whose_run_continues_as_new_is_202_and_streams_to_the_end(
    temporal_address: str,
) -> None:
    shop = Shop()
    shop.release.set()
    store = InMemoryStore()
    run_id = f"t-{uuid.uuid4().hex[:12]}"
    llm = ByTask({"refund A": [
        Turn(tool_calls=(ToolCall("c1", "refund", {"order_id": "A", "usd": 10}),)),
        Turn(tool_calls=(ToolCall("c2", "slow_lookup", {"order_id": "A"}),)),
        Turn(content="Refunded A; it shipped."),
    ]})
    context = context_for(llm, store)
    client = await Client.connect(temporal_address)
    queue = f"serve-{uuid.uuid4().hex[:12]}"
    engine = TemporalEngine(client, task_queue=queue,
                            options=RunOptions(continue_as_new_after=2))
    async with (
        AgentWorker(client, task_queue=queue, agents=[shop.support], context=context),
        served(create_app([shop.support], context=context, auth=TOKENS, engine=engine))
        as url,
        httpx2.AsyncClient(base_url=url) as http,
    ):
        held = await http.post("/v1/agents/support/runs", json={
            "input": "refund A", "run_id": run_id, "wait": True}, headers=ANA)
        assert held.json()["status"] == "suspended"
        waited = await sse(http, f"/v1/runs/{run_id}/events")  # to the suspension
        decided = await http.post(f"/v1/runs/{run_id}/decisions",
                                  json={"decisions": {"c1": "approve"}}, headers=ANA)
        ended = await sse(http, f"/v1/runs/{run_id}/events", last=waited[-1]["id"])
        run = (await http.get(f"/v1/runs/{run_id}", headers=ANA)).json()
        again = await http.post(f"/v1/runs/{run_id}/decisions",
                                json={"decisions": {"c1": "approve"}}, headers=ANA)
    assert [e["event"] for e in waited] == ["tool_call", "step", "interrupt", "final"]
    assert decided.status_code == 202
    assert [e["event"] for e in ended] == [
        "tool_result", "tool_call", "step", "tool_result", *["text_delta"] * 4, "step",
        "final"]
    assert ended[-1]["data"]["output"] == "Refunded A; it shipped."
    assert (run["status"], run["output"]) == ("complete", "Refunded A; it shipped.")
    assert again.status_code == 409
    assert shop.refunds == [("A", 10)]
    assert len([w async for w in client.list_workflows(f"WorkflowId = '{run_id}'")]) == 2
