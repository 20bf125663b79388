"""A tool that needs a person's answer mid-call suspends the run; the answer resumes it."""

from __future__ import annotations

import pytest

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.errors import HumanInputRequired
from agentkit.core.contracts.types import ToolCall
from agentkit.core.runtime.current_call import current_call
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.tools import tool

ASKED = "Which city should the parcel go to?"
WEIGHED: list[str] = []


@tool(side_effecting=False)
async def ship(parcel: str) -> str:
    """Ship a parcel; asks the person where to when it does not know."""
    call = current_call.get()
    answer = None if call is None else call.answers.get(ASKED)
    if answer is None:
        raise HumanInputRequired("ship", ASKED, {"type": "object", "properties": {
            "city": {"type": "string"}}}, "the courier")
    return f"{parcel} shipped to {answer['content']['city']}"


@tool(side_effecting=False)
def weigh(parcel: str) -> str:
    """Weigh a parcel and return its weight in kilograms."""
    WEIGHED.append(parcel)
    return f"{parcel}: 2 kg"


def agent() -> Agent:
    return Agent(name="post", model="fake", prompt="You ship parcels.",
                 cognition=ReActCognition(tools=[ship, weigh]))


async def test_a_question_mid_call_suspends_and_the_answer_reruns_the_call() -> None:
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "weigh", {"parcel": "box"}),
                         ToolCall("c2", "ship", {"parcel": "box"}))),
        Turn(content="Your 2 kg box is on its way to Braga."),
    ])
    ctx = make_test_ctx(llm=llm)
    WEIGHED.clear()
    paused = await agent().run("Ship my box.", ctx)
    suspended = paused.evals["suspended"]
    done = await agent().resume(
        paused.run_id, {"c2": {"action": "accept", "content": {"city": "Braga"}}}, ctx
    )

    assert (paused.stop_reason, suspended.reason) == ("suspended", "awaiting_input")
    assert [c.id for c in suspended.pending] == ["c2"]
    assert dict(suspended.questions["c2"]) == {
        "message": ASKED,
        "schema": {"type": "object", "properties": {"city": {"type": "string"}}},
        "tool": "ship",
        "source": "the courier",
        "answers": {},
    }
    assert done.output == "Your 2 kg box is on its way to Braga."
    assert [(m.tool_call_id, m.content) for m in done.messages if m.role == "tool"] == [
        ("c1", "box: 2 kg"), ("c2", "box shipped to Braga"),
    ]
    assert WEIGHED == ["box"]  # the call that finished before the question is not redone


async def test_a_malformed_answer_to_a_tools_question_is_refused() -> None:
    llm = FakeLLM.script([Turn(tool_calls=(ToolCall("c2", "ship", {"parcel": "box"}),))])
    ctx = make_test_ctx(llm=llm)
    paused = await agent().run("Ship my box.", ctx)

    with pytest.raises(ValueError) as refused:
        await agent().resume(paused.run_id, {"c2": "Braga"}, ctx)
    assert str(refused.value) == (
        f"run {paused.run_id!r}: call 'c2' waits for the answer to a tool's question; its "
        "decision must be {'action': 'accept', 'content': {...}}, {'action': 'decline'}, "
        "{'action': 'cancel'} or {'answer': '...'}, got 'Braga'"
    )
