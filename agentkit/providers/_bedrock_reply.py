"""Reading Converse replies: a whole body (``converse_result``) and a stream, event by
event (``StreamAssembly``), each field checked with ``_reply.field``.

Content: ``text`` blocks, ``toolUse`` blocks as tool calls, ``reasoningContent`` (text
and signature, or redacted bytes) as reasoning parts tagged ``bedrock`` whose state is
the block as it came; usage with cache reads and writes, priced; stop reasons mapped.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

from agentkit.core.contracts.reasoning import ReasoningDelta, ReasoningPart
from agentkit.core.contracts.types import (
    FinishReason,
    LLMResult,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
)
from agentkit.core.policies.prices import CacheTTL, PriceTable
from agentkit.providers._bedrock_wire import PROVIDER
from agentkit.providers._errors import MalformedReply, StreamTruncated
from agentkit.providers._json import arguments_from_text, arguments_from_value
from agentkit.providers._reply import field, obj
from agentkit.providers._sdk import priced

__all__ = ["StreamAssembly", "converse_result"]

_FINISH: dict[str, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "length",
    "guardrail_intervened": "content_filter",
    "content_filtered": "content_filter",
}


def _finish(reason: Any) -> FinishReason:
    return _FINISH.get(reason, "other") if isinstance(reason, str) else "other"


def _usage(
    usage: dict[str, Any], where: str, model: str, prices: PriceTable, ttl: CacheTTL
) -> Usage:
    counted = Usage(
        input_tokens=field(usage, "inputTokens", where, int),
        output_tokens=field(usage, "outputTokens", where, int),
        cache_read_tokens=field(usage, "cacheReadInputTokens", where, int, nullable=True) or 0,
        cache_write_tokens=field(usage, "cacheWriteInputTokens", where, int, nullable=True) or 0,
        requests=1,
    )
    return priced(counted, model, prices, cache_ttl=ttl)


def _reasoning(block: dict[str, Any], where: str) -> ReasoningPart:
    """A ``reasoningContent`` block as a reasoning part whose state is the block itself
    (the redacted bytes as base64 text, so the part is JSON)."""
    if "redactedContent" in block:
        data = block["redactedContent"]
        if isinstance(data, bytes):  # a stream's event, as botocore decoded it
            data = base64.b64encode(data).decode("ascii")
        elif not isinstance(data, str):
            raise MalformedReply(f"{where}.redactedContent: expected base64 text")
        return ReasoningPart(PROVIDER, state={"redactedContent": data})
    text_block = field(block, "reasoningText", where, dict)
    text = field(text_block, "text", f"{where}.reasoningText", str)
    signature = field(text_block, "signature", f"{where}.reasoningText", str, nullable=True)
    state: dict[str, Any] = {"text": text}
    if signature is not None:
        state["signature"] = signature
    return ReasoningPart(PROVIDER, text=text, state={"reasoningText": state})


def converse_result(reply: Any, model: str, prices: PriceTable, ttl: CacheTTL) -> LLMResult:
    """A Converse reply as our result."""
    body = obj(reply, "body")
    output = field(body, "output", "", dict)
    message = field(output, "message", "output", dict)
    text: list[str] = []
    calls: list[ToolCall] = []
    reasoning: list[ReasoningPart] = []
    for i, item in enumerate(field(message, "content", "output.message", list)):
        where = f"output.message.content[{i}]"
        block = obj(item, where)
        if "text" in block:
            text.append(field(block, "text", where, str))
        elif "toolUse" in block:
            use = field(block, "toolUse", where, dict)
            at = f"{where}.toolUse"
            arguments, problem = arguments_from_value(use.get("input"))
            calls.append(ToolCall(field(use, "toolUseId", at, str), field(use, "name", at, str),
                                  arguments, arguments_error=problem))
        elif "reasoningContent" in block:
            reasoning.append(_reasoning(field(block, "reasoningContent", where, dict),
                                        f"{where}.reasoningContent"))
        # citations, guard content and block kinds added later carry nothing we use
    return LLMResult(
        content="".join(text),
        tool_calls=tuple(calls),
        usage=_usage(field(body, "usage", "", dict), "usage", model, prices, ttl),
        finish_reason=_finish(field(body, "stopReason", "", str)),
        model=model,
        reasoning=tuple(reasoning),
    )


class StreamAssembly:
    """A streamed reply put together event by event: deltas out, the result at the end."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.text: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.thinking: dict[int, dict[str, Any]] = {}
        self.stop_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.delivered = 0
        self.stopped = False
        self.done = False

    def take(self, event: dict[str, Any]) -> Iterator[StreamEvent]:
        """The deltas one event carries (each event is ``{kind: body}``)."""
        if "contentBlockStart" in event:
            where = "contentBlockStart"
            start = field(event, where, "", dict)
            index = field(start, "contentBlockIndex", where, int)
            use = field(field(start, "start", where, dict), "toolUse", f"{where}.start", dict,
                        nullable=True)
            if use is not None:
                at = f"{where}.start.toolUse"
                call_id, name = field(use, "toolUseId", at, str), field(use, "name", at, str)
                self.calls[index] = {"id": call_id, "name": name, "json": []}
                yield self._out(ToolCallDelta(len(self.calls) - 1, id=call_id, name=name))
        elif "contentBlockDelta" in event:
            where = "contentBlockDelta"
            body = field(event, where, "", dict)
            index = field(body, "contentBlockIndex", where, int)
            delta = field(body, "delta", where, dict)
            if "text" in delta:
                piece = field(delta, "text", f"{where}.delta", str)
                self.text.append(piece)
                yield self._out(TextDelta(piece))
            elif "toolUse" in delta and index in self.calls:
                use = field(delta, "toolUse", f"{where}.delta", dict)
                fragment = field(use, "input", f"{where}.delta.toolUse", str)
                self.calls[index]["json"].append(fragment)
                yield self._out(ToolCallDelta(list(self.calls).index(index),
                                              arguments_json=fragment))
            elif "reasoningContent" in delta:
                part = field(delta, "reasoningContent", f"{where}.delta", dict)
                thought = self.thinking.setdefault(index, {"text": [], "signature": None,
                                                           "redacted": None})
                if isinstance(part.get("text"), str):
                    thought["text"].append(part["text"])
                    yield self._out(ReasoningDelta(part["text"]))
                if isinstance(part.get("signature"), str):
                    thought["signature"] = (thought["signature"] or "") + part["signature"]
                if isinstance(part.get("redactedContent"), bytes):
                    thought["redacted"] = part["redactedContent"]
        elif "messageStop" in event:
            stop = field(event, "messageStop", "", dict)
            self.stop_reason = field(stop, "stopReason", "messageStop", str)
            self.stopped = True
        elif "metadata" in event:
            self.usage = field(field(event, "metadata", "", dict), "usage", "metadata", dict)
            self.done = self.stopped
        # messageStart and contentBlockStop carry nothing we use

    def _out(self, delta: StreamEvent) -> StreamEvent:
        self.delivered += 1
        return delta

    def result(self, prices: PriceTable, ttl: CacheTTL) -> LLMResult:
        """The whole answer; :class:`StreamTruncated` when the stream ended early."""
        if not self.stopped:
            raise StreamTruncated("before messageStop", self.delivered)
        if self.usage is None:
            raise StreamTruncated("before its metadata event (the usage)", self.delivered)
        calls = []
        for block in self.calls.values():
            arguments, problem = arguments_from_text("".join(block["json"]))
            calls.append(ToolCall(block["id"], block["name"], arguments, arguments_error=problem))
        reasoning = []
        for thought in self.thinking.values():
            if thought["redacted"] is not None:
                reasoning.append(_reasoning({"redactedContent": thought["redacted"]}, "stream"))
                continue
            state: dict[str, Any] = {"text": "".join(thought["text"])}
            if thought["signature"] is not None:
                state["signature"] = thought["signature"]
            reasoning.append(ReasoningPart(PROVIDER, text=state["text"],
                                           state={"reasoningText": state}))
        return LLMResult(
            content="".join(self.text),
            tool_calls=tuple(calls),
            usage=_usage(self.usage, "metadata.usage", self.model, prices, ttl),
            finish_reason=_finish(self.stop_reason),
            model=self.model,
            reasoning=tuple(reasoning),
        )
