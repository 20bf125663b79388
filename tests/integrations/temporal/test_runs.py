"""Agent runs on a real Temporal dev server: the same results as in-process, approval
and ask_human by update, the pending calls by query."""

from __future__ import annotations

import time

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from agentkit.agents import Agent, RunNotResumable, Suspended
from agentkit.agents.cognition import ReActCognition
from agentkit.agents.result import AgentResult
from agentkit.core.contracts.errors import BudgetExceeded
from agentkit.core.contracts.state_errors import SessionBusy
from agentkit.core.contracts.types import Message, ToolCall
from agentkit.core.policies import Budget, meter, tracing
from agentkit.core.runtime.context import RunContext
from agentkit.core.testing import FakeLLM, RecordingTracer, Turn, make_test_ctx
from agentkit.integrations.otel import OTelTracer, trace_id_for
from agentkit.integrations.temporal import AgentWorker, RemoteError, RunOptions, TemporalAgents
from agentkit.state.sessions import read_session
from agentkit.tools import ask_human, tool

ADD = ToolCall("c1", "add", {"a": 2, "b": 3})
MAIL = ToolCall("c2", "send_email", {"to": "a@example.com", "body": "hi"})
ASK = ToolCall("c3", "ask_human", {"question": "Which city?"})
NOT_APPROVED = (
    "The call to 'send_email' was not approved by a human, so it did not run. "
    "Do not retry it unchanged; continue without it or ask differently."
)


class Desk:
    """An agent whose tools record every execution, and its scripted model."""

    def __init__(self, *turns: Turn) -> None:
        self.effects: list[str] = []

        @tool(side_effecting=False)
        def add(a: int, b: int) -> int:
            """Add two integers and return their sum."""
            self.effects.append(f"add {a} {b}")
            return a + b

        @tool(side_effecting=True)
        def send_email(to: str, body: str) -> str:
            """Send one email to a single recipient and return the provider message id."""
            self.effects.append(f"send_email {to}")
            return f"sent to {to}"

        self.agent = Agent(
            "desk", "fake", "You help.",
            cognition=ReActCognition([add, send_email, ask_human]),
        )
        self.llm = FakeLLM.script(turns)

    def worker(self, client: Client, task_queue: str) -> AgentWorker:
        return AgentWorker(
            client, task_queue=task_queue, agents=[self.agent],
            context=lambda: make_test_ctx(llm=self.llm),
        )


def tool_message(call: ToolCall, content: str, *, is_error: bool = False) -> Message:
    return Message(
        role="tool", content=content, tool_call_id=call.id, name=call.name, is_error=is_error
    )


async def test_react_run_end_to_end_matches_in_process(client: Client, task_queue: str) -> None:
    turns = (Turn(tool_calls=(ADD,)), Turn("The sum is 5."))
    desk = Desk(*turns)
    async with desk.worker(client, task_queue):
        result = await TemporalAgents(client, task_queue=task_queue).run(
            "desk", "What is 2 + 3?", run_id="run-e2e"
        )
    here = Desk(*turns)
    local = await here.agent.run("What is 2 + 3?", make_test_ctx(llm=here.llm,
                                                                correlation_id="run-e2e"))
    assert result == local
    assert result.stop_reason == "complete"
    assert result.output == "The sum is 5."
    assert result.run_id == "run-e2e"
    assert result.steps == 2
    assert result.messages == (
        Message(role="user", content="What is 2 + 3?"),
        Message(role="assistant", content="", tool_calls=(ADD,)),
        tool_message(ADD, "5"),
        Message(role="assistant", content="The sum is 5."),
    )
    assert desk.effects == ["add 2 3"]
    assert [len(r.messages) for r in desk.llm.requests] == [1, 3]
    assert desk.llm.requests[0].system == "You help."
    desk.llm.assert_all_used()


