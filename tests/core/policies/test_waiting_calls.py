"""A tool call that waits for a person is an outcome, not a failure: audit() records it
as ``suspended``, tracing() ends its span without an error and says what it waits for,
and idempotent() keeps nothing, so the call runs once when the person has answered."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.errors import HumanInputRequired
from agentkit.core.contracts.types import ToolCall, ToolRequest
from agentkit.core.policies import AuditRecord, audit, idempotent, tracing
from agentkit.core.runtime.current_call import current_call
from agentkit.core.testing import FakeLLM, RecordingTracer, Turn, make_test_ctx
from agentkit.state.stores.memory import InMemoryStore
from agentkit.tools import as_tool, tool


def decisions_of(records: list[Any]) -> list[tuple[str | None, str, str, str | None]]:
    return [(r.call_id, r.tool, r.decision, r.error) for r in records]


async def test_a_delegating_call_whose_sub_run_waits_is_suspended_not_failed() -> None:
    ran: list[str] = []

    @tool(side_effecting=True, requires_approval=True)
    def refund(order_id: str) -> str:
        """Issue a refund against a customer order and return the confirmation."""
        ran.append(order_id)
        return f"refunded {order_id}"

    billing = Agent("billing", "fake", "You refund.", cognition=ReActCognition([refund]))
    support = Agent("support", "fake", "You help.", cognition=ReActCognition([
        as_tool(billing, name="billing", side_effecting=True,
                description="Ask billing to settle a refund and report back."),
    ]))
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "billing", {"task": "refund A-1"}),)),
        Turn(tool_calls=(ToolCall("s1", "refund", {"order_id": "A-1"}),)),
        Turn(content="Refunded A-1."),
        Turn(content="Billing refunded A-1."),
    ])
    log, tracer = InMemoryStore(), RecordingTracer()
    ctx = make_test_ctx(llm=llm, tracer=tracer, correlation_id="run-w",
                        tool_middleware=[tracing(), audit(log), idempotent()])

    first = await support.run("refund A-1", ctx)
    assert first.suspended is not None
    assert [c.id for c in first.suspended.pending] == ["c1/s1"]
    waiting = await log.list("audit")
    assert all(isinstance(r, AuditRecord) for r in waiting)
    assert decisions_of(waiting) == [("c1", "billing", "suspended", None)]
    assert waiting[0].result_sha256 is None
    (span,) = tracer.named("execute_tool billing")
    assert span.errors == []
    assert "error.type" not in span.attributes
    assert span.attributes["agentkit.waiting"] == "sub-run billing: s1 (approval)"
    assert span.events == []

    done = await support.resume("run-w", {"c1/s1": "approve"}, ctx)
    assert done.output == "Billing refunded A-1."
    assert ran == ["A-1"]
    assert decisions_of(await log.list("audit")) == [
        ("c1", "billing", "suspended", None),
        ("s1", "refund", "executed", None),
        ("c1", "billing", "executed", None),
    ]
    assert [s.attributes.get("agentkit.waiting") for s in tracer.named("execute_tool billing")
            ] == ["sub-run billing: s1 (approval)", None]


async def test_a_question_mid_call_is_suspended_and_its_span_names_the_question() -> None:
    asked: list[str] = []

    @tool(side_effecting=False)
    async def ship(parcel: str) -> str:
        """Ship a parcel; asks the person where to when it does not know."""
        call = current_call.get()
        answer = None if call is None else call.answers.get("Where to?")
        if answer is None:
            asked.append(parcel)
            raise HumanInputRequired("ship", "Where to?", None, "the courier")
        return f"{parcel} shipped to {answer['answer']}"

    agent = Agent("post", "fake", "You ship.", cognition=ReActCognition([ship]))
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "ship", {"parcel": "box"}),)),
        Turn(content="Shipped to Braga."),
    ])
    log, tracer = InMemoryStore(), RecordingTracer()
    ctx = make_test_ctx(llm=llm, tracer=tracer, correlation_id="run-q",
                        tool_middleware=[tracing(), audit(log)])

    first = await agent.run("ship the box", ctx)
    assert first.stop_reason == "suspended"
    (span,) = tracer.named("execute_tool ship")
    assert (span.errors, span.attributes["agentkit.waiting"]) == ([], "elicitation: Where to?")
    done = await agent.resume("run-q", {"c1": {"answer": "Braga"}}, ctx)

    assert done.output == "Shipped to Braga."
    assert asked == ["box"]
    assert decisions_of(await log.list("audit")) == [
        ("c1", "ship", "suspended", None),
        ("c1", "ship", "executed", None),
    ]


async def test_outside_an_agent_loop_invoke_tool_still_raises_the_question() -> None:
    @tool(side_effecting=False)
    async def ask(question: str) -> str:
        """Put a question to whoever is at the other end and return their reply."""
        raise HumanInputRequired("ask", question)

    log = InMemoryStore()
    ctx = make_test_ctx(tool_middleware=[audit(log)])

    with pytest.raises(HumanInputRequired) as info:
        await ctx.invoker.invoke_tool(ToolRequest("ask", {"question": "Why?"}, ask), ctx)
    assert str(info.value) == "tool 'ask' needs a person's answer: Why?"
    assert decisions_of(await log.list("audit")) == [(None, "ask", "suspended", None)]
