"""Nested approval: a sub-agent that must ask a person suspends every run above it; a
decision for a path id ("c1/s2") reaches the run that owns the call."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentkit.agents import (
    Agent,
    FinalEvent,
    InterruptEvent,
    Suspended,
    ToolResultEvent,
    Workflow,
)
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.media import Image
from agentkit.core.contracts.types import ChatRequest, LLMResult, StreamEvent, ToolCall, Usage
from agentkit.core.policies import Budget, idempotent, meter
from agentkit.core.runtime import RunContext
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.tools import as_tool, ask_human, tool

REFUND = ToolCall("s2", "refund", {"order_id": "A-1", "amount_usd": 20.0})
NOT_APPROVED = (
    "The call to 'refund' was not approved by a human, so it did not run. "
    "Do not retry it unchanged; continue without it or ask differently."
)


class Scripts:
    """A model that answers each agent from its own script, chosen by the task (the
    first user message) the agent was given, so concurrent sub-runs cannot take each
    other's turns."""

    def __init__(self, scripts: dict[str, list[Turn]]) -> None:
        self.by_task = {task: FakeLLM.script(turns) for task, turns in scripts.items()}

    def _llm(self, request: ChatRequest) -> FakeLLM:
        task = next(m.content for m in request.messages if m.role == "user")
        return self.by_task[task]

    async def chat(self, request: ChatRequest, ctx: RunContext) -> LLMResult:
        return await self._llm(request).chat(request, ctx)

    def stream(self, request: ChatRequest, ctx: RunContext) -> AsyncIterator[StreamEvent]:
        return self._llm(request).stream(request, ctx)

    def read(self, task: str, call_id: str) -> str:
        """What the agent on ``task`` last read as the result of ``call_id``."""
        llm = self.by_task[task]
        (message,) = [m for m in llm.requests[-1].messages if m.tool_call_id == call_id]
        return message.content

    def assert_all_used(self) -> None:
        for llm in self.by_task.values():
            llm.assert_all_used()


class Shop:
    """support delegates to billing (as a tool); billing looks orders up and refunds,
    and a refund needs a person's approval. ``ran`` records every tool body run."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, Any]] = []

        @tool(side_effecting=False)
        def lookup(order_id: str) -> str:
            """Look up a customer order and return its current status."""
            self.ran.append(("lookup", order_id))
            return "delivered"

        @tool(side_effecting=True, requires_approval=True)
        def refund(order_id: str, amount_usd: float) -> str:
            """Issue a refund against a customer order and return the confirmation."""
            self.ran.append(("refund", (order_id, amount_usd)))
            return f"refunded {amount_usd} on {order_id}"

        @tool(side_effecting=True)
        def note(text: str) -> str:
            """Add a note to the customer's file and return the note id."""
            self.ran.append(("note", text))
            return "n-1"

        self.lookup, self.refund, self.note = lookup, refund, note
        self.billing = Agent(
            "billing", "fake", "You handle refunds.",
            cognition=ReActCognition(tools=[lookup, refund]),
        )
        self.billing_tool = as_tool(
            self.billing, name="billing",
            description="Delegate a billing task to the billing specialist.",
            side_effecting=True,
        )
        self.support = Agent(
            "support", "fake", "You help customers.",
            cognition=ReActCognition(tools=[self.billing_tool, note]),
        )


def billing_turns(answer: str = "Refunded $20 on A-1.") -> list[Turn]:
    return [
        Turn(tool_calls=(ToolCall("s1", "lookup", {"order_id": "A-1"}),)),
        Turn(tool_calls=(REFUND,)),
        Turn(content=answer),
    ]


def delegate(call_id: str, task: str) -> Turn:
    return Turn(tool_calls=(ToolCall(call_id, "billing", {"task": task}),))