async def test_approval_waits_then_an_update_approves(client: Client, task_queue: str) -> None:
    desk = Desk(Turn(tool_calls=(MAIL,)), Turn("Sent."))
    agents = TemporalAgents(client, task_queue=task_queue)
    async with desk.worker(client, task_queue):
        held = await agents.run("desk", "Email a.", run_id="run-ok", autonomy="gated")
        assert held.stop_reason == "suspended"
        assert held.output is None
        waiting = Suspended("run-ok", (MAIL,), reason="awaiting_approval")
        assert held.evals["suspended"] == waiting
        assert await agents.pending("run-ok") == waiting
        assert await agents.result("run-ok") == held
        assert desk.effects == []
        done = await agents.resume("run-ok", {"c2": "approve"})
        assert await agents.pending("run-ok") is None
    assert done.stop_reason == "complete"
    assert done.output == "Sent."
    assert desk.effects == ["send_email a@example.com"]
    assert done.messages[2] == tool_message(MAIL, "sent to a@example.com")


async def test_a_deny_tells_the_model_and_runs_nothing(client: Client, task_queue: str) -> None:
    desk = Desk(Turn(tool_calls=(MAIL,)), Turn("I did not send it."))
    agents = TemporalAgents(client, task_queue=task_queue)
    async with desk.worker(client, task_queue):
        await agents.run("desk", "Email a.", run_id="run-no", autonomy="gated")
        done = await agents.resume("run-no", {"c2": "reject"})
    assert done.stop_reason == "complete"
    assert desk.effects == []
    assert done.messages[2] == tool_message(MAIL, NOT_APPROVED, is_error=True)


async def test_bad_decisions_change_nothing(client: Client, task_queue: str) -> None:
    desk = Desk(Turn(tool_calls=(MAIL,)), Turn("Sent."))
    agents = TemporalAgents(client, task_queue=task_queue)
    async with desk.worker(client, task_queue):
        await agents.run("desk", "Email a.", run_id="run-bad", autonomy="gated")
        with pytest.raises(ValueError) as caught:
            await agents.resume("run-bad", {"c9": "approve"})
        assert str(caught.value) == (
            "run 'run-bad': decisions name call id(s) ['c9'] that are not pending; "
            "pending calls: ['c2']"
        )
        assert await agents.pending("run-bad") == Suspended("run-bad", (MAIL,))
        done = await agents.resume("run-bad", {"c2": "approve"})
        assert done.stop_reason == "complete"
        with pytest.raises(RunNotResumable):
            await agents.resume("run-bad", {"c2": "approve"})


async def test_ask_human_waits_for_the_answer(client: Client, task_queue: str) -> None:
    desk = Desk(Turn(tool_calls=(ASK,)), Turn("Paris it is."))
    agents = TemporalAgents(client, task_queue=task_queue)
    async with desk.worker(client, task_queue):
        held = await agents.run("desk", "Book a trip.", run_id="run-ask")
        assert held.evals["suspended"] == Suspended("run-ask", (ASK,), reason="awaiting_input")
        done = await agents.resume("run-ask", {"c3": {"answer": "Paris"}})
    assert done.output == "Paris it is."
    assert done.messages[2] == tool_message(ASK, "Paris")
    assert desk.llm.requests[1].messages[-1] == tool_message(ASK, "Paris")


async def test_a_run_id_in_use_is_refused(client: Client, task_queue: str) -> None:
    desk = Desk(Turn(tool_calls=(MAIL,)))
    agents = TemporalAgents(client, task_queue=task_queue)
    async with desk.worker(client, task_queue):
        await agents.run("desk", "Email a.", run_id="run-twice", autonomy="gated")
        with pytest.raises(RunNotResumable) as caught:
            await agents.start("desk", "again", run_id="run-twice")
    assert str(caught.value) == (
        "run 'run-twice' cannot be resumed: a run with this id already exists; "
        "start the new run with another id"
    )


