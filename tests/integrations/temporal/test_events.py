"""What one run costs Temporal, on a real dev server: the history events a run writes
are fixed by what the run does, never by when its client happens to ask for the
result; and the payload each activity is sent is what that call needs."""

from __future__ import annotations

from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ChatRequest, LLMResult, ToolCall
from agentkit.core.runtime.context import RunContext
from agentkit.core.testing import make_test_ctx
from agentkit.integrations.temporal import AgentWorker, TemporalAgents
from agentkit.tools import tool


@tool(side_effecting=False)
def forecast(city: str) -> str:
    """Return today's weather forecast for a city."""
    return f"{city}: sunny"


class Weather:
    """First turn: one forecast call; then the answer (decided from the transcript, so
    every run of one worker's model behaves alike)."""

    async def chat(self, request: ChatRequest, ctx: RunContext) -> LLMResult:
        results = [m for m in request.messages if m.role == "tool"]
        if not results:
            return LLMResult(content="", tool_calls=(ToolCall("c1", "forecast",
                                                              {"city": "Lisbon"}),))
        return LLMResult(content=results[0].content)

    def stream(self, request: ChatRequest, ctx: RunContext) -> object:
        raise NotImplementedError


agent = Agent("weather", "fake", "You report the weather.",
              cognition=ReActCognition(tools=[forecast]))

TWO_TURNS = [
    "WORKFLOW_EXECUTION_STARTED",
    "WORKFLOW_TASK_SCHEDULED", "WORKFLOW_TASK_STARTED", "WORKFLOW_TASK_COMPLETED",
    "ACTIVITY_TASK_SCHEDULED", "ACTIVITY_TASK_STARTED", "ACTIVITY_TASK_COMPLETED",  # model
    "WORKFLOW_TASK_SCHEDULED", "WORKFLOW_TASK_STARTED", "WORKFLOW_TASK_COMPLETED",
    "ACTIVITY_TASK_SCHEDULED", "ACTIVITY_TASK_STARTED", "ACTIVITY_TASK_COMPLETED",  # tool
    "WORKFLOW_TASK_SCHEDULED", "WORKFLOW_TASK_STARTED", "WORKFLOW_TASK_COMPLETED",
    "ACTIVITY_TASK_SCHEDULED", "ACTIVITY_TASK_STARTED", "ACTIVITY_TASK_COMPLETED",  # model
    "WORKFLOW_TASK_SCHEDULED", "WORKFLOW_TASK_STARTED", "WORKFLOW_TASK_COMPLETED",
    "WORKFLOW_EXECUTION_COMPLETED",
]
"""The 23 events of a bare workflow that runs three activities, one after the other."""


def worker(client: Client, task_queue: str) -> AgentWorker:
    return AgentWorker(client, task_queue=task_queue, agents=[agent],
                       context=lambda: make_test_ctx(llm=Weather()))


async def events(client: Client, run_id: str) -> list[str]:
    history = await client.get_workflow_handle(run_id).fetch_history()
    return [EventType.Name(e.event_type).removeprefix("EVENT_TYPE_") for e in history.events]


async def test_a_two_turn_run_writes_the_same_23_events_every_time(
    client: Client, task_queue: str
) -> None:
    agents = TemporalAgents(client, task_queue=task_queue)
    async with worker(client, task_queue):
        for i in range(6):
            result = await agents.run("weather", "Weather in Lisbon?", run_id=f"events-{i}")
            assert (result.stop_reason, result.output) == ("complete", "Lisbon: sunny")
        # start() and result() apart, as a client that hands the id on does.
        started = await agents.start("weather", "Weather in Lisbon?", run_id="events-apart")
        assert (await agents.result(started)).output == "Lisbon: sunny"
    kinds = [await events(client, f"events-{i}") for i in range(6)]
    assert [len(k) for k in kinds] == [23] * 6
    assert kinds == [TWO_TURNS] * 6
    assert await events(client, "events-apart") == TWO_TURNS



@tool(side_effecting=True, requires_approval=True)
def refund(order_id: str) -> str:
    """Refund a customer order in full and return the confirmation."""
    return f"refunded {order_id}"


class Refunds:
    async def chat(self, request: ChatRequest, ctx: RunContext) -> LLMResult:
        if not any(m.role == "tool" for m in request.messages):
            return LLMResult(content="", tool_calls=(ToolCall("c1", "refund",
                                                              {"order_id": "A-1"}),))
        return LLMResult(content="Refunded A-1.")

    def stream(self, request: ChatRequest, ctx: RunContext) -> object:
        raise NotImplementedError


async def test_a_suspended_run_says_so_in_its_history_and_is_answered_by_update(
    client: Client, task_queue: str
) -> None:
    billing = Agent("billing", "fake", "You handle refunds.",
                    cognition=ReActCognition(tools=[refund]))
    agents = TemporalAgents(client, task_queue=task_queue)
    async with AgentWorker(client, task_queue=task_queue, agents=[billing],
                           context=lambda: make_test_ctx(llm=Refunds())):
        held = await agents.run("billing", "Refund A-1", run_id="held")
        assert held.stop_reason == "suspended"
        assert (await agents.result("held")).evals == held.evals
        done = await agents.resume("held", {"c1": "approve"})
    assert done.output == "Refunded A-1."
    wft = ["WORKFLOW_TASK_SCHEDULED", "WORKFLOW_TASK_STARTED", "WORKFLOW_TASK_COMPLETED"]
    activity = ["ACTIVITY_TASK_SCHEDULED", "ACTIVITY_TASK_STARTED", "ACTIVITY_TASK_COMPLETED"]
    update = ["WORKFLOW_EXECUTION_UPDATE_ACCEPTED", "WORKFLOW_EXECUTION_UPDATE_COMPLETED"]
    assert await events(client, "held") == [
        "WORKFLOW_EXECUTION_STARTED", *wft, *activity, *wft,
        # The suspension: the patch (its marker and search attribute), the memo.
        "MARKER_RECORDED", "UPSERT_WORKFLOW_SEARCH_ATTRIBUTES", "WORKFLOW_PROPERTIES_MODIFIED",
        *wft, *update,  # run(): the outcome update, answered at once
        *wft, *update,  # result(): the same
        *wft, "WORKFLOW_EXECUTION_UPDATE_ACCEPTED",  # resume()
        *activity, *wft, *activity, *wft,
        "WORKFLOW_EXECUTION_UPDATE_COMPLETED", "WORKFLOW_EXECUTION_COMPLETED",
    ]
