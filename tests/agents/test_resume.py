"""agent.resume: approve, reject or edit each held call; decisions are checked before
anything changes; only a suspended run can be resumed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentkit.agents import Agent, AgentResult, RunNotResumable
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import Message, ToolCall
from agentkit.core.runtime import RunContext
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.state.stores.sqlite import SQLiteStore
from agentkit.tools import tool

MAIL = ToolCall("c-mail", "send_email", {"to": "a@example.com", "body": "hi"})
LOOK = ToolCall("c-look", "lookup", {"order_id": "A1"})
NOT_APPROVED = (
    "The call to 'send_email' was not approved by a human, so it did not run. "
    "Do not retry it unchanged; continue without it or ask differently."
)


class Desk:
    """An agent under "gated" autonomy whose tools record every execution."""

    def __init__(self, *turns: Turn) -> None:
        self.effects: list[tuple[str, dict[str, Any]]] = []

        @tool(side_effecting=False)
        def lookup(order_id: str) -> str:
            """Look up a customer order and return its current status."""
            self.effects.append(("lookup", {"order_id": order_id}))
            return "shipped"

        @tool(side_effecting=True)
        def send_email(to: str, body: str) -> str:
            """Send one email to a single recipient and return the provider message id."""
            self.effects.append(("send_email", {"to": to, "body": body}))
            return f"sent to {to}"

        self.agent = Agent("desk", "fake", "p", cognition=ReActCognition([lookup, send_email]))
        self.llm = FakeLLM.script([Turn(tool_calls=(LOOK, MAIL)), *turns])
        self.ctx = make_test_ctx(llm=self.llm, autonomy="gated", correlation_id="run-1")

    async def suspend(self) -> AgentResult:
        result = await self.agent.run("email the customer", self.ctx)
        assert result.stop_reason == "suspended"
        assert self.effects == []
        return result

    def fresh_ctx(self) -> RunContext:
        """Another context over the same store, as a later request would build."""
        return make_test_ctx(llm=self.llm, store=self.ctx.store, autonomy="gated")

    async def resume(self, decisions: dict[str, Any]) -> AgentResult:
        return await self.agent.resume("run-1", decisions, self.fresh_ctx())

    def tool_message(self, call_id: str) -> Message:
        """The result of ``call_id`` as the model read it on its latest request."""
        (message,) = [m for m in self.llm.requests[-1].messages if m.tool_call_id == call_id]
        return message


async def test_approve_runs_the_held_call_once_with_its_original_arguments() -> None:
    desk = Desk(Turn(content="Emailed."))
    await desk.suspend()

    result = await desk.resume({"c-mail": "approve"})

    assert (result.stop_reason, result.output, result.run_id) == ("complete", "Emailed.", "run-1")
    assert desk.effects == [
        ("lookup", {"order_id": "A1"}),
        ("send_email", {"to": "a@example.com", "body": "hi"}),
    ]
    assert desk.tool_message("c-mail") == Message(
        role="tool", content="sent to a@example.com", tool_call_id="c-mail", name="send_email"
    )
    assert [m.tool_call_id for m in result.messages if m.role == "tool"] == ["c-look", "c-mail"]
    assert result.steps == 2
    desk.llm.assert_all_used()


async def test_reject_tells_the_model_the_call_was_not_approved() -> None:
    desk = Desk(Turn(content="I did not send it."))
    await desk.suspend()

    result = await desk.resume({"c-mail": "reject"})

    assert result.output == "I did not send it."
    assert desk.effects == [("lookup", {"order_id": "A1"})]
    assert desk.tool_message("c-mail") == Message(
        role="tool", content=NOT_APPROVED, tool_call_id="c-mail", name="send_email", is_error=True
    )


async def test_a_pending_call_with_no_decision_is_rejected() -> None:
    desk = Desk(Turn(content="Not sent."))
    await desk.suspend()

    await desk.resume({})

    assert desk.effects == [("lookup", {"order_id": "A1"})]
    assert desk.tool_message("c-mail").content == NOT_APPROVED
    assert desk.tool_message("c-mail").is_error is True


async def test_edited_arguments_are_exactly_the_arguments_that_run() -> None:
    desk = Desk(Turn(content="Emailed the manager."))
    await desk.suspend()
    edited = {"to": "manager@example.com", "body": "escalated"}

    await desk.resume({"c-mail": edited})

    assert desk.effects[1] == ("send_email", edited)
    assert desk.tool_message("c-mail") == Message(
        role="tool",
        content="(A human edited the arguments before approving: "
        "{'to': 'manager@example.com', 'body': 'escalated'})\nsent to manager@example.com",
        tool_call_id="c-mail",
        name="send_email",
    )


async def test_invalid_edited_arguments_become_an_argument_error_for_the_model() -> None:
    desk = Desk(Turn(content="Could not send."))
    await desk.suspend()

    result = await desk.resume({"c-mail": {"recipient": "x@example.com"}})

    assert result.stop_reason == "complete"
    assert desk.effects == [("lookup", {"order_id": "A1"})]
    assert desk.tool_message("c-mail") == Message(
        role="tool",
        content="tool 'send_email' call rejected: missing required argument(s) ['to', 'body']; "
        "unexpected argument(s) ['recipient']. Accepted arguments: ['to', 'body']",
        tool_call_id="c-mail",
        name="send_email",
        is_error=True,
    )


@pytest.mark.parametrize(
    ("decisions", "message"),
    [
        (
            {"c-mail": "approve", "c-nope": "approve"},
            "run 'run-1': decisions name call id(s) ['c-nope'] that are not pending; "
            "pending calls: ['c-mail']",
        ),
        (
            {"c-look": "approve"},
            "run 'run-1': decisions name call id(s) ['c-look'] that are not pending; "
            "pending calls: ['c-mail']",
        ),
        (
            {"c-mail": "yes"},
            "run 'run-1': call 'c-mail' waits for approval; its decision must be 'approve', "
            "'reject', 'reject: <reason>' or a dict of edited arguments, got 'yes'",
        ),
        (
            {"c-mail": True},
            "run 'run-1': call 'c-mail' waits for approval; its decision must be 'approve', "
            "'reject', 'reject: <reason>' or a dict of edited arguments, got True",
        ),
    ],
    ids=["unknown-id", "ungated-id", "bad-word", "bad-type"],
)
async def test_bad_decisions_raise_before_anything_changes(
    decisions: dict[str, Any], message: str
) -> None:
    desk = Desk(Turn(content="Emailed."))
    before = await desk.suspend()

    with pytest.raises(ValueError) as info:
        await desk.resume(decisions)
    assert str(info.value) == message
    assert desk.effects == []
    assert len(desk.llm.requests) == 1

    result = await desk.resume({"c-mail": "approve"})
    assert result.output == "Emailed."
    assert result.messages[:2] == before.messages
    assert [name for name, _ in desk.effects] == ["lookup", "send_email"]


async def test_a_completed_run_is_not_resumable() -> None:
    desk = Desk(Turn(content="Emailed."))
    await desk.suspend()
    await desk.resume({"c-mail": "approve"})

    with pytest.raises(RunNotResumable) as info:
        await desk.resume({"c-mail": "approve"})
    assert str(info.value) == "run 'run-1' cannot be resumed: it is complete, not suspended"
    assert (info.value.run_id, info.value.reason) == ("run-1", "it is complete, not suspended")
    assert [name for name, _ in desk.effects] == ["lookup", "send_email"]


async def test_an_unknown_run_id_is_not_resumable() -> None:
    desk = Desk()
    with pytest.raises(RunNotResumable) as info:
        await desk.agent.resume("run-404", {}, desk.fresh_ctx())
    assert str(info.value) == (
        "run 'run-404' cannot be resumed: agent 'desk' has no checkpoint for this run"
        + IN_MEMORY_HINT
    )


async def test_another_agent_cannot_resume_a_run_it_does_not_own() -> None:
    desk = Desk()
    await desk.suspend()
    other = Agent("other", "fake", "p", cognition=desk.agent.cognition)

    with pytest.raises(RunNotResumable) as info:
        await other.resume("run-1", {"c-mail": "approve"}, desk.fresh_ctx())
    assert str(info.value) == (
        "run 'run-1' cannot be resumed: agent 'other' has no checkpoint for this run"
        + IN_MEMORY_HINT
    )


IN_MEMORY_HINT = (
    ". If the run was started with another context, that is why: an InMemoryStore belongs to "
    "the context it was made with (make_ctx() and make_test_ctx() make a new one each time), "
    "so resume with the context that started the run, or give both contexts one durable "
    "store, such as make_ctx(llm, store=SQLiteStore(path))"
)


@tool(side_effecting=True)
def notify(to: str, body: str) -> str:
    """Send one email to a single recipient and return the message id."""
    return f"sent to {to}"


async def test_resuming_on_a_fresh_test_context_says_the_store_was_in_memory() -> None:
    llm = FakeLLM.script([Turn(tool_calls=(ToolCall("c1", "notify", {"to": "a@b.c",
                                                                    "body": "hi"}),))])
    agent = Agent("mailer", "fake", "p", cognition=ReActCognition(tools=[notify]))
    first = await agent.run("mail them", make_test_ctx(llm=llm, autonomy="gated"))
    assert first.stop_reason == "suspended"
    with pytest.raises(RunNotResumable) as info:
        await agent.resume(first.run_id, {"c1": "approve"}, make_test_ctx())
    assert str(info.value) == (
        f"run {first.run_id!r} cannot be resumed: agent 'mailer' has no checkpoint for this "
        "run" + IN_MEMORY_HINT
    )


async def test_a_durable_store_gets_no_in_memory_hint(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "runs.db")
    try:
        with pytest.raises(RunNotResumable) as info:
            await Agent("mailer", "fake", "p").resume("run-9", {}, make_test_ctx(store=store))
    finally:
        store.close()
    assert str(info.value) == (
        "run 'run-9' cannot be resumed: agent 'mailer' has no checkpoint for this run"
    )


async def test_a_resumed_run_suspends_again_at_the_next_gated_turn() -> None:
    again = ToolCall("c-mail-2", "send_email", {"to": "b@example.com", "body": "more"})
    desk = Desk(Turn(tool_calls=(again,)), Turn(content="Both sent."))
    await desk.suspend()

    second = await desk.resume({"c-mail": "approve"})
    assert second.stop_reason == "suspended"
    assert second.evals["suspended"].pending == (again,)
    assert second.steps == 2

    final = await desk.resume({"c-mail-2": "approve"})
    assert (final.stop_reason, final.output, final.steps) == ("complete", "Both sent.", 3)
    assert [args["to"] for name, args in desk.effects if name == "send_email"] == [
        "a@example.com",
        "b@example.com",
    ]


async def test_recover_refuses_a_run_that_is_waiting_for_a_human() -> None:
    desk = Desk()
    await desk.suspend()

    with pytest.raises(RunNotResumable) as info:
        await desk.agent.recover("run-1", desk.fresh_ctx())
    assert str(info.value) == "run 'run-1' cannot be resumed: it is suspended, not running"
    assert desk.effects == []