async def test_a_sub_agent_waiting_for_approval_suspends_the_top_level_run() -> None:
    shop = Shop()
    llm = Scripts({
        "help with A-1": [delegate("c1", "refund A-1"), Turn(content="Your refund is on its way.")],
        "refund A-1": billing_turns(),
    })
    ctx = make_test_ctx(llm=llm, correlation_id="run-1")

    first = await shop.support.run("help with A-1", ctx)

    assert first.stop_reason == "suspended"
    suspended = first.evals["suspended"]
    assert suspended == Suspended(
        "run-1", (ToolCall("c1/s2", "refund", REFUND.arguments),), "awaiting_approval"
    )
    assert dict(suspended.kinds) == {"c1/s2": "approval"}
    assert dict(suspended.agents) == {"c1/s2": ("support", "billing")}
    assert suspended.asked_by("c1/s2") == "billing"
    assert shop.ran == [("lookup", "A-1")]

    done = await shop.support.resume("run-1", {"c1/s2": "approve"}, ctx)

    assert (done.stop_reason, done.output) == ("complete", "Your refund is on its way.")
    assert llm.read("help with A-1", "c1") == "Refunded $20 on A-1."
    assert llm.read("refund A-1", "s2") == "refunded 20.0 on A-1"
    assert shop.ran == [("lookup", "A-1"), ("refund", ("A-1", 20.0))]
    llm.assert_all_used()


async def test_a_denied_nested_call_is_reported_to_the_sub_agent_and_its_answer_goes_up() -> None:
    shop = Shop()
    llm = Scripts({
        "help with A-1": [delegate("c1", "refund A-1"), Turn(content="No refund, sorry.")],
        "refund A-1": billing_turns("The refund was not approved."),
    })
    ctx = make_test_ctx(llm=llm)
    first = await shop.support.run("help with A-1", ctx)

    done = await shop.support.resume(first.run_id, {"c1/s2": "reject"}, ctx)

    assert (done.stop_reason, done.output) == ("complete", "No refund, sorry.")
    assert llm.read("refund A-1", "s2") == NOT_APPROVED
    assert llm.read("help with A-1", "c1") == "The refund was not approved."
    assert shop.ran == [("lookup", "A-1")]


async def test_edited_arguments_reach_the_nested_call() -> None:
    shop = Shop()
    llm = Scripts({
        "help with A-1": [delegate("c1", "refund A-1"), Turn(content="Done.")],
        "refund A-1": billing_turns(),
    })
    ctx = make_test_ctx(llm=llm)
    first = await shop.support.run("help with A-1", ctx)

    edited = {"order_id": "A-1", "amount_usd": 15.0}
    done = await shop.support.resume(first.run_id, {"c1/s2": edited}, ctx)

    assert done.output == "Done."
    assert shop.ran == [("lookup", "A-1"), ("refund", ("A-1", 15.0))]


async def test_depth_three_suspends_every_level_and_resumes_with_one_decision() -> None:
    shop = Shop()
    desk = Agent(
        "desk", "fake", "You route requests.",
        cognition=ReActCognition(tools=[as_tool(
            shop.support, name="support", description="Hand a customer case to the support agent.",
            side_effecting=True,
        )]),
    )
    llm = Scripts({
        "case 7": [Turn(tool_calls=(ToolCall("d1", "support", {"task": "help with A-1"}),)),
                Turn(content="Case 7 closed.")],
        "help with A-1": [delegate("c1", "refund A-1"), Turn(content="Refund done.")],
        "refund A-1": billing_turns(),
    })
    ctx = make_test_ctx(llm=llm, correlation_id="run-3")

    first = await desk.run("case 7", ctx)

    suspended = first.evals["suspended"]
    assert [c.id for c in suspended.pending] == ["d1/c1/s2"]
    assert dict(suspended.agents) == {"d1/c1/s2": ("desk", "support", "billing")}

    done = await desk.resume("run-3", {"d1/c1/s2": "approve"}, ctx)

    assert (done.stop_reason, done.output) == ("complete", "Case 7 closed.")
    assert llm.read("case 7", "d1") == "Refund done."
    assert llm.read("help with A-1", "c1") == "Refunded $20 on A-1."
    assert shop.ran == [("lookup", "A-1"), ("refund", ("A-1", 20.0))]
    llm.assert_all_used()


