"""as_tool: anything with async run(task, ctx) becomes a one-argument tool whose sub-run
executes on ctx.child(), and whose result is rendered back to text."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from agentkit.agents import Agent, AgentResult
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import Message, ToolCall
from agentkit.core.runtime import RunContext
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.tools import FunctionTool, as_tool, render_result

TASK_SCHEMA = {
    "type": "object",
    "properties": {"task": {"type": "string", "description": "the sub-task / goal to run"}},
    "required": ["task"],
}
DESCRIPTION = "Delegate a research sub-task and get a one-sentence summary back."


@dataclass
class Recorder:
    """A runnable that records the context each sub-run received."""

    answer: Any = "recorded"
    seen: list[tuple[str, int, str, RunContext]] = field(default_factory=list)

    async def run(self, task: str, ctx: RunContext) -> Any:
        self.seen.append((task, ctx.depth, ctx.correlation_id, ctx))
        return self.answer


@dataclass
class FakeWorkflowResult:
    terminal_outputs: dict[str, Any]


def test_the_schema_is_one_required_task_string() -> None:
    wrapped = as_tool(Recorder(), name="researcher", description=DESCRIPTION, side_effecting=False)
    assert isinstance(wrapped, FunctionTool)
    assert wrapped.schema is not None
    assert (wrapped.schema.name, wrapped.schema.description) == ("researcher", DESCRIPTION)
    assert wrapped.schema.parameters == TASK_SCHEMA


def test_side_effecting_is_required() -> None:
    with pytest.raises(TypeError) as info:
        as_tool(Recorder(), name="researcher", description=DESCRIPTION)  # type: ignore[call-arg]
    assert str(info.value) == "as_tool() missing 1 required keyword-only argument: 'side_effecting'"


def test_declarations_are_passed_through_to_the_tool() -> None:
    wrapped = as_tool(
        Recorder(),
        name="payer",
        description="Delegate a payment to the payments agent and report the outcome.",
        side_effecting=True,
        idempotent=True,
        requires_approval=True,
    )
    assert (wrapped.side_effecting, wrapped.idempotent, wrapped.requires_approval) == (
        True,
        True,
        True,
    )
    assert wrapped.output_schema is None


def test_the_description_defaults_to_the_runnables_own() -> None:
    researcher = Agent("researcher", "fake", "p", description=DESCRIPTION)
    wrapped = as_tool(researcher, name="researcher", side_effecting=False)
    assert wrapped.description == DESCRIPTION


async def test_the_sub_run_executes_on_a_child_context() -> None:
    recorder = Recorder()
    wrapped = as_tool(recorder, name="researcher", description=DESCRIPTION, side_effecting=False)
    ctx = make_test_ctx(correlation_id="run-7")

    assert await wrapped.run({"task": "octopus tool use"}, ctx) == "recorded"
    ((task, depth, run_id, child),) = recorder.seen
    assert (task, depth, run_id) == ("octopus tool use", 1, "run-7")
    assert child is not ctx
    assert child.cancel is ctx.cancel
    assert child.store is ctx.store

    await wrapped.run({"task": "deeper"}, child)
    assert recorder.seen[1][1:3] == (2, "run-7")


async def test_the_spec_example_delegates_to_a_researcher_agent() -> None:
    researcher = Agent("researcher", "fake", "You summarise a topic in one sentence.")
    research_tool = as_tool(
        researcher, name="researcher", description=DESCRIPTION, side_effecting=False
    )
    lead = Agent(
        "lead",
        "fake",
        "You answer by delegating research.",
        cognition=ReActCognition(tools=[research_tool]),
    )
    llm = FakeLLM.script(
        [
            Turn(tool_calls=(ToolCall("c1", "researcher", {"task": "octopus tool use"}),)),
            Turn(content="Octopuses carry coconut shells as portable shelters."),
            Turn(content="They do: they carry coconut shells around as shelter."),
        ]
    )

    result = await lead.run("Do octopuses use tools?", make_test_ctx(llm=llm))

    assert result.output == "They do: they carry coconut shells around as shelter."
    sub_request = llm.requests[1]
    assert sub_request.system == "You summarise a topic in one sentence."
    assert sub_request.messages == (Message(role="user", content="octopus tool use"),)
    assert llm.requests[2].messages[-1] == Message(
        role="tool",
        content="Octopuses carry coconut shells as portable shelters.",
        tool_call_id="c1",
        name="researcher",
    )


async def test_delegation_past_max_depth_comes_back_as_a_tool_error() -> None:
    inner = as_tool(Recorder(), name="inner", description=DESCRIPTION, side_effecting=False)
    middle_agent = Agent("middle", "fake", "p", cognition=ReActCognition(tools=[inner]))
    middle = as_tool(middle_agent, name="middle", description=DESCRIPTION, side_effecting=False)
    outer = Agent("outer", "fake", "p", cognition=ReActCognition(tools=[middle]))
    llm = FakeLLM.script(
        [
            Turn(tool_calls=(ToolCall("c-outer", "middle", {"task": "go one down"}),)),
            Turn(tool_calls=(ToolCall("c-middle", "inner", {"task": "go two down"}),)),
            Turn(content="the inner agent was refused"),
            Turn(content="done"),
        ]
    )

    result = await outer.run("delegate twice", make_test_ctx(llm=llm, max_depth=1))

    assert (result.stop_reason, result.output) == ("complete", "done")
    assert llm.requests[2].messages[-1] == Message(
        role="tool",
        content="nested run refused: depth 2 would exceed the maximum of 1. "
        "Raise max_depth on the context if the nesting is deliberate.",
        tool_call_id="c-middle",
        name="inner",
        is_error=True,
    )
    assert llm.requests[3].messages[-1].content == "the inner agent was refused"
    llm.assert_all_used()


def test_render_result_takes_a_string_output() -> None:
    assert render_result(AgentResult(output="a summary", stop_reason="complete")) == "a summary"


def test_render_result_joins_terminal_outputs_as_key_value_lines() -> None:
    result = FakeWorkflowResult({"summary": "short", "count": 3})
    assert render_result(result) == "summary: short\ncount: 3"


@pytest.mark.parametrize(
    "value",
    [42, FakeWorkflowResult(["x"])],  # type: ignore[arg-type]
    ids=["plain", "terminal-not-a-mapping"],
)
def test_render_result_falls_back_to_str(value: Any) -> None:
    assert render_result(value) == str(value)


def test_render_result_gives_a_structured_output_as_json() -> None:
    assert render_result(AgentResult(output={"n": 1}, stop_reason="complete")) == '{"n": 1}'


def test_render_result_says_when_a_sub_run_stopped_without_an_answer() -> None:
    assert render_result(AgentResult(output=None, stop_reason="suspended")) == (
        "The delegated run stopped without an answer (stop reason: suspended)."
    )


def test_as_tool_without_any_description_says_to_pass_one() -> None:
    from agentkit.tools import ToolDefinitionError

    class Nameless:
        async def run(self, task: str, ctx: Any) -> str:
            return task

        def __repr__(self) -> str:
            return "Nameless()"

    with pytest.raises(ToolDefinitionError) as info:
        as_tool(Nameless(), name="helper", side_effecting=False)
    assert str(info.value) == (
        "as_tool 'helper': pass description= saying what the delegate does; the model "
        "chooses tools by their descriptions, and Nameless() has none of its own"
    )


async def test_render_overrides_the_default_renderer() -> None:
    recorder = Recorder(answer={"verdict": "yes"})
    wrapped = as_tool(
        recorder,
        name="judge",
        description="Ask the judge agent for a verdict on a short claim.",
        side_effecting=False,
        render=lambda res: f"verdict={res['verdict']}",
    )
    assert await wrapped.run({"task": "is it?"}, make_test_ctx()) == "verdict=yes"
