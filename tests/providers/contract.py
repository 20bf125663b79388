"""One adapter per provider for the contract suite (``test_contract.py``): its LLM on its
local fake server, and the scripting and reading helpers a contract case needs, in one
shape for all five wire formats.

An adapter scripts replies in the provider's real wire format (the fakes check every
recorded request against the SDK's own types) and reads back, from a recorded request,
the tool results the model was sent, so a case is written once and holds for each.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from agentkit.core.contracts.ports import LLM

from . import fake_gemini as g
from . import fake_responses as r
from .conftest import Reply, WireServer
from .fake_bedrock import MODEL as BEDROCK_MODEL
from .fake_bedrock import FakeBedrock, converse_reply, event, stream_reply
from .fake_bedrock import Reply as BedrockReply

Call = tuple[str, str, dict[str, Any]]
"""A tool call to script: id, tool name, arguments."""


class ProviderWire(Protocol):
    """What a contract case sees of one provider."""

    name: str
    """The provider's spec name, as the tests are labelled."""
    llm: LLM
    model: str
    ids: bool
    """True when the provider's replies carry their own call ids (Gemini's do not)."""
    reports: str
    """The provider its errors name (``ProviderError.provider``)."""

    def answer(self, text: str, usage: tuple[int, int] = (10, 5)) -> None:
        """Script a whole text answer with (input, output) tokens."""

    def calls(self, *calls: Call) -> None:
        """Script an answer that asks for ``calls``, in that order."""

    def stream_text(self, *pieces: str, usage: tuple[int, int] = (10, 5)) -> None:
        """Script a streamed text answer, one delta per piece."""

    def stream_call(self, call: Call, fragments: tuple[str, ...]) -> None:
        """Script a streamed answer holding one tool call, its arguments in fragments
        (where the wire streams them; Gemini sends a call whole)."""

    def stream_cut(self, text: str) -> None:
        """Script a stream that ends after ``text`` without finishing."""

    def not_json(self) -> None:
        """Script a 200 reply whose body is not JSON."""

    def failure(self, status: int, message: str) -> None:
        """Script the API's error reply for ``status`` with ``message``."""

    def requests(self) -> list[Any]:
        """Every request body so far, each checked against the SDK's types."""

    def results(self, body: Any) -> list[tuple[str, bool | None]]:
        """The tool results of ``body``'s last message: their text, and whether each is
        flagged as an error (None where the wire has no such flag)."""

    def settings(self, body: Any) -> dict[str, Any]:
        """The ``ModelSettings`` fields ``body`` carries, by their agentkit names
        (``temperature``, ``top_p``, ``seed``, ``max_tokens``, ``stop``)."""

    def images(self, body: Any) -> list[bytes]:
        """The bytes of every image sent inline in ``body``'s last message."""


class ReasoningWire(ProviderWire, Protocol):
    """A provider whose replies carry opaque reasoning state to send back."""

    thinker: str
    """A model id that reasons on this provider."""

    def think(self, thought: str, state: str, call: Call) -> None:
        """Script a reply that reasons (``thought``, with opaque ``state``: a signature,
        encrypted content, as base64) and then asks for ``call``."""

    def states(self, body: Any) -> list[str]:
        """The opaque reasoning states ``body`` sends back, as base64."""


