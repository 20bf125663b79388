"""Agent(output=...) on Gemini: sent as its JSON mode where Gemini can honour it, and
validated by agentkit either way."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from agentkit import make_ctx
from agentkit.agents import Agent
from agentkit.core.contracts.types import ChatRequest, Message, ToolSchema
from agentkit.core.testing import make_test_ctx
from agentkit.providers import GeminiLLM

from .conftest import WireServer
from .fake_gemini import MODEL, bodies, reply

Gemini = tuple[WireServer, GeminiLLM]

VERDICT = {"type": "object", "properties": {"team": {"type": "string", "enum": ["billing",
                                                                                "support"]},
                                            "urgent": {"type": "boolean"}},
           "required": ["team", "urgent"], "additionalProperties": False}


@dataclass
class Verdict:
    team: str
    urgent: bool


async def send(gemini: Gemini, model: str = MODEL, **fields: Any) -> dict[str, Any]:
    wire, llm = gemini
    wire.reply(reply([{"text": '{"team": "billing", "urgent": true}'}]))
    await llm.chat(ChatRequest(model=model, messages=(Message("user", "Charged twice"),),
                               **fields), make_test_ctx(llm=llm))
    config: dict[str, Any] = bodies(wire)[0]["generationConfig"]
    return config


async def test_an_output_schema_is_sent_as_gemini_json_mode(gemini: Gemini) -> None:
    assert await send(gemini, output_schema=VERDICT) == {
        "responseMimeType": "application/json", "responseJsonSchema": VERDICT,
    }


async def test_an_agents_output_type_is_sent_and_the_answer_validated(gemini: Gemini) -> None:
    wire, llm = gemini
    wire.reply(reply([{"text": '{"team": "billing", "urgent": true}'}]))
    agent = Agent(name="judge", model=f"google:{MODEL}", prompt="Sort it.", output=Verdict)
    result = await agent.run("I was charged twice", make_ctx(llm))
    assert result.output == Verdict(team="billing", urgent=True)
    config = bodies(wire)[0]["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert json.loads(json.dumps(config["responseJsonSchema"]))["required"] == ["team", "urgent"]


async def test_an_output_schema_beside_tools_is_left_to_validation(gemini: Gemini) -> None:
    """Gemini 2.5 does not combine a response schema with function calling."""
    lookup = ToolSchema("lookup", "Look a thing up.",
                        {"type": "object", "properties": {"q": {"type": "string"}}})
    assert await send(gemini, output_schema=VERDICT, tools=(lookup,)) == {}


async def test_an_output_schema_gemini_cannot_express_is_left_to_validation(
    gemini: Gemini,
) -> None:
    """Never a looser schema on the wire: one Gemini would read differently goes unsent."""
    one_of = {"type": "object", "properties": {"n": {"oneOf": [{"type": "integer"},
                                                                {"type": "string"}]}}}
    assert await send(gemini, output_schema=one_of) == {}


async def test_models_before_gemini_2_5_are_sent_no_json_schema(gemini: Gemini) -> None:
    assert await send(gemini, model="gemini-2.0-flash", output_schema=VERDICT) == {}