async def test_ask_human_deep_inside_suspends_for_input_and_the_answer_reaches_it() -> None:
    asker = Agent("asker", "fake", "p", cognition=ReActCognition(tools=[ask_human]))
    boss = Agent("boss", "fake", "p", cognition=ReActCognition(tools=[as_tool(
        asker, name="asker", description="Ask the user for details the task needs.",
        side_effecting=False,
    )]))
    llm = Scripts({
        "sign in": [Turn(tool_calls=(ToolCall("b1", "asker", {"task": "get the code"}),)),
                 Turn(content="Signed in.")],
        "get the code": [
            Turn(tool_calls=(ToolCall("q1", "ask_human", {"question": "Code?"}),)),
            Turn(content="The code is 123456."),
        ],
    })
    ctx = make_test_ctx(llm=llm)
    first = await boss.run("sign in", ctx)
    suspended = first.evals["suspended"]
    assert (suspended.reason, dict(suspended.kinds)) == ("awaiting_input", {"b1/q1": "input"})

    with pytest.raises(ValueError) as info:
        await boss.resume(first.run_id, {"b1/q1": "approve"}, ctx)
    assert str(info.value) == (
        f"run {first.run_id!r}: call 'b1/q1' asks the human a question; its decision "
        "must be {'answer': '...'}, got 'approve'"
    )

    done = await boss.resume(first.run_id, {"b1/q1": {"answer": "123456"}}, ctx)
    assert done.output == "Signed in."
    assert llm.read("get the code", "q1") == "123456"
    assert llm.read("sign in", "b1") == "The code is 123456."


async def test_an_unknown_path_is_refused_listing_the_pending_paths_and_changes_nothing() -> None:
    shop = Shop()
    llm = Scripts({
        "help with A-1": [delegate("c1", "refund A-1"), Turn(content="Done.")],
        "refund A-1": billing_turns(),
    })
    ctx = make_test_ctx(llm=llm, correlation_id="run-u")
    await shop.support.run("help with A-1", ctx)

    for wrong in ("c1/s9", "c1", "s2"):
        with pytest.raises(ValueError) as info:
            await shop.support.resume("run-u", {wrong: "approve"}, ctx)
        assert str(info.value) == (
            f"run 'run-u': decisions name call id(s) [{wrong!r}] that are not pending; "
            "pending calls: ['c1/s2']"
        )

    done = await shop.support.resume("run-u", {"c1/s2": "approve"}, ctx)
    assert done.output == "Done."
    assert shop.ran == [("lookup", "A-1"), ("refund", ("A-1", 20.0))]


