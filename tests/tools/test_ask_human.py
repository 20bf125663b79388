"""ask_human: the model asks the person it works for; the run suspends awaiting input and
the answer given on resume is the tool result the model reads."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit.agents import Agent, AgentResult, Suspended
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.errors import RunError
from agentkit.core.contracts.types import Message, ToolCall, ToolSchema
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.tools import Tool, ask_human, tool

ASK = ToolCall("c-ask", "ask_human", {"question": "What is the one-time code we sent you?"})


@tool(side_effecting=True)
def verify_code(code: str) -> str:
    """Verify a one-time login code against the one that was sent to the user."""
    return "verified" if code == "1234" else "wrong code"


def agent() -> Agent:
    return Agent("login", "fake", "p", cognition=ReActCognition([ask_human, verify_code]))


async def ask(autonomy: str = "auto", *turns: Turn) -> tuple[AgentResult, FakeLLM, Any]:
    llm = FakeLLM.script([Turn(tool_calls=(ASK,)), *turns])
    ctx = make_test_ctx(llm=llm, autonomy=autonomy, correlation_id="run-1")
    return await agent().run("log me in", ctx), llm, ctx


def test_the_second_paragraph_of_the_description_reaches_the_model() -> None:
    paragraphs = ask_human.description.split("\n\n")
    assert paragraphs == [
        "Ask the human you are working for a question and wait for the answer.",
        "Use this only when the information genuinely cannot be obtained any other way — "
        "a one-time code, a confirmation, a preference only they know.",
    ]
    assert ask_human.schema == ToolSchema(
        name="ask_human",
        description=ask_human.description,
        parameters={
            "type": "object",
            "properties": {"question": {"type": "string", "description": "the question, in full"}},
            "required": ["question"],
        },
    )


def test_ask_human_is_a_read_only_tool() -> None:
    assert isinstance(ask_human, Tool)
    assert (ask_human.name, ask_human.side_effecting, ask_human.requires_approval) == (
        "ask_human",
        False,
        False,
    )


async def test_run_outside_an_agent_loop_is_refused() -> None:
    with pytest.raises(RunError) as info:
        await ask_human.run({"question": "code?"}, make_test_ctx())
    assert str(info.value) == (
        "ask_human is answered by a human: run it inside an agent loop (ReActCognition), "
        "which suspends the run until agent.resume(...) gives the answer"
    )


async def test_the_model_sees_ask_human_advertised_with_its_whole_description() -> None:
    _, llm, _ = await ask()
    assert llm.requests[0].tools == (ask_human.schema, verify_code.schema)


@pytest.mark.parametrize("autonomy", ["auto", "gated", "manual"])
async def test_asking_suspends_awaiting_input_with_the_question(autonomy: str) -> None:
    result, _, _ = await ask(autonomy)

    assert result.stop_reason == "suspended"
    assert result.output is None
    assert result.evals["suspended"] == Suspended("run-1", (ASK,), reason="awaiting_input")
    assert result.evals["suspended"].pending[0].arguments["question"] == (
        "What is the one-time code we sent you?"
    )


async def test_the_answer_given_on_resume_is_the_tool_result_the_model_reads() -> None:
    verify = ToolCall("c-verify", "verify_code", {"code": "1234"})
    result, llm, ctx = await ask("auto", Turn(tool_calls=(verify,)), Turn(content="You are in."))

    final = await agent().resume("run-1", {"c-ask": {"answer": "1234"}}, ctx)

    assert (final.stop_reason, final.output) == ("complete", "You are in.")
    assert llm.requests[1].messages[-1] == Message(
        role="tool", content="1234", tool_call_id="c-ask", name="ask_human"
    )
    assert llm.requests[2].messages[-1].content == "verified"
    assert final.messages[: len(result.messages)] == result.messages


async def test_no_answer_tells_the_model_the_human_did_not_answer() -> None:
    _, llm, ctx = await ask("auto", Turn(content="I will wait."))

    await agent().resume("run-1", {}, ctx)

    assert llm.requests[1].messages[-1] == Message(
        role="tool",
        content="The human gave no answer to this question.",
        tool_call_id="c-ask",
        name="ask_human",
        is_error=True,
    )


@pytest.mark.parametrize("decision", ["approve", {"answer": 1234}, {"reply": "1234"}])
async def test_a_question_needs_an_answer_not_an_approval(decision: Any) -> None:
    _, llm, ctx = await ask("auto", Turn(content="never"))

    with pytest.raises(ValueError) as info:
        await agent().resume("run-1", {"c-ask": decision}, ctx)
    assert str(info.value) == (
        "run 'run-1': call 'c-ask' asks the human a question; its decision must be "
        f"{{'answer': '...'}}, got {decision!r}"
    )
    assert len(llm.requests) == 1


async def test_a_question_and_a_gated_call_in_one_turn_wait_together() -> None:
    send = ToolCall("c-verify", "verify_code", {"code": "0000"})
    llm = FakeLLM.script([Turn(tool_calls=(ASK, send)), Turn(content="done")])
    ctx = make_test_ctx(llm=llm, autonomy="gated", correlation_id="run-1")

    result = await agent().run("log me in", ctx)

    assert result.evals["suspended"] == Suspended("run-1", (ASK, send), "awaiting_input")
    final = await agent().resume(
        "run-1", {"c-ask": {"answer": "1234"}, "c-verify": {"code": "1234"}}, ctx
    )
    assert final.output == "done"
    assert [m.content for m in llm.requests[1].messages[2:]] == [
        "1234",
        "(A human edited the arguments before approving: {'code': '1234'})\nverified",
    ]
