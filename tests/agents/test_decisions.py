"""Decisions are values: one module parses, checks and routes a person's decisions, and
refuses a bad one with the same InvalidDecision from an Agent and a Workflow alike."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit import InvalidDecision
from agentkit.agents import Agent, Workflow
from agentkit.agents.cognition import ReActCognition
from agentkit.agents.decisions import (
    AnswerText,
    Approve,
    EditArguments,
    ElicitationReply,
    ForSubRun,
    Reject,
    Undecided,
    checked,
    decision_for,
    decision_schema,
    parse,
    routed,
)
from agentkit.core.contracts.errors import HumanInputRequired
from agentkit.core.contracts.types import ToolCall
from agentkit.core.runtime.current_call import current_call
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.tools import as_tool, ask_human, tool

PENDING = {
    "c1": "approval", "c2": "input", "c3": "elicitation", "c4": "unknown_outcome",
    "g1": "gate", "c5/s2": "approval",
}


@pytest.mark.parametrize(
    ("kind", "raw", "decision"),
    [
        ("approval", "approve", Approve()),
        ("approval", "reject", Reject()),
        ("approval", {"to": "b@example.com"}, EditArguments({"to": "b@example.com"})),
        ("unknown_outcome", "approve", Approve()),
        ("unknown_outcome", "reject", Reject()),
        ("input", {"answer": "Braga"}, AnswerText("Braga")),
        ("elicitation", {"action": "accept", "content": {"city": "Braga"}},
         ElicitationReply({"action": "accept", "content": {"city": "Braga"}})),
        ("elicitation", {"action": "decline"}, ElicitationReply({"action": "decline"})),
        ("elicitation", {"answer": "Braga"}, ElicitationReply({"answer": "Braga"})),
        ("gate", "approve", Approve()),
        ("nested", {"s2": "approve"}, ForSubRun({"s2": "approve"})),
    ],
)
def test_every_kind_parses_its_accepted_forms_to_one_value(
    kind: str, raw: Any, decision: Any
) -> None:
    assert parse(kind, raw) == decision
    assert decision_for(kind, raw) == decision


def test_no_decision_is_undecided() -> None:
    assert decision_for("approval", None) == Undecided()
    assert decision_for(None, "approve") == Undecided()


@pytest.mark.parametrize(
    ("decisions", "message"),
    [
        ({"c1": "yes"}, "run 'r': call 'c1' waits for approval; its decision must be "
         "'approve', 'reject' or a dict of edited arguments, got 'yes'"),
        ({"c2": "approve"}, "run 'r': call 'c2' asks the human a question; its decision "
         "must be {'answer': '...'}, got 'approve'"),
        ({"c3": "Braga"}, "run 'r': call 'c3' waits for the answer to a tool's question; its "
         "decision must be {'action': 'accept', 'content': {...}}, {'action': 'decline'}, "
         "{'action': 'cancel'} or {'answer': '...'}, got 'Braga'"),
        ({"c4": 1}, "run 'r': call 'c4' may have acted before its worker stopped (its "
         "outcome is unknown); its decision must be 'approve', 'reject' or a dict of edited "
         "arguments, got 1"),
        ({"g1": {"x": 1}}, "run 'r': call 'g1' is a human gate; its decision must be "
         "'approve' or 'reject', got {'x': 1}"),
        ({"c5": "approve"}, "run 'r': decisions name call id(s) ['c5'] that are not "
         "pending; pending calls: ['c1', 'c2', 'c3', 'c4', 'c5/s2', 'g1']"),
    ],
    ids=["approval", "input", "elicitation", "unknown-outcome", "gate", "unknown-id"],
)
def test_a_decision_that_does_not_fit_names_the_pending_ids_and_accepted_forms(
    decisions: dict[str, Any], message: str
) -> None:
    with pytest.raises(InvalidDecision) as info:
        checked("r", PENDING, decisions)
    assert str(info.value) == message
    assert isinstance(info.value, ValueError)
    assert info.value.pending == PENDING


def test_checked_decisions_are_frozen_and_paths_route_to_the_waiting_call() -> None:
    given = checked("r", PENDING, {"c1": {"to": ["a"]}, "c5/s2": "approve"})
    assert given == {"c1": {"to": ("a",)}, "c5/s2": "approve"}
    assert routed(given, {"c5"}) == {"c1": {"to": ("a",)}, "c5": {"s2": "approve"}}
    assert routed({"c5/s2/t1": "reject"}, {"c5"}) == {"c5": {"s2/t1": "reject"}}


class Office:
    """A manager delegates to a clerk (as a tool); the clerk's tools need a person: an
    email needs approval, ``ask_human`` an answer, ``ship`` asks its own question.
    ``ran`` records every body that ran."""

    def __init__(self) -> None:
        self.ran: list[tuple[str, Any]] = []

        @tool(side_effecting=True, requires_approval=True)
        def send_email(to: str) -> str:
            """Send one email to a single recipient and return the provider message id."""
            self.ran.append(("send_email", to))
            return f"sent to {to}"

        @tool(side_effecting=False)
        async def ship(parcel: str) -> str:
            """Ship a parcel; asks the person where to when it does not know."""
            call = current_call.get()
            answer = None if call is None else call.answers.get("Where to?")
            if answer is None:
                raise HumanInputRequired("ship", "Where to?", None, "the courier")
            self.ran.append(("ship", answer["answer"]))
            return f"{parcel} shipped to {answer['answer']}"

        self.clerk = Agent("clerk", "fake", "You do errands.",
                           cognition=ReActCognition([send_email, ship, ask_human]))
        clerk = as_tool(self.clerk, name="clerk", side_effecting=False,
                        description="Run one errand for the manager and report back.")
        self.manager = Agent("manager", "fake", "You delegate.",
                             cognition=ReActCognition([clerk]))


def errand(*calls: ToolCall, then: str = "Done.") -> list[Turn]:
    return [Turn(tool_calls=calls), Turn(content=then)]


async def test_every_kind_of_decision_reaches_a_sub_run_through_its_path() -> None:
    office = Office()
    mail = ToolCall("s1", "send_email", {"to": "a@example.com"})
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "clerk", {"task": "mail"}),)),   # manager
        Turn(tool_calls=(mail,)),                                         # clerk: gated
        Turn(tool_calls=(ToolCall("s2", "ask_human", {"question": "Which box?"}),)),
        Turn(tool_calls=(ToolCall("s3", "ship", {"parcel": "box"}),)),
        Turn(content="Clerk done."),
        Turn(content="Manager done."),
    ])
    ctx = make_test_ctx(llm=llm, autonomy="gated", correlation_id="run-d")

    first = await office.manager.run("errands", ctx)
    assert first.suspended is not None
    assert dict(first.suspended.kinds) == {"c1/s1": "approval"}
    with pytest.raises(InvalidDecision) as info:
        await office.manager.resume("run-d", {"c1/s1": "yes"}, ctx)
    assert str(info.value) == (
        "run 'run-d': call 'c1/s1' waits for approval; its decision must be 'approve', "
        "'reject' or a dict of edited arguments, got 'yes'"
    )

    second = await office.manager.resume("run-d", {"c1/s1": {"to": "b@example.com"}}, ctx)
    assert second.suspended is not None
    assert dict(second.suspended.kinds) == {"c1/s2": "input"}
    third = await office.manager.resume("run-d", {"c1/s2": {"answer": "the red one"}}, ctx)
    assert third.suspended is not None
    assert dict(third.suspended.kinds) == {"c1/s3": "elicitation"}
    done = await office.manager.resume("run-d", {"c1/s3": {"answer": "Braga"}}, ctx)

    assert done.output == "Manager done."
    assert office.ran == [("send_email", "b@example.com"), ("ship", "Braga")]
    llm.assert_all_used()


async def test_a_workflow_refuses_a_bad_decision_for_its_agent_step_as_an_agent_does() -> None:
    office = Office()
    mail = ToolCall("s1", "send_email", {"to": "a@example.com"})
    wf = Workflow("errands").add("mail", office.clerk)
    ctx = make_test_ctx(llm=FakeLLM.script(errand(mail)), autonomy="gated",
                        correlation_id="wf-d")
    first = await wf.run("mail a", ctx)
    assert first.suspended is not None
    assert dict(first.suspended.kinds) == {"mail/s1": "approval"}

    with pytest.raises(InvalidDecision) as info:
        await wf.resume("wf-d", {"mail/s1": "yes"}, ctx)
    assert str(info.value) == (
        "run 'wf-d': call 'mail/s1' waits for approval; its decision must be 'approve', "
        "'reject' or a dict of edited arguments, got 'yes'"
    )
    done = await wf.resume("wf-d", {"mail/s1": "reject"}, ctx)
    assert done.stop_reason == "complete"
    assert office.ran == []


@pytest.mark.parametrize("kind", ["approval", "unknown_outcome", "gate", "input", "elicitation"])
def test_the_decision_schema_of_a_kind_accepts_exactly_the_forms_parse_takes(kind: str) -> None:
    import jsonschema

    schema = decision_schema(kind)
    jsonschema.Draft202012Validator.check_schema(schema)
    values: list[Any] = [
        "approve", "reject", "yes", 3, None, [], {}, {"usd": 5}, {"answer": "blue"},
        {"answer": "blue", "also": 1}, {"answer": 7}, {"action": "accept"},
        {"action": "accept", "content": {"n": 1}}, {"action": "accept", "content": 5},
        {"action": "decline"}, {"action": "cancel"}, {"action": "later"},
    ]
    for value in values:
        valid = jsonschema.Draft202012Validator(schema).is_valid(value)
        assert valid == (parse(kind, value) is not None), (kind, value)


def test_a_kind_without_a_decision_form_is_named_with_the_kinds_that_have_one() -> None:
    with pytest.raises(ValueError) as raised:
        decision_schema("nested")
    assert str(raised.value) == (
        "no decision form is known for pending kind 'nested'; kinds: ['approval', "
        "'elicitation', 'gate', 'input', 'unknown_outcome']")