async def test_two_sub_agents_suspending_in_one_turn_and_a_partial_resume() -> None:
    """The same sub-agent delegated twice in one turn: unique paths; a resume that
    decides one sub-run's calls leaves the other pending."""
    shop = Shop()
    refund_b = ToolCall("s2", "refund", {"order_id": "B-2", "amount_usd": 5.0})
    llm = Scripts({
        "two orders": [
            Turn(tool_calls=(
                ToolCall("c1", "billing", {"task": "refund A-1"}),
                ToolCall("c2", "billing", {"task": "refund B-2"}),
                ToolCall("c3", "note", {"text": "two refunds asked"}),
            )),
            Turn(content="Both handled."),
        ],
        "refund A-1": billing_turns(),
        "refund B-2": [
            Turn(tool_calls=(ToolCall("s1", "lookup", {"order_id": "B-2"}),)),
            Turn(tool_calls=(refund_b,)),
            Turn(content="Refunded $5 on B-2."),
        ],
    })
    ctx = make_test_ctx(llm=llm, correlation_id="run-2")

    first = await shop.support.run("two orders", ctx)

    suspended = first.evals["suspended"]
    assert suspended.pending == (
        ToolCall("c1/s2", "refund", REFUND.arguments),
        ToolCall("c2/s2", "refund", refund_b.arguments),
    )
    assert dict(suspended.agents) == {
        "c1/s2": ("support", "billing"), "c2/s2": ("support", "billing"),
    }
    assert sorted(shop.ran) == [("lookup", "A-1"), ("lookup", "B-2"), ("note", "two refunds asked")]

    partial = await shop.support.resume("run-2", {"c2/s2": "approve"}, ctx)

    assert partial.stop_reason == "suspended"
    assert partial.evals["suspended"].pending == (ToolCall("c1/s2", "refund", REFUND.arguments),)
    assert shop.ran[3:] == [("refund", ("B-2", 5.0))]

    done = await shop.support.resume("run-2", {"c1/s2": "approve"}, ctx)

    assert (done.stop_reason, done.output) == ("complete", "Both handled.")
    assert [(m.tool_call_id, m.content) for m in done.messages if m.role == "tool"] == [
        ("c1", "Refunded $20 on A-1."),
        ("c2", "Refunded $5 on B-2."),
        ("c3", "n-1"),
    ]
    assert sorted(shop.ran) == [
        ("lookup", "A-1"), ("lookup", "B-2"), ("note", "two refunds asked"),
        ("refund", ("A-1", 20.0)), ("refund", ("B-2", 5.0)),
    ]
    llm.assert_all_used()


async def test_stream_resume_continues_the_nested_run() -> None:
    shop = Shop()
    llm = Scripts({
        "help with A-1": [delegate("c1", "refund A-1"), Turn(content="Done.")],
        "refund A-1": billing_turns(),
    })
    ctx = make_test_ctx(llm=llm)
    events = [e async for e in shop.support.stream("help with A-1", ctx)]
    interrupt = [e for e in events if isinstance(e, InterruptEvent)]
    assert [c.id for c in interrupt[0].suspended.pending] == ["c1/s2"]
    run_id = events[-1].result.run_id  # type: ignore[union-attr]

    resumed = [e async for e in shop.support.stream_resume(run_id, {"c1/s2": "approve"}, ctx)]

    results = [(e.call_id, e.content) for e in resumed if isinstance(e, ToolResultEvent)]
    assert results == [("c1", "Refunded $20 on A-1.")]
    final = resumed[-1]
    assert isinstance(final, FinalEvent)
    assert (final.result.stop_reason, final.result.output) == ("complete", "Done.")


async def test_a_workflow_agent_step_suspends_the_workflow_with_path_ids() -> None:
    shop = Shop()
    llm = Scripts({"refund A-1": billing_turns()})
    wf = Workflow("returns").add("refund", shop.billing, input=lambda inputs: "refund A-1")

    async def report(inputs: Any, ctx: RunContext) -> str:
        return f"report: {inputs['refund']}"

    wf.add("report", report, after=["refund"])
    ctx = make_test_ctx(llm=llm, correlation_id="wf-1")

    first = await wf.run("returns of the day", ctx)

    assert first.stop_reason == "suspended"
    suspended = first.evals["suspended"]
    assert suspended.pending == (ToolCall("refund/s2", "refund", REFUND.arguments),)
    assert dict(suspended.agents) == {"refund/s2": ("returns", "billing")}

    with pytest.raises(ValueError) as info:
        await wf.resume("wf-1", {"refund/s7": "approve"}, ctx)
    assert str(info.value) == (
        "workflow 'returns': decisions must map pending gates [] to 'approve' or 'reject' "
        "and calls waiting in agent steps ['refund/s2'] to their decisions; "
        "unknown gates ['refund/s7'], invalid values {}"
    )

    done = await wf.resume("wf-1", {"refund/s2": "approve"}, ctx)

    assert done.stop_reason == "complete"
    assert dict(done.outputs) == {
        "refund": "Refunded $20 on A-1.", "report": "report: Refunded $20 on A-1.",
    }
    assert shop.ran == [("lookup", "A-1"), ("refund", ("A-1", 20.0))]


