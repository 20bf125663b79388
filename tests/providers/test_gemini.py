"""GeminiLLM against a real HTTP server speaking Gemini's generateContent wire format."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from agentkit import make_ctx
from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.errors import ProviderError, UnsupportedMedia, UnsupportedSetting
from agentkit.core.contracts.media import File, Image
from agentkit.core.contracts.types import (
    ChatRequest,
    LLMResult,
    Message,
    ModelSettings,
    Reasoning,
    ReasoningDelta,
    ReasoningPart,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolSchema,
)
from agentkit.core.policies import retry
from agentkit.core.testing import make_test_ctx
from agentkit.providers import GeminiLLM
from agentkit.tools import tool

from .cities import broken_lookup, city_population
from .conftest import Reply, WireServer
from .fake_gemini import (
    MODEL,
    answer,
    bodies,
    error,
    events,
    google_llm,
    reply,
    usage,
)

Gemini = tuple[WireServer, GeminiLLM]
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 16
PDF = b"%PDF-1.7\n%fake\n"



def agent() -> Agent:
    return Agent(name="atlas", model=MODEL, prompt="You answer questions about cities.",
                 cognition=ReActCognition(tools=[city_population, broken_lookup]))


def request(*messages: Message, **fields: Any) -> ChatRequest:
    return ChatRequest(model=MODEL, messages=messages or (Message("user", "Hi"),), **fields)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


async def chat(llm: GeminiLLM, req: ChatRequest) -> LLMResult:
    return await llm.chat(req, make_test_ctx(llm=llm))


async def test_a_text_answer_is_read_with_its_usage_and_cost(gemini: Gemini) -> None:
    wire, llm = gemini
    wire.reply(reply([{"text": "Hello"}, {"text": " there."}],
                     meta=usage(1000, 200, cachedContentTokenCount=400)))
    result = await chat(llm, request(system="Be brief."))
    assert result.content == "Hello there."
    assert result.finish_reason == "stop"
    assert result.provider_details == {"finish_reason": "STOP"}
    assert wire.requests[0].path == f"/v1/models/{MODEL}:generateContent"
    assert wire.requests[0].headers["x-goog-api-key"] == "test-key"
    assert bodies(wire) == [{
        "contents": [{"role": "user", "parts": [{"text": "Hi"}]}],
        "systemInstruction": {"role": "user", "parts": [{"text": "Be brief."}]},
        "generationConfig": {},  # the SDK always sends one
    }]
    usage_ = result.usage
    assert (usage_.input_tokens, usage_.cache_read_tokens, usage_.output_tokens) == (600, 400, 200)
    # gemini-2.5-flash: $0.30 input, $0.03 cached input, $2.50 output per million
    assert usage_.cost_usd == pytest.approx((600 * 0.30 + 400 * 0.03 + 200 * 2.50) / 1e6)


async def test_a_react_run_sends_parallel_calls_and_their_results_back(gemini: Gemini) -> None:
    wire, llm = gemini
    wire.reply(
        reply([
            {"text": "Let me check."},
            {"functionCall": {"name": "city_population", "args": {"city": "Lisbon"}},
             "thoughtSignature": b64(b"sig-a")},
            {"functionCall": {"name": "broken_lookup", "args": {"code": "LIS"}}},
        ]),
        reply([{"text": "Lisbon has about 545,000 residents."}]),
    )
    result = await agent().run("How big is Lisbon?", make_ctx(llm))
    assert result.output == "Lisbon has about 545,000 residents."
    first, second = bodies(wire)
    assert first["tools"] == [{"functionDeclarations": [
        {"name": "broken_lookup",
         "description": "Look up an airport by its code; this one always fails, for tests.",
         "parameters_json_schema": {"type": "object", "properties": {"code": {"type": "string"}},
                                  "required": ["code"]}},
        {"name": "city_population",
         "description": "Look up the most recent census population for a named city.",
         "parameters_json_schema": {"type": "object", "properties": {"city": {"type": "string"}},
                                  "required": ["city"]}},
    ]}]
    assert second["contents"][1:] == [
        {"role": "model", "parts": [
            {"text": "Let me check."},
            {"functionCall": {"name": "city_population", "args": {"city": "Lisbon"}},
             "thoughtSignature": b64(b"sig-a")},
            {"functionCall": {"name": "broken_lookup", "args": {"code": "LIS"}}},
        ]},
        {"role": "user", "parts": [
            {"functionResponse": {"name": "city_population", "response": {"output": "545000"}}},
            {"functionResponse": {"name": "broken_lookup", "response": {
                "error": "tool 'broken_lookup' failed: RuntimeError: airport database offline"}}},
        ]},
    ]
    assert result.usage.requests == 2


async def test_call_ids_gemini_gives_go_back_with_the_call_and_its_result(gemini: Gemini) -> None:
    wire, llm = gemini
    wire.reply(
        reply([{"functionCall": {"id": "fc-1", "name": "city_population",
                                 "args": {"city": "Porto"}}}]),
        reply([{"text": "231,000."}]),
    )
    await agent().run("Porto?", make_ctx(llm))
    assert bodies(wire)[1]["contents"][1:] == [
        {"role": "model", "parts": [{"functionCall": {
            "id": "fc-1", "name": "city_population", "args": {"city": "Porto"}}}]},
        {"role": "user", "parts": [{"functionResponse": {
            "id": "fc-1", "name": "city_population", "response": {"output": "231000"}}}]},
    ]


async def test_streaming_yields_text_and_whole_function_call_deltas(gemini: Gemini) -> None:
    wire, llm = gemini
    wire.reply(events(
        answer([{"text": "Check"}], None),
        answer([{"text": "ing."}], None, usage(20, 3)),
        answer([{"functionCall": {"name": "city_population", "args": {"city": "Lisbon"}}}],
               "STOP", usage(20, 9)),
    ))
    schema = ToolSchema("city_population", "Population of a city.",
                        {"type": "object", "properties": {"city": {"type": "string"}}})
    out = [e async for e in llm.stream(request(tools=(schema,)), make_test_ctx(llm=llm))]
    assert wire.requests[0].path == f"/v1/models/{MODEL}:streamGenerateContent?alt=sse"
    bodies(wire)
    *deltas, result = out
    assert deltas == [
        TextDelta("Check"), TextDelta("ing."),
        ToolCallDelta(index=0, id="call_resp1_0", name="city_population",
                      arguments_json='{"city": "Lisbon"}'),
    ]
    assert isinstance(result, LLMResult)
    assert result.content == "Checking."
    assert result.tool_calls == (ToolCall("call_resp1_0", "city_population", {"city": "Lisbon"}),)
    assert result.finish_reason == "tool_calls"
    assert (result.usage.input_tokens, result.usage.output_tokens) == (20, 9)


async def test_a_stream_that_ends_before_a_finish_reason_is_an_error(gemini: Gemini) -> None:
    wire, llm = gemini
    wire.reply(events(answer([{"text": "Half an ans"}], None)))
    with pytest.raises(ProviderError) as caught:
        [e async for e in llm.stream(request(), make_test_ctx(llm=llm))]
    assert str(caught.value) == (
        "google: the stream ended before a finishReason, after 1 delta(s): the answer is "
        "incomplete"
    )
    assert (caught.value.kind, caught.value.transient) == ("stream_truncated", False)


@pytest.mark.parametrize(("raw", "message", "transient"), [
    (b'{"candidates": [{"finishReason": "STOP", "content": {"parts": [{"text": 5}]}}]}',
     "google: malformed reply: candidates.0.content.parts.0.text: Input should be a valid "
     "string", False),
    (b"{}", "google: malformed reply: candidates: expected a candidate with a finishReason, "
     "got none", False),
    (b"{not json", None, True),
    (b"<html>wrong door</html>", None, False),
])
async def test_malformed_replies_become_provider_errors(
    gemini: Gemini, raw: bytes, message: str | None, transient: bool
) -> None:
    wire, llm = gemini
    wire.reply(Reply(raw=raw))
    with pytest.raises(ProviderError) as caught:
        await chat(llm, request())
    assert caught.value.kind == "malformed_reply"
    assert caught.value.transient is transient
    if message is not None:
        assert str(caught.value) == message
    else:
        assert str(caught.value).startswith("google: malformed reply: the body is not JSON: ")


async def test_http_errors_are_classified_with_the_apis_message(gemini: Gemini) -> None:
    wire, llm = gemini
    retry_info = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "31s"}
    wire.reply(
        error(429, "RESOURCE_EXHAUSTED", "Quota exceeded for metric", retry_info),
        error(503, "UNAVAILABLE", "The model is overloaded."),
        error(400, "INVALID_ARGUMENT", "Invalid JSON payload received."),
    )
    found = []
    for _ in range(3):
        with pytest.raises(ProviderError) as caught:
            await chat(llm, request())
        e = caught.value
        found.append((str(e), e.status, e.kind, e.transient, e.retry_after))
    assert found == [
        ("google: HTTP 429 (rate_limit): RESOURCE_EXHAUSTED: Quota exceeded for metric",
         429, "rate_limit", True, 31.0),
        ("google: HTTP 503 (server_error): UNAVAILABLE: The model is overloaded.",
         503, "server_error", True, None),
        ("google: HTTP 400 (bad_request): INVALID_ARGUMENT: Invalid JSON payload received.",
         400, "bad_request", False, None),
    ]


async def test_retry_waits_the_delay_a_429_asks_for_and_one_try_is_one_request(
    gemini: Gemini,
) -> None:
    wire, llm = gemini
    delays: list[float] = []

    async def sleep(seconds: float) -> None:
        delays.append(seconds)

    retry_info = {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "7s"}
    wire.reply(error(429, "RESOURCE_EXHAUSTED", "slow down", retry_info), reply([{"text": "ok"}]))
    ctx = make_test_ctx(llm=llm, chat_middleware=[retry(sleep=sleep)])
    result = await Agent(name="a", model=MODEL, prompt="p").run("Hi", ctx)
    assert result.output == "ok"
    assert delays == [7.0]
    assert len(wire.requests) == 2


async def test_settings_are_mapped_to_the_generation_config(gemini: Gemini) -> None:
    wire, llm = gemini
    wire.reply(reply([{"text": "ok"}]))
    schema = ToolSchema("lookup", "Look a thing up.",
                        {"type": "object", "properties": {"q": {"type": "string"}}})
    settings = ModelSettings(temperature=0.2, top_p=0.9, seed=7, max_tokens=300, stop=["END"],
                             tool_choice="lookup", extra={"top_k": 40})
    await chat(llm, request(tools=(schema,), settings=settings))
    body = bodies(wire)[0]
    assert body["generationConfig"] == {
        "temperature": 0.2, "topP": 0.9, "seed": 7, "maxOutputTokens": 300,
        "stopSequences": ["END"], "topK": 40,
    }
    assert body["toolConfig"] == {"functionCallingConfig": {
        "mode": "ANY", "allowedFunctionNames": ["lookup"]}}


@pytest.mark.parametrize(("settings", "message"), [
    (ModelSettings(parallel_tool_calls=False),
     "google cannot honour ModelSettings.parallel_tool_calls: Gemini has no setting that "
     "limits a turn to one function call; leave it unset (or True). Remove it from the "
     "agent's or the run's settings, or use a provider that supports it"),
    (ModelSettings(extra={"frequency_boost": 1}),
     "google cannot honour ModelSettings.extra: ['frequency_boost'] are not "
     "GenerateContentConfig fields; accepted: the SDK's GenerateContentConfig field names, "
     "e.g. 'top_k'. Remove it from the agent's or the run's settings, or use a provider "
     "that supports it"),
    (ModelSettings(extra={"temperature": 1}),
     "google cannot honour ModelSettings.extra: it sets ['temperature'], which agentkit "
     "already sets from the request; use the ModelSettings field (or the agent's prompt, "
     "model and tools) instead. Remove it from the agent's or the run's settings, or use a "
     "provider that supports it"),
])
async def test_settings_gemini_cannot_honour_are_refused_before_sending(
    gemini: Gemini, settings: ModelSettings, message: str
) -> None:
    wire, llm = gemini
    extra_temperature = "temperature" in settings.extra
    req = request(settings=ModelSettings(temperature=0.5).merged(settings)
                  if extra_temperature else settings,
                  tools=(ToolSchema("t", "A tool.", {"type": "object",
                                                     "properties": {"a": {"type": "string"}}}),))
    with pytest.raises(UnsupportedSetting) as caught:
        await chat(llm, req)
    assert str(caught.value) == message
    assert wire.requests == []


async def test_a_png_and_a_pdf_in_a_user_message_are_sent_inline(gemini: Gemini) -> None:
    wire, llm = gemini
    wire.reply(reply([{"text": "An invoice."}]))
    message = Message("user", "What is this?", attachments=(
        Image(PNG, "image/png"), File(PDF, "application/pdf", name="invoice.pdf"),
        File.from_url("https://example.com/terms.pdf"),
    ))
    await chat(llm, request(message))
    # The SDK writes the fields inside a part in snake_case, which Gemini's JSON accepts
    # beside camelCase (proto JSON takes both spellings).
    assert bodies(wire)[0]["contents"] == [{"role": "user", "parts": [
        {"text": "What is this?"},
        {"inlineData": {"data": b64(PNG), "mime_type": "image/png"}},
        {"inlineData": {"data": b64(PDF), "mime_type": "application/pdf"}},
        {"fileData": {"file_uri": "https://example.com/terms.pdf",
                      "mime_type": "application/pdf"}},
    ]}]


async def test_a_media_type_gemini_cannot_take_is_refused_before_sending(gemini: Gemini) -> None:
    wire, llm = gemini
    message = Message("user", "Look", attachments=(Image(b"II*\x00", "image/tiff"),))
    with pytest.raises(UnsupportedMedia) as caught:
        await chat(llm, request(message))
    assert caught.value.media_type == "image/tiff (as image bytes)"
    assert str(caught.value).startswith("google cannot take image/tiff (as image bytes) in "
                                        "messages[0] (user): it accepts application/pdf, "
                                        "audio/aac, ")
    assert wire.requests == []


async def test_an_inline_part_over_the_request_limit_is_refused_before_sending(
    gemini: Gemini,
) -> None:
    wire, llm = gemini
    big = Image(bytes(20 * 1024 * 1024 + 1), "image/png")
    with pytest.raises(UnsupportedMedia) as caught:
        await chat(llm, request(Message("user", "Look", attachments=(big,))))
    assert caught.value.limit == (
        "Gemini takes inline data of at most 20 MB a request (20,971,520 bytes); this one is "
        "20,971,521 bytes")
    assert wire.requests == []


async def test_thinking_is_configured_and_signatures_go_back_on_the_next_request(
    gemini: Gemini,
) -> None:
    wire, llm = gemini
    wire.reply(
        reply([
            {"text": "The user wants a population.", "thought": True},
            {"functionCall": {"name": "city_population", "args": {"city": "Lisbon"}},
             "thoughtSignature": b64(b"sig-call")},
        ], meta=usage(50, 10, thoughtsTokenCount=120)),
        reply([{"text": "545,000.", "thoughtSignature": b64(b"sig-text")}]),
        reply([{"text": "Yes."}]),
    )
    thinker = Agent(name="atlas", model=MODEL, prompt="You answer questions about cities.",
                    cognition=ReActCognition(tools=[city_population]),
                    settings=ModelSettings(reasoning=Reasoning(effort="high", summary=True)))
    result = await thinker.run("How big is Lisbon?", make_ctx(llm))
    assert result.output == "545,000."
    first, second = bodies(wire)
    assert first["generationConfig"] == {
        "thinkingConfig": {"include_thoughts": True, "thinking_budget": 24576}}
    assert second["contents"][1] == {"role": "model", "parts": [
        {"text": "The user wants a population.", "thought": True},
        {"functionCall": {"name": "city_population", "args": {"city": "Lisbon"}},
         "thoughtSignature": b64(b"sig-call")},
    ]}
    # A later request, with state from another provider beside it: only Gemini's goes.
    history = (
        Message("user", "How big is Lisbon?"),
        Message("assistant", "545,000.", reasoning=(
            ReasoningPart("google", "", {"text_signature": b64(b"sig-text")}),
            ReasoningPart("anthropic", "hmm", {"type": "thinking", "signature": "xyz"}),
        )),
        Message("user", "Sure?"),
    )
    await chat(llm, request(*history))
    assert bodies(wire)[2]["contents"][1] == {"role": "model", "parts": [
        {"text": "545,000.", "thoughtSignature": b64(b"sig-text")}]}


async def test_streamed_thoughts_are_reasoning_deltas_and_one_reasoning_part(
    gemini: Gemini,
) -> None:
    wire, llm = gemini
    wire.reply(events(
        answer([{"text": "Thinking about ", "thought": True}], None),
        answer([{"text": "cities.", "thought": True, "thoughtSignature": b64(b"s1")}], None),
        answer([{"text": "Done."}], "STOP", usage(5, 2, thoughtsTokenCount=30)),
    ))
    req = request(settings=ModelSettings(reasoning=Reasoning(effort="low", summary=True)))
    *deltas, result = [e async for e in llm.stream(req, make_test_ctx(llm=llm))]
    assert deltas == [ReasoningDelta("Thinking about "), ReasoningDelta("cities."),
                      TextDelta("Done.")]
    assert isinstance(result, LLMResult)
    assert result.reasoning == (
        ReasoningPart("google", "Thinking about cities.", {"thought_signature": b64(b"s1")}),
    )
    assert result.usage.reasoning_tokens == 30
    assert result.usage.cost_usd == pytest.approx((5 * 0.30 + (2 + 30) * 2.50) / 1e6)


@pytest.mark.parametrize("reason", ["SAFETY", "RECITATION"])
async def test_filtered_answers_are_content_filter_with_gemini_reason_kept(
    gemini: Gemini, reason: str
) -> None:
    wire, llm = gemini
    wire.reply(Reply(body=answer([], reason, usage())))
    result = await chat(llm, request())
    assert (result.finish_reason, result.provider_details) == (
        "content_filter", {"finish_reason": reason})


async def test_a_blocked_prompt_is_content_filter_with_the_block_reason(gemini: Gemini) -> None:
    wire, llm = gemini
    wire.reply(Reply(body={"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"},
                           "usageMetadata": usage(8, 0)}))
    result = await chat(llm, request())
    assert (result.content, result.finish_reason, result.provider_details) == (
        "", "content_filter", {"block_reason": "PROHIBITED_CONTENT"})


async def test_vertex_mode_sends_to_the_project_and_location_path(wire: WireServer) -> None:
    from google.oauth2.credentials import Credentials

    llm = GeminiLLM(vertexai=True, project="acme-prod", location="europe-west4",
                    credentials=Credentials(token="vertex-token"), base_url=wire.url)
    wire.reply(reply([{"text": "Hello from Vertex."}]))
    result = await llm.chat(ChatRequest(model="vertex:gemini-2.5-pro",
                                        messages=(Message("user", "Hi"),)),
                            make_test_ctx(llm=llm))
    assert result.content == "Hello from Vertex."
    assert wire.requests[0].path == (
        "/v1beta1/projects/acme-prod/locations/europe-west4/publishers/google/models/"
        "gemini-2.5-pro:generateContent"
    )
    assert wire.requests[0].headers["authorization"] == "Bearer vertex-token"
    bodies(wire)


def test_vertex_with_a_base_url_needs_the_project_and_location(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT", raising=False)
    monkeypatch.delenv("GOOGLE_CLOUD_LOCATION", raising=False)
    with pytest.raises(ProviderError) as caught:
        GeminiLLM(vertexai=True, base_url="http://127.0.0.1:9")
    assert str(caught.value) == (
        "vertex: no credentials: Vertex AI with base_url= needs a project and a location: "
        "set GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION or pass "
        "GeminiLLM(project=..., location=...)"
    )


def test_google_without_a_key_names_the_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentkit.providers import llm_for

    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ProviderError) as caught:
        llm_for("google:gemini-2.5-flash")
    assert str(caught.value) == (
        "google: no credentials: set GEMINI_API_KEY (or GOOGLE_API_KEY) or pass "
        "GeminiLLM(api_key=...)"
    )
    assert caught.value.kind == "authentication"


def test_llm_for_builds_gemini_for_google_and_vertex_specs(wire: WireServer) -> None:
    from agentkit.providers import llm_for, parse_model_spec

    assert parse_model_spec("google:gemini-2.5-flash").provider == "google"
    assert parse_model_spec("vertex:gemini-2.5-pro").model == "gemini-2.5-pro"
    google = llm_for("google:gemini-2.5-flash", api_key="k", base_url=wire.url)
    vertex = llm_for("vertex:gemini-2.5-pro", project="p", location="us-central1",
                     base_url=wire.url)
    assert (repr(google), repr(vertex)) == ("GeminiLLM()", "GeminiLLM(vertexai=True)")
    assert (google.provider, vertex.provider) == ("google", "vertex")


async def test_a_usage_of_an_unpriced_model_names_it(wire: WireServer) -> None:
    llm = google_llm(wire)
    wire.reply(reply([{"text": "ok"}]))
    result = await llm.chat(ChatRequest(model="gemini-9-ultra", messages=(Message("user", "Hi"),)),
                            make_test_ctx(llm=llm))
    assert result.usage.unpriced_models == ("gemini-9-ultra",)


async def test_a_tool_results_image_and_other_providers_call_state_are_handled(
    gemini: Gemini,
) -> None:
    wire, llm = gemini
    wire.reply(reply([{"text": "A radar map."}]))
    call = ToolCall("call_1", "radar", {"city": "Faro"},
                    provider_state={"openai": {"id": "fc_9"}, "vertex": {"thought_signature":
                                                                          b64(b"other")}})
    history = (
        Message("user", "Radar for Faro?"),
        Message("assistant", "", tool_calls=(call,)),
        Message("tool", "Radar for Faro [image: image/png, 24 bytes]", tool_call_id="call_1",
                name="radar", attachments=(Image(PNG, "image/png"),)),
    )
    await chat(llm, request(*history))
    assert bodies(wire)[0]["contents"][1:] == [
        {"role": "model", "parts": [
            {"functionCall": {"name": "radar", "args": {"city": "Faro"}}}]},
        {"role": "user", "parts": [
            {"functionResponse": {"name": "radar", "response": {
                "output": "Radar for Faro [image: image/png, 24 bytes]"}}},
            {"inlineData": {"data": b64(PNG), "mime_type": "image/png"}},
        ]},
    ]


@tool(side_effecting=True, requires_approval=True)
def book_table(restaurant: str) -> str:
    """Book a table at a named restaurant for tonight; needs a human's approval."""
    return f"booked {restaurant}"


