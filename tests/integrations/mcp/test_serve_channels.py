"""What a served call sends back besides text: media, JSON, progress, logs, questions to
the client's user, requests to the client's model; and which calls count as repeats."""

from __future__ import annotations

import asyncio
import base64
import math
from dataclasses import dataclass
from typing import Any, TypedDict

import mcp.types as types
import pydantic
import pytest
from mcp import Client

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.assembly import make_ctx
from agentkit.core.contracts.errors import UnsupportedSetting
from agentkit.core.contracts.types import ChatRequest, Message, ModelSettings
from agentkit.core.runtime import RunContext
from agentkit.core.testing import FakeLLM
from agentkit.integrations.mcp import ElicitationUnavailable, build_server, elicit
from agentkit.integrations.mcp.schemas import mcp_input_schema
from agentkit.tools import Audio, File, Image, as_tool, ask_human, tool

LIMIT = 20
PNG = b"\x89PNG\r\n\x1a\n" + bytes(24)


@dataclass
class Address:
    street: str
    city: str


@dataclass
class Reading:
    sensor: str
    value: float


@tool(side_effecting=False)
def snapshot(camera: str) -> list[object]:
    """Take a picture with a named camera and return it with a caption and raw metadata."""
    return [f"camera {camera}", Image(PNG, "image/png"), File(b"\x00\x01", "application/x-raw",
                                                               name="meta.bin")]


@tool(side_effecting=False)
def chime() -> Audio:
    """Play the door chime and return the recorded sound clip."""
    return Audio(b"RIFF....WAVE", "audio/wav")


@tool(side_effecting=False)
def harbour_links() -> list[object]:
    """Return links to the harbour webcam picture and the port's published timetable."""
    return [Image.from_url("https://example.com/cams/harbour.jpg"),
            File.from_url("https://example.com/port/timetable.pdf")]


@tool(side_effecting=False)
def raw_bytes() -> bytes:
    """Return the raw bytes of the firmware header, for inspection."""
    return b"\xde\xad\xbe\xef"


@tool(side_effecting=False)
def report(city: str) -> File:
    """Return the weather report of a city as a text document."""
    return File(f"Sunny in {city}".encode(), "text/plain", name="report.txt")


@tool(side_effecting=False)
def read_sensor(sensor: str) -> Reading:
    """Read the current value of one named sensor on the factory floor."""
    return Reading(sensor, math.nan if sensor == "broken" else 21.5)


@tool(side_effecting=False)
def thermometer_dump() -> dict[str, Any]:
    """Return every thermometer's raw register dump keyed by thermometer name."""
    return {"north": {"registers": b"\x01\x02"}}


@tool(side_effecting=False)
def ship(name: str, to: Address, via: list[Address] | None = None) -> str:
    """Ship a parcel to an address, optionally through relay addresses on the way."""
    return f"{name} to {to.city}"


async def call(server: Any, name: str, arguments: dict[str, Any], **client: Any) -> Any:
    async with asyncio.timeout(LIMIT), Client(server, mode="legacy", **client) as session:
        return await session.call_tool(name, arguments)


def dump(result: types.CallToolResult) -> dict[str, Any]:
    return result.model_dump(by_alias=True, exclude_none=True, mode="json",
                             exclude={"result_type"})


async def test_media_values_become_image_audio_and_embedded_resource_blocks() -> None:
    server = build_server([snapshot, chime, raw_bytes, report, harbour_links])

    assert dump(await call(server, "snapshot", {"camera": "gate"})) == {
        "content": [
            {"type": "text", "text": "camera gate"},
            {"type": "image", "data": base64.b64encode(PNG).decode(), "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "agentkit://file/meta.bin",
                                              "mimeType": "application/x-raw",
                                              "blob": "AAE="}},
        ],
        "isError": False,
    }
    assert dump(await call(server, "chime", {}))["content"] == [
        {"type": "audio", "data": "UklGRi4uLi5XQVZF", "mimeType": "audio/wav"}
    ]
    assert dump(await call(server, "raw_bytes", {}))["content"] == [
        {"type": "resource", "resource": {"uri": "agentkit://file/file",
                                          "mimeType": "application/octet-stream",
                                          "blob": "3q2+7w=="}}
    ]
    assert dump(await call(server, "report", {"city": "Porto"}))["content"] == [
        {"type": "resource", "resource": {"uri": "agentkit://file/report.txt",
                                          "mimeType": "text/plain", "text": "Sunny in Porto"}}
    ]
    assert dump(await call(server, "harbour_links", {}))["content"] == [
        {"type": "resource_link", "name": "harbour.jpg", "mimeType": "image/jpeg",
         "uri": "https://example.com/cams/harbour.jpg"},
        {"type": "resource_link", "name": "timetable.pdf", "mimeType": "application/pdf",
         "uri": "https://example.com/port/timetable.pdf"},
    ]