async def test_a_nested_run_is_checkpointed_under_the_call_that_started_it() -> None:
    """The outer checkpoint records which call waits on which nested run."""
    shop = Shop()
    llm = Scripts({
        "help with A-1": [delegate("c1", "refund A-1")], "refund A-1": billing_turns(),
    })
    ctx = make_test_ctx(llm=llm, correlation_id="run-k")
    await shop.support.run("help with A-1", ctx)

    outer, _ = await ctx.store.get_versioned("checkpoint:run-k:support")
    assert dict(outer.pending) == {"c1": "nested"}
    (sub,) = outer.nested.values()
    assert (sub.key, sub.agent) == ("run-k:support/c1", "billing")
    inner, _ = await ctx.store.get_versioned(f"checkpoint:{sub.key}")
    assert (inner.status, dict(inner.pending)) == ("suspended", {"s2": "approval"})



async def test_every_model_call_is_charged_once_to_the_top_level_budget() -> None:
    """The resumed sub-run makes only the model calls still to come; the shared budget
    is charged once per model call, in the run and in the resume together."""
    shop = Shop()
    priced = [Turn(t.content, t.tool_calls, Usage(input_tokens=10, cost_usd=0.25, requests=1))
              for t in billing_turns()]
    llm = Scripts({
        "help with A-1": [
            Turn(tool_calls=delegate("c1", "refund A-1").tool_calls,
                 usage=Usage(input_tokens=10, cost_usd=0.5, requests=1)),
            Turn(content="Done.", usage=Usage(input_tokens=10, cost_usd=0.5, requests=1)),
        ],
        "refund A-1": priced,
    })
    budget = Budget(max_cost_usd=10.0)
    ctx = make_test_ctx(
        llm=llm, budget=budget, tool_middleware=[meter(), idempotent()],
        chat_middleware=[meter()],
    )
    first = await shop.support.run("help with A-1", ctx)
    assert budget.spent_usd == 1.0

    done = await shop.support.resume(first.run_id, {"c1/s2": "approve"}, ctx)

    assert done.output == "Done."
    assert budget.spent_usd == 1.75  # 2 x 0.5 (support) + 3 x 0.25 (billing)
    assert shop.ran == [("lookup", "A-1"), ("refund", ("A-1", 20.0))]
    llm.assert_all_used()


async def test_a_workflow_used_as_a_tool_suspends_the_agent_above_at_gates_and_steps() -> None:
    shop = Shop()
    ship = (
        Workflow("ship", description="Refund and review an order.")
        .add("refund", shop.billing, input=lambda inputs: "refund A-1")
        .gate("review", "Ship the replacement?")
    )
    desk = Agent("desk", "fake", "p", cognition=ReActCognition(tools=[as_tool(
        ship, name="ship", description="Run the refund-and-ship workflow for an order.",
        side_effecting=True,
    )]))
    llm = Scripts({
        "order A-1": [Turn(tool_calls=(ToolCall("w1", "ship", {"task": "A-1"}),)),
                      Turn(content="Handled.")],
        "refund A-1": billing_turns(),
    })
    ctx = make_test_ctx(llm=llm)

    first = await desk.run("order A-1", ctx)

    suspended = first.evals["suspended"]
    assert [c.id for c in suspended.pending] == ["w1/review", "w1/refund/s2"]
    assert dict(suspended.agents) == {
        "w1/review": ("desk", "ship"), "w1/refund/s2": ("desk", "ship", "billing"),
    }

    done = await desk.resume(first.run_id, {"w1/review": "approve", "w1/refund/s2": "approve"}, ctx)

    assert done.output == "Handled."
    assert llm.read("order A-1", "w1") == "refund: Refunded $20 on A-1.\nreview: True"
    assert shop.ran == [("lookup", "A-1"), ("refund", ("A-1", 20.0))]