@dataclass
class Anthropic:
    wire: WireServer
    llm: LLM
    name: str = "anthropic"
    model: str = "claude-sonnet-4-6"
    ids: bool = True
    reports: str = "anthropic"

    def _message(self, content: list[dict[str, Any]], stop: str,
                 usage: tuple[int, int] = (10, 5)) -> None:
        self.wire.reply(Reply(body={
            "id": "msg_1", "type": "message", "role": "assistant", "model": self.model,
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
        }))

    def answer(self, text: str, usage: tuple[int, int] = (10, 5)) -> None:
        self._message([{"type": "text", "text": text}], "end_turn", usage)

    def calls(self, *calls: Call) -> None:
        self._message([{"type": "tool_use", "id": i, "name": n, "input": a}
                       for i, n, a in calls], "tool_use")

    def _start(self, input_tokens: int = 10) -> list[tuple[str, Any]]:
        return [("message_start", {"type": "message_start", "message": {
            "id": "msg_s", "type": "message", "role": "assistant", "model": self.model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": 1}}})]

    @staticmethod
    def _end(stop: str, output_tokens: int) -> list[tuple[str, Any]]:
        return [("content_block_stop", {"type": "content_block_stop", "index": 0}),
                ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop},
                                   "usage": {"output_tokens": output_tokens}}),
                ("message_stop", {"type": "message_stop"})]

    @staticmethod
    def _text(pieces: tuple[str, ...]) -> list[tuple[str, Any]]:
        return [("content_block_start", {"type": "content_block_start", "index": 0,
                                         "content_block": {"type": "text", "text": ""}}),
                *(("content_block_delta", {"type": "content_block_delta", "index": 0,
                                           "delta": {"type": "text_delta", "text": p}})
                  for p in pieces)]

    def stream_text(self, *pieces: str, usage: tuple[int, int] = (10, 5)) -> None:
        self.wire.reply(Reply(events=[*self._start(usage[0]), *self._text(pieces),
                                      *self._end("end_turn", usage[1])]))

    def stream_call(self, call: Call, fragments: tuple[str, ...]) -> None:
        start = ("content_block_start", {"type": "content_block_start", "index": 0,
                                         "content_block": {"type": "tool_use", "id": call[0],
                                                           "name": call[1], "input": {}}})
        deltas = [("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
            "type": "input_json_delta", "partial_json": f}}) for f in fragments]
        self.wire.reply(Reply(events=[*self._start(), start, *deltas,
                                      *self._end("tool_use", 5)]))

    def stream_cut(self, text: str) -> None:
        self.wire.reply(Reply(events=[*self._start(), *self._text((text,))]))

    def not_json(self) -> None:
        self.wire.reply(Reply(raw=b"{not json"))

    def failure(self, status: int, message: str) -> None:
        kinds = {400: "invalid_request_error", 429: "rate_limit_error", 500: "api_error",
                 503: "overloaded_error"}
        self.wire.reply(Reply(status, {"type": "error", "error": {
            "type": kinds[status], "message": message}}))

    def requests(self) -> list[Any]:
        return self.wire.bodies()

    def results(self, body: Any) -> list[tuple[str, bool | None]]:
        found = []
        for block in body["messages"][-1]["content"]:
            if block["type"] == "tool_result":
                content = block["content"]
                text = content if isinstance(content, str) else "".join(
                    part["text"] for part in content if part["type"] == "text")
                found.append((text, bool(block.get("is_error", False))))
        return found

    def settings(self, body: Any) -> dict[str, Any]:
        return _named(body, {"temperature": "temperature", "top_p": "top_p", "seed": "seed",
                             "max_tokens": "max_tokens", "stop_sequences": "stop"})

    def images(self, body: Any) -> list[bytes]:
        return [_b64(block["source"]["data"]) for block in body["messages"][-1]["content"]
                if block["type"] == "image"]

    @property
    def thinker(self) -> str:
        return self.model

    def think(self, thought: str, state: str, call: Call) -> None:
        self._message([{"type": "thinking", "thinking": thought, "signature": state},
                       {"type": "tool_use", "id": call[0], "name": call[1], "input": call[2]}],
                      "tool_use")

    def states(self, body: Any) -> list[str]:
        return [block["signature"] for message in body["messages"]
                if message["role"] == "assistant" and isinstance(message["content"], list)
                for block in message["content"] if block["type"] == "thinking"]

