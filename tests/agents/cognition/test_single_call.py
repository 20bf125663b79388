"""SingleCallCognition with Agent(output=...): the answer is parsed into the type; a bad
answer gets one repair turn that says what was wrong; a second bad answer raises."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import pydantic
import pytest

from agentkit.agents import Agent, OutputCoercionError, RunNotResumable
from agentkit.agents.cognition import SingleCallCognition
from agentkit.core.contracts.types import Message
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx


@dataclass
class City:
    name: str
    population: int


class PydanticCity(pydantic.BaseModel):
    name: str
    population: int


CITY_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "population": {"type": "integer"}},
    "required": ["name", "population"],
}

PYDANTIC_SCHEMA = {
    "properties": {
        "name": {"title": "Name", "type": "string"},
        "population": {"title": "Population", "type": "integer"},
    },
    "required": ["name", "population"],
    "title": "PydanticCity",
    "type": "object",
}

LISBON = '{"name": "Lisbon", "population": 545000}'
FENCED = f"```json\n{LISBON}\n```"

OUTPUTS: list[tuple[Any, Any, dict[str, Any], str]] = [
    (City, City("Lisbon", 545000), CITY_SCHEMA, "missing field(s) ['population']"),
    (
        PydanticCity,
        PydanticCity(name="Lisbon", population=545000),
        PYDANTIC_SCHEMA,
        "not a valid PydanticCity: population: Field required",
    ),
    (
        CITY_SCHEMA,
        {"name": "Lisbon", "population": 545000},
        CITY_SCHEMA,
        "$: missing required property ['population']",
    ),
]
IDS = ["dataclass", "pydantic", "json-schema"]


def agent_for(output: Any) -> Agent:
    return Agent("census", "fake", "Answer with the city as JSON.", output=output)


def repair_prompt(reason: str, schema: dict[str, Any]) -> str:
    return (
        f"Your answer could not be used: {reason}. Reply again with only a JSON value "
        f"(no prose, no code fence) that matches this JSON Schema: {json.dumps(schema)}"
    )


def test_single_call_is_the_default_cognition() -> None:
    assert repr(agent_for(City).cognition) == "SingleCallCognition()"
    assert SingleCallCognition.tools is None


async def test_without_output_the_answer_is_the_text() -> None:
    llm = FakeLLM.script([Turn(content="Lisbon, about 545,000 people.")])
    result = await Agent("census", "fake", "p").run("Lisbon?", make_test_ctx(llm=llm))
    assert (result.output, result.stop_reason, result.steps) == (
        "Lisbon, about 545,000 people.",
        "complete",
        1,
    )
    assert llm.requests[0].tools == ()


@pytest.mark.parametrize(("output", "expected", "schema", "_reason"), OUTPUTS, ids=IDS)
@pytest.mark.parametrize(
    "answer", [LISBON, FENCED, f"  \n{FENCED}\n  "], ids=["plain", "fenced", "padded"]
)
async def test_the_answer_is_parsed_into_the_output_type(
    output: Any, expected: Any, schema: dict[str, Any], _reason: str, answer: str
) -> None:
    llm = FakeLLM.script([Turn(content=answer)])
    result = await agent_for(output).run("Lisbon?", make_test_ctx(llm=llm))

    assert result.stop_reason == "complete"
    assert result.output == expected
    assert isinstance(result.output, type(expected))
    assert llm.requests[0].output_schema == schema
    assert result.steps == 1


@pytest.mark.parametrize(("output", "expected", "schema", "reason"), OUTPUTS, ids=IDS)
async def test_a_bad_first_answer_gets_one_repair_turn_with_the_reason_and_schema(
    output: Any, expected: Any, schema: dict[str, Any], reason: str
) -> None:
    llm = FakeLLM.script([Turn(content='{"name": "Lisbon"}'), Turn(content=FENCED)])
    result = await agent_for(output).run("Lisbon?", make_test_ctx(llm=llm))

    assert result.output == expected
    assert result.steps == 2
    assert llm.requests[1].messages == (
        Message(role="user", content="Lisbon?"),
        Message(role="assistant", content='{"name": "Lisbon"}'),
        Message(role="user", content=repair_prompt(reason, schema)),
    )
    llm.assert_all_used()


async def test_an_answer_that_is_not_json_is_repaired_with_the_parse_error() -> None:
    llm = FakeLLM.script([Turn(content="Lisbon has 545000 people"), Turn(content=LISBON)])
    result = await agent_for(City).run("Lisbon?", make_test_ctx(llm=llm))

    assert result.output == City("Lisbon", 545000)
    reason = "the answer is not valid JSON (Expecting value at position 0)"
    assert llm.requests[1].messages[-1].content == repair_prompt(reason, CITY_SCHEMA)


async def test_two_bad_answers_raise_output_coercion_error() -> None:
    llm = FakeLLM.script([Turn(content="no idea"), Turn(content='{"name": "Lisbon"}')])
    with pytest.raises(OutputCoercionError) as info:
        await agent_for(City).run("Lisbon?", make_test_ctx(llm=llm))

    error = info.value
    assert (error.agent, error.expected, error.reason, error.raw) == (
        "census",
        "City",
        "missing field(s) ['population']",
        '{"name": "Lisbon"}',
    )
    assert str(error) == (
        "agent 'census': the model's answer is not a valid City after a repair turn: "
        "missing field(s) ['population']"
    )
    assert len(llm.requests) == 2


async def test_max_output_repairs_sets_how_many_repair_turns_are_allowed() -> None:
    bad = Turn(content='{"name": "Lisbon"}')
    llm = FakeLLM.script([bad, bad, bad, Turn(content=LISBON)])
    agent = Agent("census", "fake", "p", output=City, max_output_repairs=3)
    result = await agent.run("Lisbon?", make_test_ctx(llm=llm))
    assert (result.output, result.steps) == (City("Lisbon", 545000), 4)

    llm = FakeLLM.script([Turn(content="nope")])
    strict = Agent("census", "fake", "p", output=City, max_output_repairs=0)
    with pytest.raises(OutputCoercionError):
        await strict.run("Lisbon?", make_test_ctx(llm=llm))
    assert len(llm.requests) == 1


async def test_a_run_that_ends_in_output_coercion_error_is_over() -> None:
    """The checkpoint ends too: the run id is not left "running" for recover, and a new
    run on the same context is not refused."""
    llm = FakeLLM.script([Turn(content="no"), Turn(content="still no"), Turn(content=LISBON)])
    ctx = make_test_ctx(llm=llm, correlation_id="run-1")
    with pytest.raises(OutputCoercionError):
        await agent_for(City).run("Lisbon?", ctx)

    with pytest.raises(RunNotResumable) as info:
        await agent_for(City).recover("run-1", ctx)
    assert str(info.value) == "run 'run-1' cannot be resumed: it is error, not running"

    again = await agent_for(City).run("Lisbon?", ctx)
    assert (again.stop_reason, again.output) == ("complete", City("Lisbon", 545000))


async def test_a_json_schema_answer_comes_back_as_plain_mutable_data() -> None:
    schema = {"type": "object", "properties": {"tags": {"type": "array",
                                                        "items": {"type": "string"}}}}
    agent = Agent(name="tagger", model="fake", prompt="p", output=schema)
    result = await agent.run("tag it", make_test_ctx(llm=FakeLLM('{"tags": ["a", "b"]}')))
    assert result.output == {"tags": ["a", "b"]}
    assert type(result.output) is dict and type(result.output["tags"]) is list