async def test_a_resumed_sub_run_that_asks_again_suspends_the_run_above_again() -> None:
    shop = Shop()
    second = ToolCall("s3", "refund", {"order_id": "A-1", "amount_usd": 4.0})
    llm = Scripts({
        "help with A-1": [delegate("c1", "refund A-1"), Turn(content="Both refunds done.")],
        "refund A-1": [
            *billing_turns()[:2],
            Turn(tool_calls=(second,)),
            Turn(content="Refunded $20 and the $4 shipping."),
        ],
    })
    ctx = make_test_ctx(llm=llm, correlation_id="run-a")
    await shop.support.run("help with A-1", ctx)

    again = await shop.support.resume("run-a", {"c1/s2": "approve"}, ctx)

    assert again.evals["suspended"].pending == (ToolCall("c1/s3", "refund", second.arguments),)
    done = await shop.support.resume("run-a", {"c1/s3": "approve"}, ctx)
    assert done.output == "Both refunds done."
    assert llm.read("help with A-1", "c1") == "Refunded $20 and the $4 shipping."
    assert shop.ran == [("lookup", "A-1"), ("refund", ("A-1", 20.0)), ("refund", ("A-1", 4.0))]


async def test_one_resume_decides_calls_at_several_depths() -> None:
    shop = Shop()
    desk = Agent("desk", "fake", "p", cognition=ReActCognition(tools=[
        as_tool(shop.support, name="support",
                description="Hand a customer case to the support agent.", side_effecting=True),
        shop.billing_tool,
    ]))
    refund_b = ToolCall("s2", "refund", {"order_id": "B-2", "amount_usd": 5.0})
    llm = Scripts({
        "two cases": [
            Turn(tool_calls=(ToolCall("d1", "support", {"task": "help with A-1"}),
                             ToolCall("d2", "billing", {"task": "refund B-2"}))),
            Turn(content="Both cases closed."),
        ],
        "help with A-1": [delegate("c1", "refund A-1"), Turn(content="A-1 refunded.")],
        "refund A-1": billing_turns(),
        "refund B-2": [Turn(tool_calls=(refund_b,)), Turn(content="B-2 not refunded.")],
    })
    ctx = make_test_ctx(llm=llm)
    first = await desk.run("two cases", ctx)

    suspended = first.evals["suspended"]
    assert [c.id for c in suspended.pending] == ["d1/c1/s2", "d2/s2"]
    assert [suspended.asked_by(c.id) for c in suspended.pending] == ["billing", "billing"]

    done = await desk.resume(first.run_id, {"d1/c1/s2": "approve", "d2/s2": "reject"}, ctx)

    assert done.output == "Both cases closed."
    assert llm.read("refund B-2", "s2") == NOT_APPROVED
    assert [(m.tool_call_id, m.content) for m in done.messages if m.role == "tool"] == [
        ("d1", "A-1 refunded."), ("d2", "B-2 not refunded."),
    ]
    assert shop.ran == [("lookup", "A-1"), ("refund", ("A-1", 20.0))]
    llm.assert_all_used()


async def test_a_model_call_id_holding_a_slash_is_refused_and_the_model_told() -> None:
    """A path id ("c1/s1") names a call inside a sub-run, so a model's own call id may
    not hold "/": the call does not run, is never pending, and the model reads why."""
    shop = Shop()
    slashed = ToolCall("toolu/1", "refund", {"order_id": "A-1", "amount_usd": 20.0})
    llm = FakeLLM.script([Turn(tool_calls=(slashed,)), Turn(content="Not refunded.")])
    ctx = make_test_ctx(llm=llm)

    done = await shop.billing.run("refund A-1", ctx)

    assert (done.stop_reason, done.output) == ("complete", "Not refunded.")
    assert [(m.tool_call_id, m.content, m.is_error) for m in done.messages if m.role == "tool"] == [
        ("toolu/1", SLASHED.format(id="toolu/1", tool="refund"), True),
    ]
    assert shop.ran == []


