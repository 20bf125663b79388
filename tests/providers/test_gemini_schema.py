"""Tool schemas on Gemini: translated to its Schema where the meaning survives, refused
with UnsupportedSchema where it would not, before any request."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit import UnsupportedSchema
from agentkit.core.contracts.errors import ProviderError
from agentkit.core.contracts.types import ChatRequest, Message, ToolSchema
from agentkit.core.testing import make_test_ctx

from .conftest import WireServer
from .fake_gemini import MODEL, bodies, reply

Gemini = Any


async def declared(gemini: Gemini, parameters: dict[str, Any]) -> dict[str, Any]:
    wire, llm = gemini
    wire.reply(reply([{"text": "ok"}]))
    request = ChatRequest(model=MODEL, messages=(Message("user", "Hi"),),
                          tools=(ToolSchema("plan", "Plan a trip.", parameters),))
    await llm.chat(request, make_test_ctx(llm=llm))
    found: dict[str, Any] = bodies(wire)[0]["tools"][0]["functionDeclarations"][0]
    return found


async def test_constructs_with_a_faithful_gemini_form_are_translated(gemini: Gemini) -> None:
    parameters = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "note": {"type": ["string", "null"], "maxLength": 200},
            "mode": {"const": "fast"},
            "nights": {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 31},
            "stop": {"$ref": "#/$defs/Stop"},
            "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]},
                     "minItems": 1},
            "extra": {"allOf": [{"type": "object", "additionalProperties": {"type": "number"}}]},
            "when": {"anyOf": [{"type": "string", "format": "date"}, {"type": "integer"}]},
        },
        "required": ["stop"],
        "additionalProperties": False,
        "$defs": {"Stop": {"type": "object", "properties": {"city": {"type": "string"}},
                           "required": ["city"]}},
    }
    assert await declared(gemini, parameters) == {
        "name": "plan",
        "description": "Plan a trip.",
        "parameters_json_schema": {
            "type": "object",
            "properties": {
                "note": {"type": ["string", "null"], "maxLength": 200},
                "mode": {"enum": ["fast"]},
                "nights": {"type": "integer", "minimum": 1, "maximum": 30},
                "stop": {"$ref": "#/$defs/Stop"},
                "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]},
                         "minItems": 1},
                "extra": {"type": "object", "additionalProperties": {"type": "number"}},
                "when": {"anyOf": [{"type": "string", "format": "date"},
                                   {"type": "integer"}]},
            },
            "required": ["stop"],
            "additionalProperties": False,
            "$defs": {"Stop": {"type": "object", "properties": {"city": {"type": "string"}},
                               "required": ["city"]}},
        },
    }


async def test_old_style_definitions_become_defs(gemini: Gemini) -> None:
    found = await declared(gemini, {
        "type": "object", "properties": {"a": {"$ref": "#/definitions/A"}},
        "definitions": {"A": {"type": "string"}},
    })
    assert found["parameters_json_schema"] == {
        "type": "object", "properties": {"a": {"$ref": "#/$defs/A"}},
        "$defs": {"A": {"type": "string"}},
    }


async def test_a_tool_without_arguments_is_declared_without_parameters(gemini: Gemini) -> None:
    assert await declared(gemini, {"type": "object", "properties": {}}) == {
        "name": "plan", "description": "Plan a trip."}


@pytest.mark.parametrize(("schema", "construct", "reason"), [
    ({"oneOf": [{"type": "string"}, {"type": "integer"}]}, "oneOf at $.properties.x",
     "Gemini has anyOf but no exactly-one-of; declaring it as anyOf would accept values "
     "that match several alternatives"),
    ({"enum": ["a", None]}, "enum ['a', None] at $.properties.x.enum",
     "Gemini's enum takes strings and numbers only"),
    ({"type": "number", "exclusiveMinimum": 0.5}, "exclusiveMinimum at "
     "$.properties.x.exclusiveMinimum", "Gemini has inclusive bounds only; an exclusive "
     "bound has an inclusive form for integers alone"),
    ({"type": "array", "items": {"type": "string"}, "uniqueItems": True},
     "uniqueItems at $.properties.x", "Gemini cannot require distinct array items"),
    ({"not": {"type": "null"}}, "not at $.properties.x", "Gemini has no negated schema"),
    ({"type": "string", "x-unheard-of": 1}, "x-unheard-of at $.properties.x",
     "Gemini's JSON Schema subset has no such keyword and no equivalent"),
])
async def test_constructs_gemini_cannot_express_are_refused_before_sending(
    gemini: Gemini, schema: dict[str, Any], construct: str, reason: str
) -> None:
    wire, _ = gemini
    with pytest.raises(UnsupportedSchema) as caught:
        await declared(gemini, {"type": "object", "properties": {"x": schema}})
    error = caught.value
    assert (error.tool, error.construct, error.reason) == ("plan", construct, reason)
    assert str(error) == (
        f"google cannot express tool 'plan''s parameter schema: {construct}: {reason}. "
        "Simplify the tool's parameters, or use a provider that accepts the construct"
    )
    assert isinstance(error, ProviderError) and isinstance(error, ValueError)
    assert (error.provider, error.transient, error.kind) == ("google", False,
                                                             "unsupported_schema")
    assert wire.requests == []


def test_the_fixture_gives_a_server_and_a_provider(gemini: Gemini) -> None:
    wire, llm = gemini
    assert isinstance(wire, WireServer)
    assert llm.provider == "google"