async def test_approval_can_wait_for_days(
    time_skipping: WorkflowEnvironment, task_queue: str
) -> None:
    env = time_skipping
    desk = Desk(Turn(tool_calls=(MAIL,)), Turn("Sent."))
    agents = TemporalAgents(env.client, task_queue=task_queue)
    async with desk.worker(env.client, task_queue):
        held = await agents.run("desk", "Email a.", run_id="run-days", autonomy="gated")
        assert held.stop_reason == "suspended"
        await env.sleep(5 * 24 * 3600)
        assert await agents.pending("run-days") == Suspended("run-days", (MAIL,))
        done = await agents.resume("run-days", {"c2": "approve"})
    assert done.output == "Sent."
    assert desk.effects == ["send_email a@example.com"]


async def test_unknown_outcome_under_gated_autonomy_waits_for_a_person(
    client: Client, task_queue: str
) -> None:
    charges: list[int] = []

    @tool(side_effecting=True)
    async def charge_card(cents: int) -> str:
        """Charge the customer's card once, by the given number of cents."""
        charges.append(cents)
        if len(charges) == 1:
            time.sleep(2.5)  # the worker hangs: no heartbeat reaches Temporal in time
        return f"charged {cents}"

    charge = ToolCall("c4", "charge_card", {"cents": 500})
    agent = Agent("payer", "fake", "You pay.", cognition=ReActCognition([charge_card]))
    llm = FakeLLM.script([Turn(tool_calls=(charge,)), Turn("Charged.")])
    agents = TemporalAgents(client, task_queue=task_queue,
                            options=RunOptions(heartbeat_timeout=1.0))
    async with AgentWorker(client, task_queue=task_queue, agents=[agent],
                           context=lambda: make_test_ctx(llm=llm)):
        held = await agents.run("payer", "Charge.", run_id="run-unknown", autonomy="gated")
        assert held.evals["suspended"] == Suspended("run-unknown", (charge,))
        unknown = await agents.resume("run-unknown", {"c4": "approve"})
        assert unknown.stop_reason == "suspended"
        assert unknown.evals["suspended"] == Suspended(
            "run-unknown", (charge,), reason="outcome_unknown"
        )
        assert charges == [500]
        done = await agents.resume("run-unknown", {"c4": "approve"})  # a person: run it again
    assert done.output == "Charged."
    assert charges == [500, 500]
    assert done.messages[2] == tool_message(charge, "charged 500")


async def test_a_refusal_that_stops_the_run_stops_it_as_in_process(
    client: Client, task_queue: str
) -> None:
    turns = (Turn(tool_calls=(ADD,)), Turn("The sum is 5."))

    def ctx(llm: FakeLLM, run_id: str | None = None) -> RunContext:
        return make_test_ctx(llm=llm, budget=Budget(max_calls=1), correlation_id=run_id,
                             chat_middleware=[meter()], tool_middleware=[meter()])

    desk = Desk(*turns)
    async with AgentWorker(client, task_queue=task_queue, agents=[desk.agent],
                           context=lambda: ctx(desk.llm)):
        stopped = await TemporalAgents(client, task_queue=task_queue).run(
            "desk", "What is 2 + 3?", run_id="run-budget"
        )
    here = Desk(*turns)
    local = await here.agent.run("What is 2 + 3?", ctx(here.llm, "run-budget"))
    assert stopped.stop_reason == local.stop_reason == "budget_exceeded"
    assert stopped.messages == local.messages
    assert stopped.steps == local.steps == 1
    error = stopped.evals["error"]
    assert isinstance(error, RemoteError)
    assert (error.type_name, error.stop_reason) == ("BudgetExceeded", "budget_exceeded")
    assert error.message == str(local.evals["error"])
    assert desk.effects == []


async def test_a_worker_refuses_what_it_cannot_host(client: Client, task_queue: str) -> None:
    twins = [Agent("twin", "fake", "p"), Agent("twin", "fake", "q")]
    with pytest.raises(ValueError) as caught:
        AgentWorker(client, task_queue=task_queue, agents=twins, context=lambda: make_test_ctx())
    assert str(caught.value) == (
        "two agents are named 'twin'; a worker looks agents up by name, so names must be unique"
    )


