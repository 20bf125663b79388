"""A client waiting for many runs looks at their suspension memos together: one list
request per tick for every run due, no describe per run; a run id a list filter cannot
hold, and a server that cannot list by id, are looked at by describe."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from temporalio.client import (
    Client,
    DescribeWorkflowInput,
    Interceptor,
    ListWorkflowsInput,
    OutboundInterceptor,
    WorkflowExecutionAsyncIterator,
    WorkflowExecutionDescription,
)
from temporalio.testing import WorkflowEnvironment

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ChatRequest, LLMResult, ToolCall
from agentkit.core.runtime.context import RunContext
from agentkit.core.testing import make_test_ctx
from agentkit.integrations.temporal import AgentWorker, TemporalAgents
from agentkit.tools import tool

MAIL = ToolCall("c1", "send_email", {"to": "a@example.com"})


class Desk:
    """Asks to send the email, then says it is sent: decided from the transcript, so
    every run of the worker gets its own two turns."""

    async def chat(self, request: ChatRequest, ctx: RunContext) -> LLMResult:
        if any(m.role == "tool" for m in request.messages):
            return LLMResult(content="Sent.")
        return LLMResult(content="", tool_calls=(MAIL,))

    def stream(self, request: ChatRequest, ctx: RunContext) -> object:
        raise NotImplementedError


@tool(side_effecting=True)
def send_email(to: str) -> str:
    """Send one email to a single recipient and return the provider message id."""
    return f"sent to {to}"


DESK = Agent("desk", "fake", "You help.", cognition=ReActCognition([send_email]))


class Counting(Interceptor):
    """Counts the client's describe and list requests (Temporal's own interception)."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()

    def intercept_client(self, next: OutboundInterceptor) -> OutboundInterceptor:
        return _Counted(next, self.calls)


class _Counted(OutboundInterceptor):
    def __init__(self, next: OutboundInterceptor, calls: Counter[str]) -> None:
        super().__init__(next)
        self.calls = calls

    async def describe_workflow(self, input: DescribeWorkflowInput) -> WorkflowExecutionDescription:
        self.calls["describe"] += 1
        return await super().describe_workflow(input)

    def list_workflows(self, input: ListWorkflowsInput) -> WorkflowExecutionAsyncIterator:
        self.calls["list"] += 1
        return super().list_workflows(input)


def _context() -> Any:
    return make_test_ctx(llm=Desk())


async def _counted(address: str, task_queue: str) -> tuple[Counting, TemporalAgents]:
    """A client whose describe and list requests are counted, and its TemporalAgents."""
    counting = Counting()
    client = await Client.connect(address, interceptors=[counting])
    return counting, TemporalAgents(client, task_queue=task_queue)


async def test_many_suspended_runs_are_noticed_by_a_few_list_requests_and_no_describe(
    client: Client, temporal_address: str, task_queue: str
) -> None:
    counting, agents = await _counted(temporal_address, task_queue)
    runs = 10
    async with AgentWorker(client, task_queue=task_queue, agents=[DESK], context=_context):
        held = await asyncio.gather(*(
            agents.run("desk", "Email a.", run_id=f"{task_queue}-{i}", autonomy="gated")
            for i in range(runs)
        ))
        assert all(r.suspended is not None for r in held)
        assert [dict(r.suspended.kinds) for r in held if r.suspended] == [{"c1": "approval"}] * runs
        assert counting.calls["describe"] == 0
        assert 1 <= counting.calls["list"] < runs
        done = await agents.resume(f"{task_queue}-0", {"c1": "approve"})
    assert done.output == "Sent."


async def test_a_run_id_a_list_filter_cannot_hold_is_looked_at_by_describe(
    client: Client, temporal_address: str, task_queue: str
) -> None:
    counting, agents = await _counted(temporal_address, task_queue)
    async with AgentWorker(client, task_queue=task_queue, agents=[DESK], context=_context):
        held = await agents.run("desk", "Email a.", run_id=f"o'brien-{task_queue}",
                                autonomy="gated")
    assert held.suspended is not None
    assert counting.calls["describe"] >= 1
    assert counting.calls["list"] == 0


async def test_a_server_that_cannot_list_by_id_is_asked_by_describe(
    time_skipping: WorkflowEnvironment, task_queue: str
) -> None:
    # The time-skipping test server has no advanced visibility: its list filter fails,
    # and the suspension is still noticed, by describe, then and from then on.
    counting = Counting()
    config = time_skipping.client.config()
    config["interceptors"] = [counting]
    agents = TemporalAgents(Client(**config), task_queue=task_queue)
    async with AgentWorker(time_skipping.client, task_queue=task_queue, agents=[DESK],
                           context=_context):
        for i in range(2):
            held = await agents.run("desk", "Email a.", run_id=f"{task_queue}-{i}",
                                    autonomy="gated")
            assert held.suspended is not None
    assert counting.calls["list"] == 1
    assert counting.calls["describe"] >= 2
