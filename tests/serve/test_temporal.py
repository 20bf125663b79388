"""The Temporal engine across server restarts: a run goes on on the worker while no
server is up, and the next server follows it from the registry to its end."""

from __future__ import annotations

import uuid

import httpx2
from temporalio.client import Client

from agentkit.core.contracts.types import ToolCall
from agentkit.core.testing import Turn
from agentkit.integrations.temporal import AgentWorker
from agentkit.serve.temporal import TemporalEngine
from agentkit.state.stores.memory import InMemoryStore
from tests.serve.served import TOKENS, ByTask, Shop, bearer, context_for, create_app, served
from tests.serve.test_api import sse

ANA = bearer("tok-ana")


async def test_a_run_left_running_by_a_stopped_server_is_followed_by_the_next(
    temporal_address: str,
) -> None:
    shop = Shop()
    store = InMemoryStore()
    run_id = f"t-{uuid.uuid4().hex[:12]}"
    llm = ByTask({"look": [Turn(tool_calls=(ToolCall("c1", "slow_lookup", {"order_id": "A"}),)),
                           Turn(content="It shipped.")]})
    context = context_for(llm, store)
    client = await Client.connect(temporal_address)
    queue = f"serve-{uuid.uuid4().hex[:12]}"

    def app() -> object:
        return create_app([shop.support], context=context, auth=TOKENS,
                          engine=TemporalEngine(client, task_queue=queue))

    async with AgentWorker(client, task_queue=queue, agents=[shop.support], context=context):
        async with served(app()) as url, httpx2.AsyncClient(base_url=url) as http:
            started = await http.post("/v1/agents/support/runs", json={
                "input": "look", "run_id": run_id}, headers=ANA)
            assert started.status_code == 202
        shop.release.set()  # the tool finishes while no server is up
        async with served(app()) as url, httpx2.AsyncClient(base_url=url) as http:
            events = await sse(http, f"/v1/runs/{run_id}/events")
            run = (await http.get(f"/v1/runs/{run_id}", headers=ANA)).json()
    # The next server reads the run's live events from the start, and then live: the
    # same events, in the same order, as the in-process engine gives for this script.
    assert [e["event"] for e in events] == [
        "tool_call", "step", "tool_result", "text_delta", "text_delta", "step", "final"]
    assert [e["id"] for e in events] == [str(n) for n in range(1, 8)]
    assert (run["status"], run["output"]) == ("complete", "It shipped.")
    assert len(llm.fakes["look"].requests) == 2