async def test_activity_spans_carry_the_run_and_hold_the_chain_spans(
    client: Client, task_queue: str
) -> None:
    desk = Desk(Turn(tool_calls=(ADD,)), Turn("The sum is 5."))
    tracer = RecordingTracer()
    async with AgentWorker(
        client, task_queue=task_queue, agents=[desk.agent],
        context=lambda: make_test_ctx(llm=desk.llm, tracer=tracer,
                                      chat_middleware=[tracing()], tool_middleware=[tracing()]),
    ):
        await TemporalAgents(client, task_queue=task_queue).run("desk", "2 + 3?", run_id="run-t")
    outer = [s for s in tracer.spans if s.parent_id is None]
    assert [s.name for s in outer] == [
        "temporal.activity model_call fake",
        "temporal.activity tool_call add",
        "temporal.activity model_call fake",
    ]
    assert {s.attributes["agentkit.run_id"] for s in outer} == {"run-t"}
    assert [s.attributes["temporal.attempt"] for s in outer] == [1, 1, 1]
    inner = [(s.name, s.parent_id) for s in tracer.spans if s.parent_id is not None]
    assert inner == [
        ("chat fake", outer[0].span_id),
        ("execute_tool add", outer[1].span_id),
        ("chat fake", outer[2].span_id),
    ]


async def test_start_refuses_what_it_cannot_run(client: Client, task_queue: str) -> None:
    agents = TemporalAgents(client, task_queue=task_queue)
    with pytest.raises(ValueError) as caught:
        await agents.start("desk", "x", autonomy="yolo")
    assert str(caught.value) == (
        "unknown autonomy 'yolo'; expected one of ['auto', 'gated', 'manual']"
    )
    with pytest.raises(ValueError) as caught:
        await agents.start("desk", "x", session="")
    assert str(caught.value) == "session= must be a non-empty string id, got ''"


async def test_a_session_on_temporal_remembers_its_turns_in_the_workers_store(
    client: Client, task_queue: str
) -> None:
    turns = (Turn("Hello Ada."), Turn("Your name is Ada."))
    desk = Desk(*turns)
    ctx = make_test_ctx(llm=desk.llm)
    async with AgentWorker(client, task_queue=task_queue, agents=[desk.agent],
                           context=lambda: ctx):
        agents = TemporalAgents(client, task_queue=task_queue)
        first = await agents.run("desk", "I am Ada.", run_id="run-s1", session="chat")
        second = await agents.run("desk", "Who am I?", run_id="run-s2", session="chat")
    assert (first.output, second.output) == ("Hello Ada.", "Your name is Ada.")
    conversation = (
        Message(role="user", content="I am Ada."),
        Message(role="assistant", content="Hello Ada."),
        Message(role="user", content="Who am I?"),
    )
    # Turn 2's model saw turn 1, read from the worker's store.
    assert tuple(desk.llm.requests[1].messages) == conversation
    assert second.messages == (*conversation,
                               Message(role="assistant", content="Your name is Ada."))
    assert await read_session(ctx.store, ctx.scope, "chat") == second.messages
    here = Desk(*turns)
    local_ctx = make_test_ctx(llm=here.llm)
    await here.agent.run("I am Ada.", local_ctx, session="chat")
    local = await here.agent.run("Who am I?", local_ctx, session="chat")
    assert local.messages == second.messages