@dataclass
class OpenAIChat:
    wire: WireServer
    llm: LLM
    name: str = "openai-chat"
    model: str = "gpt-4o-mini"
    ids: bool = True
    reports: str = "openai"

    def _body(self, message: dict[str, Any], finish: str, usage: tuple[int, int]) -> None:
        self.wire.reply(Reply(body={
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": self.model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                      "total_tokens": sum(usage)},
        }))

    def answer(self, text: str, usage: tuple[int, int] = (10, 5)) -> None:
        self._body({"role": "assistant", "content": text}, "stop", usage)

    def calls(self, *calls: Call) -> None:
        self._body({"role": "assistant", "content": None, "tool_calls": [
            {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, n, a in calls]}, "tool_calls", (10, 5))

    def _chunk(self, delta: Any, finish: str | None = None) -> tuple[None, Any]:
        return (None, {"id": "c", "object": "chat.completion.chunk", "created": 0,
                       "model": self.model,
                       "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    def _usage(self, usage: tuple[int, int]) -> list[tuple[None, Any]]:
        return [(None, {"id": "c", "object": "chat.completion.chunk", "created": 0,
                        "model": self.model, "choices": [],
                        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                                  "total_tokens": sum(usage)}}), (None, "[DONE]")]

    def stream_text(self, *pieces: str, usage: tuple[int, int] = (10, 5)) -> None:
        self.wire.reply(Reply(events=[*(self._chunk({"content": p}) for p in pieces),
                                      self._chunk({}, "stop"), *self._usage(usage)]))

    def stream_call(self, call: Call, fragments: tuple[str, ...]) -> None:
        first = {"tool_calls": [{"index": 0, "id": call[0], "type": "function",
                                 "function": {"name": call[1], "arguments": ""}}]}
        rest = [{"tool_calls": [{"index": 0, "function": {"arguments": f}}]} for f in fragments]
        self.wire.reply(Reply(events=[self._chunk(first), *(self._chunk(d) for d in rest),
                                      self._chunk({}, "tool_calls"), *self._usage((10, 5))]))

    def stream_cut(self, text: str) -> None:
        self.wire.reply(Reply(events=[self._chunk({"content": text})]))

    def not_json(self) -> None:
        self.wire.reply(Reply(raw=b"{not json"))

    def failure(self, status: int, message: str) -> None:
        self.wire.reply(_openai_error(status, message))

    def requests(self) -> list[Any]:
        return self.wire.bodies()

    def results(self, body: Any) -> list[tuple[str, bool | None]]:
        found: list[tuple[str, bool | None]] = []
        for message in reversed(body["messages"]):
            if message["role"] != "tool":
                break
            found.insert(0, (message["content"], None))
        return found

    def settings(self, body: Any) -> dict[str, Any]:
        return _named(body, {"temperature": "temperature", "top_p": "top_p", "seed": "seed",
                             "max_tokens": "max_tokens", "max_completion_tokens": "max_tokens",
                             "stop": "stop"})

    def images(self, body: Any) -> list[bytes]:
        return [_data_url(part["image_url"]["url"])
                for part in body["messages"][-1]["content"] if part["type"] == "image_url"]

@dataclass
class OpenAIResponses:
    wire: WireServer
    llm: LLM
    name: str = "openai"
    model: str = "gpt-4.1"
    ids: bool = True
    reports: str = "openai"

    @staticmethod
    def _usage(usage: tuple[int, int]) -> dict[str, Any]:
        return {"input_tokens": usage[0], "input_tokens_details": {"cached_tokens": 0,
                                                                 "cache_write_tokens": 0},
                "output_tokens": usage[1], "output_tokens_details": {"reasoning_tokens": 0},
                "total_tokens": sum(usage)}

    def answer(self, text: str, usage: tuple[int, int] = (10, 5)) -> None:
        self.wire.reply(r.reply([r.text(text)], usage=self._usage(usage), model=self.model))

    def calls(self, *calls: Call) -> None:
        self.wire.reply(r.reply([r.call(i, n, a, f"fc_{i}") for i, n, a in calls],
                                usage=self._usage((10, 5)), model=self.model))

    def stream_text(self, *pieces: str, usage: tuple[int, int] = (10, 5)) -> None:
        deltas = [{"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0,
                   "content_index": 0, "delta": p, "logprobs": []} for p in pieces]
        self.wire.reply(r.stream(*r.streamed([r.text("".join(pieces))], deltas,
                                             usage=self._usage(usage), model=self.model)))

    def stream_call(self, call: Call, fragments: tuple[str, ...]) -> None:
        item = r.call(call[0], call[1], call[2], "fc_1")
        deltas = [{"type": "response.function_call_arguments.delta", "item_id": "fc_1",
                   "output_index": 0, "delta": f} for f in fragments]
        self.wire.reply(r.stream(*r.streamed([item], deltas, usage=self._usage((10, 5)),
                                             model=self.model)))

    def stream_cut(self, text: str) -> None:
        events = r.streamed([r.text(text)], [
            {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0,
             "content_index": 0, "delta": text, "logprobs": []}], model=self.model)
        self.wire.reply(r.stream(*events[:3]))  # created, item added, one delta

    def not_json(self) -> None:
        self.wire.reply(Reply(raw=b"{not json"))

    def failure(self, status: int, message: str) -> None:
        self.wire.reply(_openai_error(status, message))

    def requests(self) -> list[Any]:
        return [r.check_request(body) for body in self.wire.bodies()]

    def results(self, body: Any) -> list[tuple[str, bool | None]]:
        found: list[tuple[str, bool | None]] = []
        for item in reversed(body["input"]):
            if item.get("type") != "function_call_output":
                break
            output = item["output"]
            text = output if isinstance(output, str) else "".join(
                part.get("text", "") for part in output)
            found.insert(0, (text, None))
        return found

    def settings(self, body: Any) -> dict[str, Any]:
        return _named(body, {"temperature": "temperature", "top_p": "top_p", "seed": "seed",
                             "max_output_tokens": "max_tokens", "stop": "stop"})

    def images(self, body: Any) -> list[bytes]:
        return [_data_url(part["image_url"]) for part in body["input"][-1]["content"]
                if part["type"] == "input_image"]

    thinker: str = "gpt-5"

    def think(self, thought: str, state: str, call: Call) -> None:
        self.wire.reply(r.reply([r.reasoning("rs_1", thought, state),
                                 r.call(call[0], call[1], call[2], "fc_1")],
                                usage=self._usage((10, 5)), model=self.thinker))

    def states(self, body: Any) -> list[str]:
        return [item["encrypted_content"] for item in body["input"]
                if item.get("type") == "reasoning"]

@dataclass
class Gemini:
    wire: WireServer
    llm: LLM
    name: str = "google"
    model: str = g.MODEL
    ids: bool = False
    reports: str = "google"

    def answer(self, text: str, usage: tuple[int, int] = (10, 5)) -> None:
        self.wire.reply(g.reply([{"text": text}], meta=g.usage(*usage)))

    def calls(self, *calls: Call) -> None:
        self.wire.reply(g.reply([{"functionCall": {"name": n, "args": a}} for _, n, a in calls]))

    def stream_text(self, *pieces: str, usage: tuple[int, int] = (10, 5)) -> None:
        *first, last = pieces
        self.wire.reply(g.events(*(g.answer([{"text": p}], None) for p in first),
                                 g.answer([{"text": last}], "STOP", g.usage(*usage))))

    def stream_call(self, call: Call, fragments: tuple[str, ...]) -> None:
        self.wire.reply(g.events(g.answer([{"functionCall": {"name": call[1], "args": call[2]}}],
                                          "STOP", g.usage())))

    def stream_cut(self, text: str) -> None:
        self.wire.reply(g.events(g.answer([{"text": text}], None)))

    def not_json(self) -> None:
        self.wire.reply(Reply(raw=b"{not json"))

    def failure(self, status: int, message: str) -> None:
        codes = {400: "INVALID_ARGUMENT", 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL",
                 503: "UNAVAILABLE"}
        self.wire.reply(g.error(status, codes[status], message))

    def requests(self) -> list[Any]:
        return g.bodies(self.wire)

    def results(self, body: Any) -> list[tuple[str, bool | None]]:
        found: list[tuple[str, bool | None]] = []
        for part in body["contents"][-1]["parts"]:
            response = part["functionResponse"]["response"]
            found.append((response.get("output", response.get("error")), "error" in response))
        return found

    def settings(self, body: Any) -> dict[str, Any]:
        return _named(body.get("generationConfig", {}), {
            "temperature": "temperature", "topP": "top_p", "seed": "seed",
            "maxOutputTokens": "max_tokens", "stopSequences": "stop"})

    def images(self, body: Any) -> list[bytes]:
        return [_b64(part["inlineData"]["data"]) for part in body["contents"][-1]["parts"]
                if "inlineData" in part]

    @property
    def thinker(self) -> str:
        return self.model

    def think(self, thought: str, state: str, call: Call) -> None:
        self.wire.reply(g.reply([{"text": thought, "thought": True},
                                 {"functionCall": {"name": call[1], "args": call[2]},
                                  "thoughtSignature": state}]))

    def states(self, body: Any) -> list[str]:
        return [base64.b64encode(_b64(part["thoughtSignature"])).decode()
                for content in body["contents"] if content["role"] == "model"
                for part in content["parts"] if "thoughtSignature" in part]

@dataclass
class Bedrock:
    server: FakeBedrock
    llm: LLM
    name: str = "bedrock"
    model: str = BEDROCK_MODEL
    ids: bool = True
    reports: str = "bedrock"
    _errors: dict[int, str] = field(default_factory=lambda: {
        400: "ValidationException", 429: "ThrottlingException",
        500: "InternalServerException", 503: "ServiceUnavailableException"})

    @staticmethod
    def _usage(usage: tuple[int, int]) -> dict[str, int]:
        return {"inputTokens": usage[0], "outputTokens": usage[1]}

    def answer(self, text: str, usage: tuple[int, int] = (10, 5)) -> None:
        self.server.reply(converse_reply([{"text": text}], usage=self._usage(usage)))

    def calls(self, *calls: Call) -> None:
        self.server.reply(converse_reply(
            [{"toolUse": {"toolUseId": i, "name": n, "input": a}} for i, n, a in calls],
            stop="tool_use"))

    def _end(self, stop: str, usage: tuple[int, int]) -> list[bytes]:
        tokens = self._usage(usage)
        return [event("contentBlockStop", {"contentBlockIndex": 0}),
                event("messageStop", {"stopReason": stop}),
                event("metadata", {"usage": {"totalTokens": sum(usage), **tokens},
                                   "metrics": {"latencyMs": 12}})]

    def stream_text(self, *pieces: str, usage: tuple[int, int] = (10, 5)) -> None:
        self.server.reply(stream_reply(
            event("messageStart", {"role": "assistant"}),
            *(event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": p}})
              for p in pieces),
            *self._end("end_turn", usage)))

    def stream_call(self, call: Call, fragments: tuple[str, ...]) -> None:
        self.server.reply(stream_reply(
            event("messageStart", {"role": "assistant"}),
            event("contentBlockStart", {"contentBlockIndex": 0, "start": {
                "toolUse": {"toolUseId": call[0], "name": call[1]}}}),
            *(event("contentBlockDelta", {"contentBlockIndex": 0,
                                          "delta": {"toolUse": {"input": f}}})
              for f in fragments),
            *self._end("tool_use", (10, 5))))

    def stream_cut(self, text: str) -> None:
        self.server.reply(stream_reply(
            event("messageStart", {"role": "assistant"}),
            event("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": text}})))

    def not_json(self) -> None:
        self.server.reply(BedrockReply(raw=b"{not json"))

    def failure(self, status: int, message: str) -> None:
        self.server.reply(BedrockReply(status, {"message": message},
                                       error_type=self._errors[status]))

    def requests(self) -> list[Any]:
        return self.server.bodies()

    def results(self, body: Any) -> list[tuple[str, bool | None]]:
        found: list[tuple[str, bool | None]] = []
        for block in body["messages"][-1]["content"]:
            result = block.get("toolResult")
            if result is not None:
                text = "".join(part.get("text", "") for part in result["content"])
                found.append((text, result["status"] == "error"))
        return found

    def settings(self, body: Any) -> dict[str, Any]:
        return _named(body.get("inferenceConfig", {}), {
            "temperature": "temperature", "topP": "top_p", "maxTokens": "max_tokens",
            "stopSequences": "stop"})

    def images(self, body: Any) -> list[bytes]:
        return [_b64(block["image"]["source"]["bytes"])
                for block in body["messages"][-1]["content"] if "image" in block]

    @property
    def thinker(self) -> str:
        return self.model

    def think(self, thought: str, state: str, call: Call) -> None:
        self.server.reply(converse_reply(
            [{"reasoningContent": {"reasoningText": {"text": thought, "signature": state}}},
             {"toolUse": {"toolUseId": call[0], "name": call[1], "input": call[2]}}],
            stop="tool_use"))

    def states(self, body: Any) -> list[str]:
        return [block["reasoningContent"]["reasoningText"]["signature"]
                for message in body["messages"] if message["role"] == "assistant"
                for block in message["content"] if "reasoningContent" in block]

def _openai_error(status: int, message: str) -> Reply:
    """An error as both OpenAI APIs send one."""
    return Reply(status, {"error": {"message": message, "type": "error", "param": None,
                                    "code": None}})


def _named(fields: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    """The wire's fields in ``names``, under agentkit's names for them."""
    return {ours: fields[wire] for wire, ours in names.items() if wire in fields}


def _b64(text: str) -> bytes:
    # Either alphabet, padded or not: google-genai sends bytes as unpadded URL-safe
    # base64, as its pydantic models serialise them.
    padded = text + "=" * (-len(text) % 4)
    return base64.urlsafe_b64decode(padded.replace("+", "-").replace("/", "_"))


def _data_url(url: str) -> bytes:
    head, _, data = url.partition(",")
    assert head.endswith(";base64"), url
    return _b64(data)