async def test_structured_results_are_json_text_and_structured_content() -> None:
    server = build_server([read_sensor])

    assert dump(await call(server, "read_sensor", {"sensor": "s1"})) == {
        "content": [{"type": "text", "text": '{"sensor": "s1", "value": 21.5}'}],
        "structuredContent": {"sensor": "s1", "value": 21.5},
        "isError": False,
    }


async def test_nan_and_nested_bytes_are_refused_with_a_tool_error() -> None:
    server = build_server([read_sensor, thermometer_dump])

    assert dump(await call(server, "read_sensor", {"sensor": "broken"})) == {
        "content": [{"type": "text", "text": (
            "tool 'read_sensor' returned nan at $.value, which JSON cannot carry, so the "
            "result was not sent. Return None or a string for a missing number, and an "
            "agentkit.tools.File (or Image, Audio) for binary data"
        )}],
        "isError": True,
    }
    assert dump(await call(server, "thermometer_dump", {}))["content"][0]["text"].startswith(
        "tool 'thermometer_dump' returned 2 raw bytes at $.north.registers, which JSON "
    )


async def test_advertised_schema_is_2020_12_with_defs_and_no_extra_keys() -> None:
    server = build_server([ship])
    async with asyncio.timeout(LIMIT), Client(server, mode="legacy") as session:
        [listed] = (await session.list_tools()).tools
        extra = await session.call_tool("ship", {"name": "p1", "to": {"street": "R", "city": "L"},
                                                 "rush": True})

    address = {"type": "object", "properties": {"street": {"type": "string"},
                                                "city": {"type": "string"}},
               "required": ["street", "city"]}
    assert listed.input_schema == {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "to": {"$ref": "#/$defs/to"},
            "via": {"anyOf": [{"type": "array", "items": {"$ref": "#/$defs/to"}},
                              {"type": "null"}]},
        },
        "required": ["name", "to"],
        "additionalProperties": False,
        "$defs": {"to": {**address, "additionalProperties": False}},
    }
    assert extra.is_error is True
    # Our own providers still see the Tools page's form: nested structs inline.
    assert ship.schema.parameters["properties"]["to"] == address
    assert "$schema" not in ship.schema.parameters
    assert mcp_input_schema({"type": "object", "properties": {"a": address, "b": {
        "type": "object", "properties": {"x": {"type": "integer"}}}}})["$defs"] == {
        "a": address, "b": {"type": "object", "properties": {"x": {"type": "integer"}}}}


@dataclass
class Parcel:
    weight_kg: int
    to: Address


class Customs(TypedDict):
    code: str


class Notes(pydantic.BaseModel):
    text: str


@tool(side_effecting=False)
def send_parcel(parcel: Parcel, customs: Customs, notes: Notes) -> str:
    """Send a parcel of a given weight to an address, with its customs code and notes."""
    return f"{parcel.weight_kg} kg to {parcel.to.city}"


async def test_nested_structs_that_refuse_undeclared_keys_are_advertised_closed() -> None:
    """Dataclasses and TypedDicts refuse an undeclared key at any depth, so their
    definitions say additionalProperties: false; a Pydantic model that ignores extra
    keys (its default) stays open."""
    server = build_server([send_parcel])
    parcel = {"weight_kg": 2, "to": {"street": "R", "city": "L"}}
    async with asyncio.timeout(LIMIT), Client(server, mode="legacy") as session:
        [listed] = (await session.list_tools()).tools
        deep = await session.call_tool("send_parcel", {
            "parcel": {**parcel, "to": {"street": "R", "city": "L", "zip": "1"}},
            "customs": {"code": "C1"}, "notes": {"text": "fragile"}})
        loose = await session.call_tool("send_parcel", {
            "parcel": parcel, "customs": {"code": "C1"},
            "notes": {"text": "fragile", "colour": "red"}})

    closed = {"additionalProperties": False}
    assert listed.input_schema["$defs"] == {
        "to": {"type": "object", "properties": {"street": {"type": "string"},
                                                "city": {"type": "string"}},
               "required": ["street", "city"], **closed},
        "parcel": {"type": "object", "properties": {"weight_kg": {"type": "integer"},
                                                    "to": {"$ref": "#/$defs/to"}},
                   "required": ["weight_kg", "to"], **closed},
        "customs": {"type": "object", "properties": {"code": {"type": "string"}},
                    "required": ["code"], **closed},
        "notes": {"type": "object", "title": "Notes",
                  "properties": {"text": {"title": "Text", "type": "string"}},
                  "required": ["text"]},
    }
    assert deep.is_error is True
    assert deep.content[0].text == (  # type: ignore[union-attr]
        "tool 'send_parcel' call rejected: invalid argument(s): parcel: field 'to': "
        "unknown field(s) ['zip']; Address has ['street', 'city']. Accepted arguments: "
        "['parcel', 'customs', 'notes']"
    )
    assert (loose.is_error, loose.content[0].text) == (  # type: ignore[union-attr]
        False, "2 kg to L")