async def test_signatures_survive_a_suspension_and_go_back_after_resume(
    wire: WireServer, tmp_path: Path
) -> None:
    from agentkit.state.stores.sqlite import SQLiteStore

    wire.reply(
        reply([{"functionCall": {"name": "book_table", "args": {"restaurant": "Solar"}},
                "thoughtSignature": b64(b"sig-book")}]),
        reply([{"text": "Booked."}]),
    )
    booker = Agent(name="concierge", model=MODEL, prompt="You book tables.",
                   cognition=ReActCognition(tools=[book_table]))
    path = tmp_path / "runs.db"
    first = await booker.run("Book Solar.", make_ctx(google_llm(wire), store=SQLiteStore(path)))
    suspended = first.suspended
    assert suspended is not None
    # Another provider and another store object: only the checkpoint carries the state.
    decisions = {call.id: "approve" for call in suspended.pending}
    resumed = await booker.resume(suspended.run_id, decisions,
                                  make_ctx(google_llm(wire), store=SQLiteStore(path)))
    assert resumed.output == "Booked."
    assert bodies(wire)[1]["contents"][1] == {"role": "model", "parts": [
        {"functionCall": {"name": "book_table", "args": {"restaurant": "Solar"}},
         "thoughtSignature": b64(b"sig-book")}]}