SLASHED = (
    "The call to {tool!r} did not run: its call id {id!r} holds '/', which is reserved for "
    "the paths of calls made inside delegated runs ('c1/s3'). Call the tool again under an "
    "id without '/'."
)


async def test_a_call_id_shaped_like_a_path_does_not_take_the_sub_runs_decision() -> None:
    """Calls "c1" (delegating) and "c1/s1" in one turn: the decision for "c1/s1" reaches
    the sub-run's refund only, and the own "c1/s1" never runs nor waits."""
    shop = Shop()

    @tool(side_effecting=True, requires_approval=True)
    def close_account(customer: str) -> str:
        """Close the customer's account for good and return the confirmation."""
        shop.ran.append(("close_account", customer))
        return f"closed {customer}"

    support = Agent("support", "fake", "You help customers.",
                    cognition=ReActCognition(tools=[shop.billing_tool, close_account]))
    refund = ToolCall("s1", "refund", {"order_id": "A-1", "amount_usd": 20.0})
    llm = Scripts({
        "help with A-1": [
            Turn(tool_calls=(ToolCall("c1", "billing", {"task": "refund A-1"}),
                             ToolCall("c1/s1", "close_account", {"customer": "ann"}))),
            Turn(content="Refunded; the account stays open."),
        ],
        "refund A-1": [Turn(tool_calls=(refund,)), Turn(content="Refunded $20 on A-1.")],
    })
    ctx = make_test_ctx(llm=llm)

    first = await support.run("help with A-1", ctx)
    suspended = first.evals["suspended"]
    assert suspended.pending == (ToolCall("c1/s1", "refund", refund.arguments),)
    assert dict(suspended.agents) == {"c1/s1": ("support", "billing")}

    done = await support.resume(first.run_id, {"c1/s1": "approve"}, ctx)

    assert (done.stop_reason, done.output) == ("complete", "Refunded; the account stays open.")
    assert [(m.tool_call_id, m.content) for m in done.messages if m.role == "tool"] == [
        ("c1", "Refunded $20 on A-1."),
        ("c1/s1", SLASHED.format(id="c1/s1", tool="close_account")),
    ]
    assert shop.ran == [("refund", ("A-1", 20.0))]
    llm.assert_all_used()


async def test_a_tool_delegates_a_task_of_text_and_media_to_a_sub_agent() -> None:
    scan = Image(b"\x89PNG\r\n\x1a\n" + bytes(64), "image/png")
    llm = Scripts({
        "Check the receipt.": [Turn(tool_calls=(ToolCall("c1", "check_receipt", {}),)),
                               Turn(content="The receipt is fine.")],
        "Is this receipt legible?": [Turn(content="Legible.")],
    })
    reader = Agent("reader", "fake", "You read receipts.")

    @tool(side_effecting=False)
    async def check_receipt(ctx: RunContext) -> str:
        """Have the reader look at the scanned receipt."""
        result = await reader.run_delegated(["Is this receipt legible?", scan], ctx.child())
        return str(result.output)

    clerk = Agent("clerk", "fake", "p", cognition=ReActCognition(tools=[check_receipt]))
    result = await clerk.run("Check the receipt.", make_test_ctx(llm=llm))

    assert result.output == "The receipt is fine."
    (asked,) = llm.by_task["Is this receipt legible?"].requests[0].messages
    assert (asked.content, asked.attachments) == ("Is this receipt legible?", (scan,))
    assert llm.read("Check the receipt.", "c1") == "Legible."
    llm.assert_all_used()