@tool(side_effecting=False)
async def crunch(rows: int, ctx: RunContext) -> str:
    """Crunch a number of rows, reporting progress and logging along the way."""
    await ctx.log("debug", "opening the table")
    for done in range(0, rows + 1, rows // 2):
        await ctx.progress(done, rows, f"{done} rows")
    await ctx.log("warning", "2 rows skipped", skipped=2)
    return f"crunched {rows}"


@pytest.mark.filterwarnings("ignore:The logging capability is deprecated")
async def test_progress_and_logs_reach_the_client_and_the_runs_events() -> None:
    events: list[tuple[str, dict[str, Any]]] = []

    def observed(run_id: str) -> RunContext:
        return make_ctx(FakeLLM(), correlation_id=run_id,
                        observer=lambda kind, data: events.append((kind, data)))

    progress: list[tuple[float, float | None, str | None]] = []
    logs: list[tuple[str, Any]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append((params.level, params.data))

    server = build_server([crunch], ctx_factory=observed)
    async with asyncio.timeout(LIMIT), Client(server, mode="legacy",
                                              logging_callback=on_log) as session:
        first = await session.call_tool("crunch", {"rows": 4}, progress_callback=on_progress)
        await session.set_logging_level("debug")
        await session.call_tool("crunch", {"rows": 2})

    assert first.content[0].text == "crunched 4"  # type: ignore[union-attr]
    assert progress == [(0, 4, "0 rows"), (2, 4, "2 rows"), (4, 4, "4 rows")]
    assert logs == [
        ("warning", {"message": "2 rows skipped", "skipped": 2}),  # info and up by default
        ("debug", "opening the table"),
        ("warning", {"message": "2 rows skipped", "skipped": 2}),
    ]
    kinds = [(kind, {k: v for k, v in data.items() if k not in ("run_id", "depth")})
             for kind, data in events if kind.startswith("tool.")]
    assert kinds[:5] == [
        ("tool.log", {"level": "debug", "message": "opening the table"}),
        ("tool.progress", {"done": 0, "total": 4, "message": "0 rows"}),
        ("tool.progress", {"done": 2, "total": 4, "message": "2 rows"}),
        ("tool.progress", {"done": 4, "total": 4, "message": "4 rows"}),
        ("tool.log", {"level": "warning", "message": "2 rows skipped", "skipped": 2}),
    ]


@tool(side_effecting=True, requires_approval=True)
def wire(account: str, amount_usd: float) -> str:
    """Wire money from the operating account to another account."""
    return f"wired {amount_usd} to {account}"


async def test_ask_human_and_approvals_are_asked_through_elicitation() -> None:
    asked: list[tuple[str, Any]] = []

    async def user(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append((params.message, params.requested_schema))  # type: ignore[union-attr]
        if "favourite" in params.message:
            return types.ElicitResult(action="accept", content={"answer": "teal"})
        if '"B-7"' in params.message:
            return types.ElicitResult(action="accept", content={"approve": True})
        return types.ElicitResult(action="decline")

    server = build_server([ask_human, wire])
    async with asyncio.timeout(LIMIT), Client(server, mode="legacy",
                                              elicitation_callback=user) as session:
        listed = [t.name for t in (await session.list_tools()).tools]
        answer = await session.call_tool("ask_human", {"question": "Your favourite colour?"})
        approved = await session.call_tool("wire", {"account": "B-7", "amount_usd": 5})
        declined = await session.call_tool("wire", {"account": "X-1", "amount_usd": 5})
    async with asyncio.timeout(LIMIT), Client(server, mode="legacy") as mute:
        mute_listing = [t.name for t in (await mute.list_tools()).tools]
        refused = await mute.call_tool("wire", {"account": "B-7", "amount_usd": 5})

    assert listed == ["ask_human", "wire"]
    assert mute_listing == ["wire"]  # nobody to ask: ask_human is not offered
    assert (answer.is_error, answer.content[0].text) == (False, "teal")  # type: ignore[union-attr]
    assert (approved.is_error, approved.content[0].text) == (  # type: ignore[union-attr]
        False, "wired 5.0 to B-7")
    assert (declined.is_error, declined.content[0].text) == (True, (  # type: ignore[union-attr]
        "the call to 'wire' was not approved by a human, so it did not run. "
        "Do not retry it unchanged"))
    assert refused.content[0].text == (  # type: ignore[union-attr]
        "tool 'wire' needs a human's approval and this MCP server has no way to ask for it "
        "(the client does not support elicitation), so the call did not run. A person can "
        "approve it through a client that supports elicitation, or when the server is started "
        "from Python with serve(..., approve=callback)")
    assert asked[1] == (
        'Allow the tool \'wire\' to run with these arguments? {"account": "B-7", '
        '"amount_usd": 5}',
        {"type": "object", "properties": {"approve": {
            "type": "boolean", "title": "Run it",
            "description": "true runs the call as shown; false refuses it"}},
         "required": ["approve"]},
    )


async def test_an_agent_served_as_a_tool_thinks_with_the_clients_model() -> None:
    researcher = as_tool(
        Agent(name="researcher", model="fake", prompt="You research.",
              cognition=ReActCognition(tools=[])),
        name="researcher",
        description="Delegate a research sub-task and get a one-sentence summary back.",
        side_effecting=False,
    )
    sampled: list[types.CreateMessageRequestParams] = []

    async def model(context: Any, params: types.CreateMessageRequestParams) -> Any:
        sampled.append(params)
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(text="Octopuses have three hearts."),
            model="client-model-1", stop_reason="endTurn")

    server = build_server([researcher])
    answered = await call(server, "researcher", {"task": "octopus hearts"},
                          sampling_callback=model)
    refused = await call(server, "researcher", {"task": "octopus hearts"})

    assert (answered.is_error, answered.content[0].text) == (
        False, "Octopuses have three hearts.")
    [request] = sampled
    assert request.system_prompt == "You research."
    assert [(m.role, m.content.text) for m in request.messages] == [  # type: ignore[union-attr]
        ("user", "octopus hearts")]
    assert (refused.is_error, refused.content[0].text) == (True, (
        "this agentkit MCP server has no model, and the MCP client did not offer its own "
        "(sampling): a served tool called ctx.llm. Use a client that supports sampling, or "
        "serve with serve(..., ctx_factory=...) returning a context built on a real model"))


async def test_a_tool_that_calls_the_model_directly_samples_with_its_settings() -> None:
    @tool(side_effecting=False)
    async def haiku(topic: str, ctx: RunContext) -> str:
        """Write a haiku about a topic with the help of the model."""
        result = await ctx.invoker.chat(ChatRequest(
            model="", system="Answer in 17 syllables.",
            settings=ModelSettings(max_tokens=60, temperature=0.2, stop="\n\n"),
            messages=(Message("user", f"A haiku about {topic}"),)), ctx)
        return f"{result.model}: {result.content}"

    seen: list[types.CreateMessageRequestParams] = []

    async def model(context: Any, params: types.CreateMessageRequestParams) -> Any:
        seen.append(params)
        return types.CreateMessageResult(role="assistant", model="m2",
                                         content=types.TextContent(text="tide pools at dusk"))

    result = await call(build_server([haiku]), "haiku", {"topic": "sea"},
                        sampling_callback=model)

    assert result.content[0].text == "m2: tide pools at dusk"
    assert (seen[0].max_tokens, seen[0].temperature, seen[0].system_prompt,
            seen[0].stop_sequences) == (60, 0.2, "Answer in 17 syllables.", ["\n\n"])


async def test_sampling_refuses_a_setting_it_has_no_field_for() -> None:
    @tool(side_effecting=False)
    async def seeded(topic: str, ctx: RunContext) -> str:
        """Ask the model about a topic with a fixed seed, reporting a refusal."""
        request = ChatRequest(model="", messages=(Message("user", topic),),
                              settings=ModelSettings(seed=4))
        try:
            await ctx.invoker.chat(request, ctx)
        except UnsupportedSetting as exc:
            return str(exc)
        return "sampled"

    async def model(context: Any, params: types.CreateMessageRequestParams) -> Any:
        raise AssertionError("nothing may be sampled")

    result = await call(build_server([seeded]), "seeded", {"topic": "sea"},
                        sampling_callback=model)
    assert result.content[0].text == (
        "mcp-server cannot honour ModelSettings.seed: MCP sampling (sampling/createMessage) "
        "has no field for it. Remove it from the agent's or the run's settings, or use a "
        "provider that supports it"
    )


async def test_a_declined_question_and_elicit_outside_a_served_call_are_clear_errors() -> None:
    async def shy(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="decline")

    declined = await call(build_server([ask_human]), "ask_human", {"question": "Your age?"},
                          elicitation_callback=shy)

    assert (declined.is_error, declined.content[0].text) == (
        True, "the user declined the question instead of answering it")
    with pytest.raises(ElicitationUnavailable) as error:
        await elicit("Your age?", {"type": "object", "properties": {}})
    assert str(error.value) == (
        "elicit() asks the user of an MCP client, and no served MCP call is running: call it "
        "from a tool served with agentkit.integrations.mcp.serve"
    )