async def test_the_gemini_api_stays_the_gemini_api_whatever_the_environment_says(
    wire: WireServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_GENAI_USE_VERTEXAI", "true")
    monkeypatch.setenv("GOOGLE_CLOUD_PROJECT", "acme")
    wire.reply(reply([{"text": "ok"}]))
    await chat(google_llm(wire), request())
    assert wire.requests[0].path == f"/v1/models/{MODEL}:generateContent"


async def test_an_agent_streams_a_thinking_gemini_answer_as_text_deltas(gemini: Gemini) -> None:
    from agentkit.agents import FinalEvent, TextDeltaEvent

    wire, llm = gemini
    wire.reply(events(
        answer([{"text": "Weighing it.", "thought": True}], None),
        answer([{"text": "Lisbon."}], "STOP", usage(5, 2, thoughtsTokenCount=9)),
    ))
    thinker = Agent(name="a", model=MODEL, prompt="p",
                    settings=ModelSettings(reasoning=Reasoning(summary=True)))
    seen = [e async for e in thinker.stream("Capital of Portugal?", make_ctx(llm))]
    assert [e.text for e in seen if isinstance(e, TextDeltaEvent)] == ["Lisbon."]
    final = seen[-1]
    assert isinstance(final, FinalEvent)
    assert final.result.output == "Lisbon."
    assert final.result.usage.reasoning_tokens == 9
    assert final.result.messages[-1].reasoning == (ReasoningPart("google", "Weighing it."),)


async def test_reasoning_is_a_level_on_gemini_3_and_refused_where_there_is_no_thinking(
    gemini: Gemini,
) -> None:
    wire, llm = gemini
    wire.reply(reply([{"text": "ok"}]))
    think = ModelSettings(reasoning=Reasoning(effort="low"))
    await chat(llm, ChatRequest(model="gemini-3-flash", messages=(Message("user", "Hi"),),
                                settings=think))
    assert bodies(wire)[0]["generationConfig"] == {
        "thinkingConfig": {"include_thoughts": False, "thinking_level": "LOW"}}
    with pytest.raises(UnsupportedSetting) as caught:
        await chat(llm, ChatRequest(model="gemini-2.0-flash", messages=(Message("user", "Hi"),),
                                    settings=think))
    assert str(caught.value) == (
        "google cannot honour ModelSettings.reasoning: gemini-2.0-flash has no thinking; "
        "Gemini 2.5 and later think. Remove it from the agent's or the run's settings, or "
        "use a provider that supports it"
    )
    assert len(wire.requests) == 1


async def test_an_input_over_the_window_is_a_context_length_error(gemini: Gemini) -> None:
    wire, llm = gemini
    wire.reply(error(400, "INVALID_ARGUMENT", "The input token count (1200000) exceeds the "
                     "maximum number of tokens allowed (1048576)."))
    with pytest.raises(ProviderError) as caught:
        await chat(llm, request())
    assert (caught.value.kind, caught.value.transient, caught.value.status) == (
        "context_length", False, 400)
