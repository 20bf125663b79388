"""AnthropicLLM: the LLM seam over Anthropic's Messages API (the official ``anthropic`` SDK).

Mapping, both ways:

- tools: ``{"name", "description", "input_schema"}``, or a tool's own native declaration
  (``ToolSchema.native["anthropic"]``, e.g. the client-side memory tool);
- the system prompt: the ``system`` parameter;
- prompt caching (``cache="auto"``, the default): ``cache_control`` breakpoints on the
  tools, the stable system prompt and the newest messages (see ``_prompt_cache``);
- settings: ``max_tokens``, ``stop`` -> ``stop_sequences``, ``tool_choice`` ->
  ``{"type": "auto" | "none" | "any" | "tool"}``, ``parallel_tool_calls`` ->
  ``disable_parallel_tool_use``, ``reasoning`` -> ``thinking`` with a token budget,
  ``extra`` -> extra body fields; ``temperature``, ``top_p`` and ``seed`` are refused
  (the Messages API has no such parameters);
- structured output: ``output_config.format`` (a JSON schema) where the model, the
  installed SDK and the schema allow it;
- content both ways (user media, thinking blocks sent back, tool results): see
  ``_anthropic_content``; thinking and redacted_thinking blocks of a reply become the
  message's reasoning parts;
- usage: input, output, cache-read and cache-write tokens, priced from the price table;
- stop reasons: ``end_turn``/``stop_sequence`` -> ``stop``, ``tool_use`` ->
  ``tool_calls``, ``max_tokens`` -> ``length``, ``refusal`` -> ``content_filter``;
- streaming: text and thinking deltas are passed on, ``input_json_delta`` fragments are
  assembled per content block into each call's arguments, ``signature_delta`` into the
  thinking block's signature.

Replies are read as plain JSON, every field checked (``_reply.field``): a reply of the
wrong shape, an error event, or a stream that ends before ``message_stop`` is a
``ProviderError`` (see ``_errors``), never a short answer or a raw ``TypeError``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

from agentkit.core.contracts.errors import ProviderError
from agentkit.core.contracts.ports import Context
from agentkit.core.contracts.types import (
    ChatRequest,
    FinishReason,
    LLMResult,
    ReasoningDelta,
    ReasoningPart,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
)
from agentkit.core.policies.prices import DEFAULT_PRICES, CacheTTL, PriceTable
from agentkit.providers._anthropic_content import (
    anthropic_messages,
    anthropic_tools,
    reasoning_part,
)
from agentkit.providers._anthropic_settings import DEFAULT_MAX_TOKENS, apply_settings
from agentkit.providers._errors import ErrorReply, ProviderCall, StreamTruncated, missing_extra
from agentkit.providers._json import arguments_from_text, arguments_from_value
from agentkit.providers._prompt_cache import CacheMode, mark_breakpoints
from agentkit.providers._reply import event_data, field, json_body, obj, sse_events, stream_body
from agentkit.providers._sdk import SdkClients, client_options, priced
from agentkit.providers.spec import model_id

if TYPE_CHECKING:
    pass

__all__ = ["DEFAULT_MAX_TOKENS", "AnthropicLLM", "anthropic_messages", "anthropic_tools"]

_FINISH: dict[str | None, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
}


class AnthropicLLM:
    """Claude through the Messages API.

    ``api_key`` defaults to ``ANTHROPIC_API_KEY`` and ``base_url`` to
    ``ANTHROPIC_BASE_URL``, as the SDK defines them; ``timeout`` (seconds) and
    ``max_retries`` go to the SDK client. Left unset, ``max_retries`` is the SDK's
    default outside an agentkit ``retry()`` and 0 inside one, so that each ``retry()``
    attempt is one request. The model comes from ``Agent(model=...)``.

    ``cache="auto"`` (the default) marks the prompt for Anthropic's prompt cache, so each
    turn of a run, and each run of an agent, reads the prefix it shares with the one
    before at a tenth of the input price; ``cache=None`` sends no marks. ``cache_ttl``
    is how long an entry lives: ``"5m"`` (writes at 1.25x the input price) or ``"1h"``
    (2x).
    """

    provider = "anthropic"

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        prices: PriceTable = DEFAULT_PRICES,
        client: Any = None,
        cache: CacheMode = "auto",
        cache_ttl: CacheTTL = "5m",
    ) -> None:
        if cache not in ("auto", None):
            raise ValueError(
                f"AnthropicLLM(cache=...) must be 'auto' (prompt caching on) or None (off), "
                f"got {cache!r}"
            )
        if cache_ttl not in ("5m", "1h"):
            raise ValueError(
                f"AnthropicLLM(cache_ttl=...) must be '5m' or '1h', got {cache_ttl!r}"
            )
        self.cache: CacheMode = cache
        self.cache_ttl: CacheTTL = cache_ttl
        if client is None:
            try:
                import anthropic
            except ImportError:
                raise missing_extra("Anthropic", "anthropic") from None
            options = client_options(api_key, base_url, timeout, max_retries)
            client = anthropic.AsyncAnthropic(**options)
            self._clients = SdkClients(client, retries_chosen=max_retries is not None)
        else:
            self._clients = SdkClients(client, retries_chosen=True)
        self.client = client
        self.prices = prices

    def _check_credentials(self) -> None:
        client = self.client
        if not any(
            getattr(client, name, None) is not None
            for name in ("api_key", "auth_token", "credentials", "_custom_auth", "_token_cache")
        ):
            raise ProviderError(
                "anthropic: no credentials: set ANTHROPIC_API_KEY or pass "
                "AnthropicLLM(api_key=...)",
                provider=self.provider,
                transient=False,
                kind="authentication",
            )

    def _params(self, request: ChatRequest) -> dict[str, Any]:
        self._check_credentials()
        params: dict[str, Any] = {
            "model": model_id(request.model),
            "max_tokens": request.max_tokens or DEFAULT_MAX_TOKENS,
            "messages": anthropic_messages(request.messages),
        }
        if request.system:
            params["system"] = request.system
        if request.tools:
            params["tools"] = anthropic_tools(request.tools)
        apply_settings(params, request, self.provider)
        if self.cache == "auto":
            mark_breakpoints(params, model=params["model"], ttl=self.cache_ttl,
                             stable_system=request.stable_system)
        return params

    async def chat(self, request: ChatRequest, ctx: Context) -> LLMResult:
        """One Messages API call."""
        params = self._params(request)
        messages = self._clients.for_call().messages
        with ProviderCall(self.provider, "request-id") as call:
            async with messages.with_streaming_response.create(**params) as response:
                call.answered(response.headers)
                body = json_body(await response.read(), response.headers)
            return _message(body, params["model"], self.prices, self.cache_ttl)

    async def stream(self, request: ChatRequest, ctx: Context) -> AsyncIterator[StreamEvent]:
        """One streamed Messages API call: deltas, then the complete result.

        A stream that ends before ``message_stop`` is an error, never a short answer.
        """
        params = self._params(request)
        messages = self._clients.for_call().messages
        with ProviderCall(self.provider, "request-id") as call:
            async with messages.with_streaming_response.create(**params, stream=True) as response:
                call.answered(response.headers)
                await stream_body(response)
                assembly = _Assembly(params["model"])
                async for _, data in sse_events(response.iter_lines()):
                    for delta in assembly.take(obj(event_data(data), "event")):
                        yield delta
                    if assembly.stopped:
                        break
            yield assembly.result(self.prices, self.cache_ttl)

    def __repr__(self) -> str:
        if self.cache is None:
            return "AnthropicLLM(cache=None)"
        return "AnthropicLLM()" if self.cache_ttl == "5m" else "AnthropicLLM(cache_ttl='1h')"


_USAGE_FIELDS = (
    "input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
)


def _merge_usage(totals: dict[str, int], parent: dict[str, Any], where: str) -> None:
    """Token counts from ``parent["usage"]``; a later report replaces an earlier one."""
    usage = field(parent, "usage", where, dict, nullable=True)
    if usage is None:
        return
    at = f"{where}.usage" if where else "usage"
    for name in _USAGE_FIELDS:
        value = field(usage, name, at, int, nullable=True)
        if value:
            totals[name] = value
    split = field(usage, "cache_creation", at, dict, nullable=True)
    if split is not None:
        # Present, the split says which lifetime each write had; absent, the writes had
        # the lifetime this provider asked for.
        totals["cache_creation_1h"] = field(
            split, "ephemeral_1h_input_tokens", f"{at}.cache_creation", int, nullable=True
        ) or 0


def _priced_usage(
    totals: dict[str, int], model: str, prices: PriceTable, ttl: CacheTTL
) -> Usage:
    counted = Usage(
        input_tokens=totals.get("input_tokens", 0),
        output_tokens=totals.get("output_tokens", 0),
        cache_read_tokens=totals.get("cache_read_input_tokens", 0),
        cache_write_tokens=totals.get("cache_creation_input_tokens", 0),
        requests=1,
    )
    if "cache_creation_1h" not in totals or prices.price(model) is None:
        return priced(counted, model, prices, cache_ttl=ttl)
    # The reply says which writes went to 1-hour entries: price each lifetime apart.
    long_lived = min(totals["cache_creation_1h"], counted.cache_write_tokens)
    short = dataclasses.replace(counted, cache_write_tokens=counted.cache_write_tokens - long_lived)
    cost = prices.cost(model, short, cache_ttl="5m") + prices.cost(
        model, Usage(cache_write_tokens=long_lived), cache_ttl="1h"
    )
    return dataclasses.replace(counted, cost_usd=cost)


def _finish(stop_reason: Any) -> FinishReason:
    return _FINISH.get(stop_reason, "other") if isinstance(stop_reason, str) else "other"


def _message(body: Any, model: str, prices: PriceTable, ttl: CacheTTL) -> LLMResult:
    """A Messages API reply body as our result."""
    body = obj(body, "body")
    if body.get("type") == "error":
        raise ErrorReply(field(body, "error", "", dict))
    text: list[str] = []
    calls: list[ToolCall] = []
    reasoning: list[ReasoningPart] = []
    for i, item in enumerate(field(body, "content", "", list)):
        where = f"content[{i}]"
        block = obj(item, where)
        kind = field(block, "type", where, str)
        if kind == "text":
            text.append(field(block, "text", where, str))
        elif kind in ("thinking", "redacted_thinking"):
            reasoning.append(reasoning_part(block, where))
        elif kind == "tool_use":
            arguments, problem = arguments_from_value(block.get("input"))
            calls.append(ToolCall(field(block, "id", where, str), field(block, "name", where, str),
                                  arguments, arguments_error=problem))
    usage: dict[str, int] = {}
    _merge_usage(usage, body, "")
    answered = body.get("model")
    return LLMResult(
        content="".join(text),
        tool_calls=tuple(calls),
        usage=_priced_usage(usage, model, prices, ttl),
        finish_reason=_finish(body.get("stop_reason")),
        model=answered if isinstance(answered, str) and answered else model,
        reasoning=tuple(reasoning),
    )


class _Assembly:
    """A streamed reply put together event by event: deltas out, the result at the end."""

    def __init__(self, model: str) -> None:
        self.priced_as = model  # the model asked for; the reply may name a dated snapshot
        self.model = model
        self.text: list[str] = []
        self.blocks: dict[int, dict[str, Any]] = {}
        self.thinking: dict[int, dict[str, Any]] = {}
        self.usage: dict[str, int] = {}
        self.stop_reason: str | None = None
        self.delivered = 0
        self.stopped = False

    def take(self, event: dict[str, Any]) -> Iterator[StreamEvent]:
        """The deltas one event carries."""
        kind = field(event, "type", "event", str)
        if kind == "message_start":
            message = field(event, "message", kind, dict)
            model = message.get("model")
            if isinstance(model, str) and model:
                self.model = model
            _merge_usage(self.usage, message, "message_start.message")
        elif kind == "content_block_start":
            index = field(event, "index", kind, int)
            block = field(event, "content_block", kind, dict)
            where = "content_block_start.content_block"
            block_kind = field(block, "type", where, str)
            if block_kind in ("thinking", "redacted_thinking"):
                # Deltas complete it: the thinking text, then its signature.
                self.thinking[index] = dict(block)
                if block_kind == "thinking" and block.get("thinking"):
                    yield self._out(ReasoningDelta(field(block, "thinking", where, str)))
            elif block_kind == "tool_use":
                call_id, name = field(block, "id", where, str), field(block, "name", where, str)
                self.blocks[index] = {"id": call_id, "name": name, "json": []}
                yield self._out(ToolCallDelta(index=len(self.blocks) - 1, id=call_id, name=name))
        elif kind == "content_block_delta":
            index = field(event, "index", kind, int)
            delta = field(event, "delta", kind, dict)
            where = "content_block_delta.delta"
            delta_kind = field(delta, "type", where, str)
            if delta_kind == "text_delta":
                piece = field(delta, "text", where, str)
                self.text.append(piece)
                yield self._out(TextDelta(piece))
            elif delta_kind == "thinking_delta" and index in self.thinking:
                piece = field(delta, "thinking", where, str)
                self.thinking[index]["thinking"] = self.thinking[index].get("thinking", "") + piece
                yield self._out(ReasoningDelta(piece))
            elif delta_kind == "signature_delta" and index in self.thinking:
                signature = field(delta, "signature", where, str)
                block = self.thinking[index]
                block["signature"] = (block.get("signature") or "") + signature
            elif delta_kind == "input_json_delta" and index in self.blocks:
                fragment = field(delta, "partial_json", where, str)
                self.blocks[index]["json"].append(fragment)
                position = list(self.blocks).index(index)
                yield self._out(ToolCallDelta(index=position, arguments_json=fragment))
        elif kind == "message_delta":
            delta = field(event, "delta", kind, dict)
            self.stop_reason = field(delta, "stop_reason", "message_delta.delta", str,
                                     nullable=True) or self.stop_reason
            _merge_usage(self.usage, event, kind)
        elif kind == "message_stop":
            self.stopped = True
        elif kind == "error":
            raise ErrorReply(field(event, "error", "", dict))
        # ping, content_block_stop and event types added later carry nothing we use

    def _out(self, delta: StreamEvent) -> StreamEvent:
        self.delivered += 1
        return delta

    def result(self, prices: PriceTable, ttl: CacheTTL) -> LLMResult:
        """The whole answer; :class:`StreamTruncated` when ``message_stop`` never came."""
        if not self.stopped:
            raise StreamTruncated("before message_stop", self.delivered)
        calls = []
        for block in self.blocks.values():
            arguments, problem = arguments_from_text("".join(block["json"]))
            calls.append(ToolCall(block["id"], block["name"], arguments, arguments_error=problem))
        reasoning = tuple(
            reasoning_part(block, f"content[{index}]") for index, block in self.thinking.items()
        )
        return LLMResult(
            content="".join(self.text),
            tool_calls=tuple(calls),
            usage=_priced_usage(self.usage, self.priced_as, prices, ttl),
            finish_reason=_finish(self.stop_reason),
            model=self.model,
            reasoning=reasoning,
        )