async def test_a_turn_overtaken_on_its_session_is_refused_with_its_result(
    client: Client, task_queue: str
) -> None:
    desk = Desk(Turn(tool_calls=(ASK,)), Turn("Hi."), Turn("Paris it is."))
    ctx = make_test_ctx(llm=desk.llm)
    async with AgentWorker(client, task_queue=task_queue, agents=[desk.agent],
                           context=lambda: ctx):
        agents = TemporalAgents(client, task_queue=task_queue)
        held = await agents.run("desk", "Book a trip.", run_id="run-a", session="chat")
        assert held.stop_reason == "suspended"
        overtaking = await agents.run("desk", "Hello.", run_id="run-b", session="chat")
        with pytest.raises(SessionBusy) as caught:
            await agents.resume("run-a", {"c3": {"answer": "Paris"}})
    assert (caught.value.session_id, caught.value.run_id) == ("chat", "run-a")
    assert isinstance(caught.value.result, AgentResult)
    assert caught.value.result.output == "Paris it is."
    # The session holds the turn that got there first, and only that one.
    assert await read_session(ctx.store, ctx.scope, "chat") == overtaking.messages


async def test_a_budget_holds_per_run_across_its_activities(
    client: Client, task_queue: str
) -> None:
    again = ToolCall("c9", "add", {"a": 1, "b": 1})
    desk = Desk(
        Turn(tool_calls=(ADD,)), Turn("The sum is 5."),  # run 1: three metered calls
        Turn(tool_calls=(ADD,)), Turn("The sum is 5."),  # run 2: three more
        Turn(tool_calls=(ADD,)), Turn(tool_calls=(again,)),  # run 3: a fourth is refused
    )
    async with AgentWorker(
        client, task_queue=task_queue, agents=[desk.agent],
        context=lambda: make_test_ctx(llm=desk.llm, budget=Budget(max_calls=3),
                                      chat_middleware=[meter()], tool_middleware=[meter()]),
    ):
        agents = TemporalAgents(client, task_queue=task_queue)
        first = await agents.run("desk", "What is 2 + 3?", run_id="run-b1")
        second = await agents.run("desk", "What is 2 + 3?", run_id="run-b2")
        third = await agents.run("desk", "What is 2 + 3?", run_id="run-b3")
    # Each run has its own three calls: the first two runs' spend is not the third's.
    assert (first.stop_reason, second.stop_reason) == ("complete", "complete")
    assert third.stop_reason == "budget_exceeded"
    error = third.evals["error"]
    assert isinstance(error, RemoteError)
    assert error.type_name == "BudgetExceeded"
    assert error.message == str(BudgetExceeded("calls", 3, 4, "tool call 'add'"))
    assert desk.effects == ["add 2 3", "add 2 3", "add 2 3"]


async def test_the_activity_spans_of_one_run_share_the_runs_trace(
    client: Client, task_queue: str
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    turns = (Turn(tool_calls=(ADD,)), Turn("The sum is 5."))
    desk = Desk(*turns, *turns)
    async with AgentWorker(
        client, task_queue=task_queue, agents=[desk.agent],
        context=lambda: make_test_ctx(llm=desk.llm, tracer=OTelTracer(provider),
                                      chat_middleware=[tracing()], tool_middleware=[tracing()]),
    ):
        agents = TemporalAgents(client, task_queue=task_queue)
        await agents.run("desk", "2 + 3?", run_id="run-o1")
        await agents.run("desk", "2 + 3?", run_id="run-o2")
    spans = sorted(exporter.get_finished_spans(), key=lambda s: s.start_time or 0)
    traces = [(s.name, s.context.trace_id) for s in spans]
    one, two = trace_id_for("run-o1"), trace_id_for("run-o2")
    assert one != two
    assert traces == [
        ("temporal.activity model_call fake", one), ("chat fake", one),
        ("temporal.activity tool_call add", one), ("execute_tool add", one),
        ("temporal.activity model_call fake", one), ("chat fake", one),
        ("temporal.activity model_call fake", two), ("chat fake", two),
        ("temporal.activity tool_call add", two), ("execute_tool add", two),
        ("temporal.activity model_call fake", two), ("chat fake", two),
    ]
    # The activity spans hang under one parent per run (the run's), the chain's under them.
    outer = [s for s in spans if s.name.startswith("temporal.activity")]
    assert len({s.parent.span_id for s in outer if s.parent is not None}) == 2
