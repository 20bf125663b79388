"""Both providers under broken replies, JSON and streamed, from a real HTTP server.

Every malformed reply ends as a classified ProviderError that carries the provider's
request id, or, when only a tool call's arguments are bad, as a call the model is asked
to repair (``ToolCall.arguments_error``); never as a raw decoding error.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any

import pytest

from agentkit.core.contracts.errors import ProviderError
from agentkit.core.contracts.types import ChatRequest, LLMResult, Message, ToolCallDelta
from agentkit.core.testing import make_test_ctx
from agentkit.providers import AnthropicLLM, OpenAILLM

from .conftest import Reply, WireServer

CLAUDE = "claude-sonnet-4-6"
GPT = "gpt-4o-mini"
A_ID = {"request-id": "req_a1"}
O_ID = {"x-request-id": "req_o1"}
REQUEST_IDS = {"anthropic": "req_a1", "openai": "req_o1"}


@dataclass(frozen=True)
class Fails:
    """The call raises a ProviderError with these fields and exactly this message."""

    kind: str
    transient: bool
    message: str


@dataclass(frozen=True)
class Repair:
    """The call succeeds; its one tool call is refused for the model to repair."""

    problem: str


def deep(levels: int) -> str:
    """Tool arguments nested ``levels`` lists deep inside their object."""
    return '{"city": ' + "[" * levels + "]" * levels + "}"


HUGE = '{"city": ' + "7" * 5000 + "}"


def _parses(levels: int) -> bool:
    try:
        json.loads("[" * levels + "]" * levels)
    except RecursionError:
        return False
    return True


# Python 3.11 parses JSON about 1,000 levels deep at most; later versions parse deeper.
# Arguments sent as a string are parsed on their own and refused either way; a tool input
# inside a non-streamed Anthropic body can only be refused when the body parses at all.
PARSES_2000_DEEP = _parses(2200)


# Anthropic Messages API ----------------------------------------------------------------

def a_body(**fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": "msg_1", "type": "message", "role": "assistant", "model": CLAUDE,
        "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn",
        "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5},
    }
    body.update(fields)
    return body


def a_json(body: Any) -> Reply:
    return Reply(body=body, headers=A_ID)


def a_raw(raw: bytes, content_type: str = "application/json") -> Reply:
    return Reply(raw=raw, content_type=content_type, headers=A_ID)


def a_tool_input(input_json: str) -> Reply:
    """A tool_use block whose ``input`` is the JSON text given, spliced in verbatim."""
    body = a_body(content=[{"type": "tool_use", "id": "toolu_1", "name": "city_population",
                            "input": "@@"}], stop_reason="tool_use")
    return a_raw(json.dumps(body).replace('"@@"', input_json).encode())


def a_block(block: Any) -> Reply:
    return a_json(a_body(content=[block]))


def a_error(error_type: str, text: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": error_type, "message": text}}


def a_sse(*events: tuple[str, Any]) -> Reply:
    return Reply(events=list(events), headers=A_ID)


A_START = ("message_start", {"type": "message_start", "message": {
    "id": "msg_s", "type": "message", "role": "assistant", "model": CLAUDE, "content": [],
    "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 20, "output_tokens": 1}}})
A_TEXT_START = ("content_block_start", {"type": "content_block_start", "index": 0,
                                        "content_block": {"type": "text", "text": ""}})
A_TOOL_START = ("content_block_start", {"type": "content_block_start", "index": 0,
                                        "content_block": {"type": "tool_use", "id": "toolu_1",
                                                          "name": "city_population",
                                                          "input": {}}})
A_STOP_BLOCK = ("content_block_stop", {"type": "content_block_stop", "index": 0})
A_END = ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                           "usage": {"output_tokens": 7}})
A_STOP = ("message_stop", {"type": "message_stop"})


def a_text(text: Any) -> tuple[str, Any]:
    return ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                    "delta": {"type": "text_delta", "text": text}})


def a_args(fragment: Any) -> tuple[str, Any]:
    delta = {"type": "input_json_delta", "partial_json": fragment}
    return ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})


def a_streamed_arguments(text: str) -> Reply:
    pieces = [text[i:i + 700] for i in range(0, len(text), 700)]
    return a_sse(A_START, A_TOOL_START, *(a_args(p) for p in pieces), A_STOP_BLOCK,
                 ("message_delta", {"type": "message_delta",
                                    "delta": {"stop_reason": "tool_use"}, "usage": None}),
                 A_STOP)


def a_malformed(problem: str, transient: bool = False) -> Fails:
    return Fails("malformed_reply", transient,
                 f"anthropic: malformed reply: {problem}; request id req_a1")


NOT_ARGUMENTS = "expected a JSON object, got {}"
TOO_DEEP = "nested deeper than 100 levels; at most 100 are accepted"
TOO_LONG = "contains an integer of 5000 digits; at most 4300 digits are accepted"

ANTHROPIC_CHAT: dict[str, tuple[Reply, Fails | Repair]] = {
    "invalid JSON": (a_raw(b'{"id": "msg_1", "content": ['), a_malformed(
        "the body is not valid JSON (Expecting value: char 28): "
        "'{\"id\": \"msg_1\", \"content\": ['", transient=True)),
    "an empty body": (a_raw(b""), a_malformed("the body is empty", transient=True)),
    "an HTML page": (a_raw(b"<!doctype html><h1>Welcome to nginx!</h1>", "text/html"),
                     a_malformed("the body is an HTML page, not the API's JSON (is base_url "
                                 "the API's address?): '<!doctype html><h1>Welcome to "
                                 "nginx!</h1>'")),
    "plain text": (a_raw(b"upstream connect error", "text/plain"), a_malformed(
        "the body is not valid JSON (Expecting value: char 0): 'upstream connect error'",
        transient=True)),
    "{}": (a_json({}), a_malformed("content: expected a list, got nothing")),
    "a list": (a_json([]), a_malformed("body: expected an object, got a list")),
    "content: null": (a_json(a_body(content=None)),
                      a_malformed("content: expected a list, got null")),
    "a block that is a number": (a_json(a_body(content=[5])),
                                 a_malformed("content[0]: expected an object, got an integer")),
    "a block without a type": (a_block({"text": "hi"}),
                               a_malformed("content[0].type: expected a string, got nothing")),
    "text: null": (a_block({"type": "text", "text": None}),
                   a_malformed("content[0].text: expected a string, got null")),
    "a tool_use without an id": (
        a_block({"type": "tool_use", "name": "city_population", "input": {}}),
        a_malformed("content[0].id: expected a string, got nothing")),
    "a tool_use whose name is a number": (
        a_block({"type": "tool_use", "id": "toolu_1", "name": 7, "input": {}}),
        a_malformed("content[0].name: expected a string, got an integer")),
    "usage as text": (a_json(a_body(usage={"input_tokens": "ten"})),
                      a_malformed("usage.input_tokens: expected an integer or null, got a string")),
    "usage: a list": (a_json(a_body(usage=[1])),
                      a_malformed("usage: expected an object or null, got a list")),
    "an event stream where one body was asked for": (
        Reply(events=[A_STOP], headers=A_ID),
        a_malformed("asked for one JSON body, got an event stream: "
                    "'event: message_stop\\ndata: {\"type\": \"message_stop\"}\\n\\n'")),
    "an overloaded error at status 200": (
        a_json(a_error("overloaded_error", "Overloaded")),
        Fails("overloaded", True, "anthropic: overloaded_error: Overloaded; request id req_a1")),
    "an error that is not an object": (a_json({"type": "error", "error": "boom"}),
                                       a_malformed("error: expected an object, got a string")),
    "tool input as a string": (a_tool_input('"Lisbon"'), Repair(NOT_ARGUMENTS.format("a string"))),
    "tool input as a list": (a_tool_input('["Lisbon"]'), Repair(NOT_ARGUMENTS.format("a list"))),
    "tool input: null": (a_tool_input("null"), Repair(NOT_ARGUMENTS.format("null"))),
    "tool input 600 deep": (a_tool_input(deep(600)), Repair(TOO_DEEP)),
    "tool input 2,000 deep": (a_tool_input(deep(2000)),
                              Repair(TOO_DEEP) if PARSES_2000_DEEP
                              else a_malformed("the body is nested too deeply to parse")),
    "tool input with a 5,000-digit integer": (a_tool_input(HUGE), Repair(TOO_LONG)),
}

ANTHROPIC_STREAM: dict[str, tuple[Reply, Fails | Repair]] = {
    "an event of invalid JSON": (
        a_sse(A_START, ("content_block_delta", "{not json")),
        a_malformed("an event is not valid JSON (Expecting property name enclosed in double "
                    "quotes: char 1): '{not json'", transient=True)),
    "an event that is a list": (a_sse(A_START, ("content_block_delta", [1])),
                                a_malformed("event: expected an object, got a list")),
    "an event without a type": (a_sse(A_START, ("content_block_delta", {"index": 0})),
                                a_malformed("event.type: expected a string, got nothing")),
    "message: null": (a_sse(("message_start", {"type": "message_start", "message": None})),
                      a_malformed("message_start.message: expected an object, got null")),
    "content_block: null": (
        a_sse(A_START, ("content_block_start", {"type": "content_block_start", "index": 0,
                                                "content_block": None})),
        a_malformed("content_block_start.content_block: expected an object, got null")),
    "an index as text": (
        a_sse(A_START, ("content_block_delta", {"type": "content_block_delta", "index": "0",
                                                "delta": {"type": "text_delta", "text": "x"}})),
        a_malformed("content_block_delta.index: expected an integer, got a string")),
    "text as a number": (a_sse(A_START, A_TEXT_START, a_text(5)), a_malformed(
        "content_block_delta.delta.text: expected a string, got an integer")),
    "partial_json: null": (a_sse(A_START, A_TOOL_START, a_args(None)), a_malformed(
        "content_block_delta.delta.partial_json: expected a string, got null")),
    "a JSON body where a stream was asked for": (a_json(a_body()), a_malformed(
        "asked for a stream, got a body of type application/json instead of "
        "text/event-stream: '{\"id\": \"msg_1\", \"type\": \"message\", \"role\": "
        "\"assistant\", \"model\": \"claude-sonnet-...'")),
    "a stream cut after two deltas": (
        a_sse(A_START, A_TEXT_START, a_text("Lisbon is "), a_text("bigg")),
        Fails("stream_truncated", False,
              "anthropic: the stream ended before message_stop, after 2 delta(s): the answer "
              "is incomplete; request id req_a1")),
    "a stream cut before its message_stop": (
        a_sse(A_START, A_TEXT_START, a_text("Lisbon."), A_STOP_BLOCK, A_END),
        Fails("stream_truncated", False,
              "anthropic: the stream ended before message_stop, after 1 delta(s): the answer "
              "is incomplete; request id req_a1")),
    "a stream cut before any delta": (
        a_sse(A_START),
        Fails("stream_truncated", True,
              "anthropic: the stream ended before message_stop, after 0 delta(s): the answer "
              "is incomplete; request id req_a1")),
    "an empty stream": (
        a_sse(),
        Fails("stream_truncated", True,
              "anthropic: the stream ended before message_stop, after 0 delta(s): the answer "
              "is incomplete; request id req_a1")),
    "overloaded_error mid-stream": (
        a_sse(A_START, A_TEXT_START, a_text("Lisbon"),
              ("error", a_error("overloaded_error", "Overloaded"))),
        Fails("overloaded", True, "anthropic: overloaded_error: Overloaded; request id req_a1")),
    "api_error mid-stream": (
        a_sse(A_START, ("error", a_error("api_error", "Internal server error"))),
        Fails("server_error", True,
              "anthropic: api_error: Internal server error; request id req_a1")),
    "invalid_request_error mid-stream": (
        a_sse(A_START, ("error", a_error("invalid_request_error", "bad tool schema"))),
        Fails("bad_request", False,
              "anthropic: invalid_request_error: bad tool schema; request id req_a1")),
    "an error event of invalid JSON": (
        a_sse(A_START, ("error", "Overloaded")),
        a_malformed("an event is not valid JSON (Expecting value: char 0): 'Overloaded'",
                    transient=True)),
    "streamed arguments 600 deep": (a_streamed_arguments(deep(600)), Repair(TOO_DEEP)),
    "streamed arguments 2,000 deep": (a_streamed_arguments(deep(2000)), Repair(TOO_DEEP)),
    "streamed arguments with a 5,000-digit integer": (a_streamed_arguments(HUGE),
                                                      Repair(TOO_LONG)),
    "streamed arguments that are a list": (a_streamed_arguments("[1, 2]"),
                                           Repair(NOT_ARGUMENTS.format("a list"))),
}


# OpenAI Chat Completions ---------------------------------------------------------------

def o_body(message: Any = None, **fields: Any) -> dict[str, Any]:
    if message is None:
        message = {"role": "assistant", "content": "hi"}
    body: dict[str, Any] = {
        "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": GPT,
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
    body.update(fields)
    return body


def o_json(body: Any) -> Reply:
    return Reply(body=body, headers=O_ID)


def o_raw(raw: bytes, content_type: str = "application/json") -> Reply:
    return Reply(raw=raw, content_type=content_type, headers=O_ID)


def o_calls(*calls: Any) -> Reply:
    return o_json(o_body({"role": "assistant", "content": None, "tool_calls": list(calls)}))


def o_call(arguments: Any) -> Reply:
    return o_calls({"id": "call_1", "type": "function",
                    "function": {"name": "city_population", "arguments": arguments}})


def o_malformed(problem: str, transient: bool = False) -> Fails:
    return Fails("malformed_reply", transient,
                 f"openai: malformed reply: {problem}; request id req_o1")


def chunk(delta: Any, finish: str | None = None) -> dict[str, Any]:
    return {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": GPT,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


def o_sse(*chunks: Any, done: bool = True) -> Reply:
    events: list[tuple[str | None, Any]] = [(None, c) for c in chunks]
    if done:
        events.append((None, "[DONE]"))
    return Reply(events=events, headers=O_ID)


def o_streamed_arguments(text: str) -> Reply:
    pieces = [text[i:i + 700] for i in range(0, len(text), 700)]
    first = {"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                             "function": {"name": "city_population", "arguments": ""}}]}
    rest = [{"tool_calls": [{"index": 0, "function": {"arguments": p}}]} for p in pieces]
    return o_sse(chunk(first), *(chunk(r) for r in rest), chunk({}, "tool_calls"))


def piece(**fields: Any) -> dict[str, Any]:
    return {"tool_calls": [{"index": 0, **fields}]}


OPENAI_CHAT: dict[str, tuple[Reply, Fails | Repair]] = {
    "invalid JSON": (o_raw(b'{"id": "chatcmpl-1", "choices": ['), o_malformed(
        "the body is not valid JSON (Expecting value: char 33): "
        "'{\"id\": \"chatcmpl-1\", \"choices\": ['", transient=True)),
    "an empty body": (o_raw(b""), o_malformed("the body is empty", transient=True)),
    "an HTML page": (o_raw(b"<html><body>Open WebUI</body></html>", "text/html; charset=utf-8"),
                     o_malformed("the body is an HTML page, not the API's JSON (is base_url "
                                 "the API's address?): '<html><body>Open WebUI</body></html>'")),
    "{}": (o_json({}), o_malformed("choices: expected a list, got nothing")),
    "a number": (o_json(3), o_malformed("body: expected an object, got an integer")),
    "choices: []": (o_json(o_body(choices=[])),
                    o_malformed("choices: expected at least one choice, got an empty list")),
    "a choice: null": (o_json(o_body(choices=[None])),
                       o_malformed("choices[0]: expected an object, got null")),
    "message: null": (o_json(o_body(choices=[{"index": 0, "message": None,
                                              "finish_reason": "stop"}])),
                      o_malformed("choices[0].message: expected an object, got null")),
    "content as a number": (o_json(o_body({"role": "assistant", "content": 5})), o_malformed(
        "choices[0].message.content: expected a string or null, got an integer")),
    "tool_calls as text": (o_json(o_body({"role": "assistant", "tool_calls": "call_1"})),
                           o_malformed("choices[0].message.tool_calls: expected a list or null, "
                                       "got a string")),
    "function: null": (o_calls({"id": "call_1", "type": "function", "function": None}),
                       o_malformed("choices[0].message.tool_calls[0].function: expected an "
                                   "object, got null")),
    "a tool call without a name": (
        o_calls({"id": "call_1", "type": "function", "function": {"arguments": "{}"}}),
        o_malformed("choices[0].message.tool_calls[0].function.name: expected a string, "
                    "got nothing")),
    "a tool call without an id": (
        o_calls({"type": "function", "function": {"name": "city_population",
                                                  "arguments": "{}"}}),
        o_malformed("choices[0].message.tool_calls[0].id: expected a string, got nothing")),
    "usage as text": (o_json(o_body(usage="lots")),
                      o_malformed("usage: expected an object or null, got a string")),
    "an event stream where one body was asked for": (
        o_sse(chunk({"content": "hi"})),
        o_malformed("asked for one JSON body, got an event stream: 'data: {\"id\": \"c\", "
                    "\"object\": \"chat.completion.chunk\", \"created\": 0, \"model\": "
                    "\"gpt...'")),
    "a rate limit at status 200": (
        o_json({"error": {"message": "Rate limit reached", "type": "requests",
                          "code": "rate_limit_exceeded"}}),
        Fails("rate_limit", True, "openai: rate_limit_exceeded: Rate limit reached; "
                                  "request id req_o1")),
    "a server_error at status 200": (
        o_json({"error": {"message": "The server had an error", "type": "server_error"}}),
        Fails("server_error", True, "openai: server_error: The server had an error; "
                                    "request id req_o1")),
    "arguments that are not JSON": (o_call('{"city": "Lisb'), Repair(
        "not valid JSON (Unterminated string starting at: char 9): '{\"city\": \"Lisb'")),
    "arguments as a number": (o_call(5), Repair(NOT_ARGUMENTS.format("an integer"))),
    "arguments as a JSON list": (o_call("[1]"), Repair(NOT_ARGUMENTS.format("a list"))),
    "arguments 600 deep": (o_call(deep(600)), Repair(TOO_DEEP)),
    "arguments 2,000 deep": (o_call(deep(2000)), Repair(TOO_DEEP)),
    "arguments with a 5,000-digit integer": (o_call(HUGE), Repair(TOO_LONG)),
}

OPENAI_STREAM: dict[str, tuple[Reply, Fails | Repair]] = {
    "an event of invalid JSON": (
        o_sse(chunk({"content": "Lis"}), "{not json"),
        o_malformed("an event is not valid JSON (Expecting property name enclosed in double "
                    "quotes: char 1): '{not json'", transient=True)),
    "a chunk that is a list": (o_sse([1]), o_malformed("chunk: expected an object, got a list")),
    "choices as text": (o_sse({"choices": "x"}),
                        o_malformed("chunk.choices: expected a list or null, got a string")),
    "a choice: null": (o_sse({"choices": [None]}),
                       o_malformed("chunk.choices[0]: expected an object, got null")),
    "content as a number": (o_sse(chunk({"content": 5})), o_malformed(
        "chunk.choices[0].delta.content: expected a string or null, got an integer")),
    "a tool call index as text": (o_sse(chunk({"tool_calls": [{"index": "0"}]})), o_malformed(
        "chunk.choices[0].delta.tool_calls[0].index: expected an integer or null, got a "
        "string")),
    "arguments as a number": (
        o_sse(chunk(piece(id="call_1", function={"name": "city_population", "arguments": 5}))),
        o_malformed("chunk.choices[0].delta.tool_calls[0].function.arguments: expected a "
                    "string or null, got an integer")),
    "a tool call that never got an id": (
        o_sse(chunk(piece(function={"name": "city_population", "arguments": "{}"})),
              chunk({}, "tool_calls")),
        o_malformed("tool_calls[0].id: expected a string, got nothing")),
    "a JSON body where a stream was asked for": (o_json(o_body()), o_malformed(
        "asked for a stream, got a body of type application/json instead of "
        "text/event-stream: '{\"id\": \"chatcmpl-1\", \"object\": \"chat.completion\", "
        "\"created\": 0, \"model\": \"gpt-4o...'")),
    "a stream cut after two deltas": (
        o_sse(chunk({"content": "Lisbon is "}), chunk({"content": "bigg"}), done=False),
        Fails("stream_truncated", False,
              "openai: the stream ended before data: [DONE], after 2 delta(s): the answer is "
              "incomplete; request id req_o1")),
    "a stream cut after its finish": (
        o_sse(chunk({"content": "Lisbon."}), chunk({}, "stop"), done=False),
        Fails("stream_truncated", False,
              "openai: the stream ended before data: [DONE], after 1 delta(s): the answer is "
              "incomplete; request id req_o1")),
    "a [DONE] without a finish_reason": (
        o_sse(chunk({"content": "Lisbon is "})),
        Fails("stream_truncated", False,
              "openai: the stream ended without a finish_reason, after 1 delta(s): the answer "
              "is incomplete; request id req_o1")),
    "an empty stream": (
        o_sse(done=False),
        Fails("stream_truncated", True,
              "openai: the stream ended before data: [DONE], after 0 delta(s): the answer is "
              "incomplete; request id req_o1")),
    "a server_error mid-stream": (
        o_sse(chunk({"content": "Lis"}),
              {"error": {"message": "The server had an error", "type": "server_error"}}),
        Fails("server_error", True, "openai: server_error: The server had an error; "
                                    "request id req_o1")),
    "streamed arguments 600 deep": (o_streamed_arguments(deep(600)), Repair(TOO_DEEP)),
    "streamed arguments 2,000 deep": (o_streamed_arguments(deep(2000)), Repair(TOO_DEEP)),
    "streamed arguments with a 5,000-digit integer": (o_streamed_arguments(HUGE),
                                                      Repair(TOO_LONG)),
}


def provider(name: str, wire: WireServer) -> AnthropicLLM | OpenAILLM:
    if name == "anthropic":
        return AnthropicLLM(api_key="k", base_url=wire.url, max_retries=0)
    return OpenAILLM(api_key="k", base_url=f"{wire.url}/v1", max_retries=0)


def request(name: str) -> ChatRequest:
    return ChatRequest(model=CLAUDE if name == "anthropic" else GPT,
                       messages=(Message("user", "How big is Lisbon?"),))


async def chat(name: str, wire: WireServer) -> LLMResult:
    return await provider(name, wire).chat(request(name), make_test_ctx())


async def stream(name: str, wire: WireServer) -> LLMResult:
    events = [e async for e in provider(name, wire).stream(request(name), make_test_ctx())]
    final = events[-1]
    assert isinstance(final, LLMResult)
    assert all(isinstance(e, ToolCallDelta) for e in events[:-1])
    return final


CASES = [
    pytest.param(name, path, reply, expected, id=f"{name} {path}: {label}")
    for name, path, table in [
        ("anthropic", "json", ANTHROPIC_CHAT), ("anthropic", "sse", ANTHROPIC_STREAM),
        ("openai", "json", OPENAI_CHAT), ("openai", "sse", OPENAI_STREAM),
    ]
    for label, (reply, expected) in table.items()
]


@pytest.mark.parametrize(("name", "path", "reply", "expected"), CASES)
async def test_a_broken_reply_is_a_classified_error_or_a_repair_turn(
    wire: WireServer, name: str, path: str, reply: Reply, expected: Fails | Repair
) -> None:
    wire.reply(reply)
    call = chat if path == "json" else stream
    if isinstance(expected, Fails):
        with pytest.raises(ProviderError) as info:
            await call(name, wire)
        error = info.value
        assert (error.kind, error.transient, error.request_id, str(error)) == (
            expected.kind, expected.transient, REQUEST_IDS[name], expected.message
        )
    else:
        result = await call(name, wire)
        assert [(c.id, c.name, dict(c.arguments), c.arguments_error)
                for c in result.tool_calls] == [
            ("toolu_1" if name == "anthropic" else "call_1", "city_population", {},
             expected.problem)
        ]
    assert len(wire.requests) == 1


@pytest.mark.parametrize("name", ["anthropic", "openai"])
async def test_a_connection_dropped_in_the_middle_of_the_body_is_transient(
    wire: WireServer, name: str
) -> None:
    body = a_body() if name == "anthropic" else o_body()
    payload = json.dumps(body).encode()
    wire.reply(Reply(raw=payload, length=len(payload) + 100,
                     headers=A_ID if name == "anthropic" else O_ID))
    with pytest.raises(ProviderError) as info:
        await chat(name, wire)
    error = info.value
    assert (error.kind, error.transient, error.request_id) == (
        "connection", True, REQUEST_IDS[name]
    )
    assert str(error).startswith(f"{name}: connection failed: ")


async def test_openai_arguments_sent_as_an_object_are_taken_as_they_are(
    wire: WireServer,
) -> None:
    wire.reply(o_call({"city": "Lisbon"}))
    result = await chat("openai", wire)
    assert [(c.id, dict(c.arguments), c.arguments_error) for c in result.tool_calls] == [
        ("call_1", {"city": "Lisbon"}, None)
    ]


@pytest.mark.parametrize("name", ["anthropic", "openai"])
async def test_a_body_its_content_encoding_garbles_is_transient(
    wire: WireServer, name: str
) -> None:
    headers = {"content-encoding": "gzip", **(A_ID if name == "anthropic" else O_ID)}
    wire.reply(Reply(raw=b"this is not gzip", headers=headers))
    with pytest.raises(ProviderError) as info:
        await chat(name, wire)
    error = info.value
    assert (error.kind, error.transient, error.request_id) == (
        "malformed_reply", True, REQUEST_IDS[name]
    )
    assert str(error).startswith(f"{name}: malformed reply: ")


@pytest.mark.parametrize("name", ["anthropic", "openai"])
async def test_a_stream_that_stalls_times_out_as_a_transient_error(
    wire: WireServer, name: str
) -> None:
    release = threading.Event()
    first = A_START if name == "anthropic" else (None, chunk({"content": "Lis"}))
    wire.reply(Reply(events=[first], hold=release,
                     headers=A_ID if name == "anthropic" else O_ID))
    llm = (AnthropicLLM(api_key="k", base_url=wire.url, max_retries=0, timeout=0.3)
           if name == "anthropic" else
           OpenAILLM(api_key="k", base_url=f"{wire.url}/v1", max_retries=0, timeout=0.3))
    try:
        with pytest.raises(ProviderError) as info:
            async for _ in llm.stream(request(name), make_test_ctx()):
                pass
    finally:
        release.set()
    error = info.value
    assert (error.kind, error.transient, error.request_id) == (
        "timeout", True, REQUEST_IDS[name]
    )
    assert str(error).startswith(f"{name}: request timed out: ")


@pytest.mark.parametrize("name", ["anthropic", "openai"])
async def test_an_http_error_carries_the_request_id_and_the_wait_asked_for(
    wire: WireServer, name: str
) -> None:
    body = (a_error("rate_limit_error", "slow down") if name == "anthropic"
            else {"error": {"message": "slow down", "code": "rate_limit_exceeded"}})
    headers = {"retry-after": "7", **(A_ID if name == "anthropic" else O_ID)}
    wire.reply(Reply(429, body, headers=headers))
    with pytest.raises(ProviderError) as info:
        await chat(name, wire)
    error = info.value
    assert (error.status, error.kind, error.transient, error.request_id, error.retry_after) == (
        429, "rate_limit", True, REQUEST_IDS[name], 7.0
    )
    assert str(error).startswith(f"{name}: HTTP 429 (rate_limit): ")
    assert str(error).endswith(f"; request id {REQUEST_IDS[name]}")
