"""OpenAIResponsesLLM: the LLM seam over OpenAI's Responses API (the official ``openai`` SDK).

Mapping, both ways:

- tools: function tools ``{"type": "function", "name", "description", "parameters",
  "strict"}``, strict where the schema allows (see ``_strict``);
- the system prompt: ``instructions``;
- transcript, media, reasoning items and tool results: see ``_responses_input``;
- stateless: ``store: false`` and ``include: ["reasoning.encrypted_content"]`` for
  reasoning, so the encrypted reasoning comes back on the reply and goes back as input
  items; a run never depends on what OpenAI keeps (``store=True`` opts in to storage);
- settings: ``temperature``, ``top_p``, ``max_tokens`` -> ``max_output_tokens``,
  ``tool_choice`` (a tool name -> ``{"type": "function", "name"}``),
  ``parallel_tool_calls`` (with tools), ``reasoning`` -> ``reasoning.effort`` and
  ``summary``, ``extra`` -> extra body fields; ``stop`` and ``seed`` are refused (the
  Responses API has neither: ``openai-chat:MODEL`` has both);
- structured output: ``text.format`` as a ``json_schema``, strict where it allows;
- usage: input tokens (cached ones as cache reads), output tokens (reasoning ones apart,
  as ``reasoning_tokens``), priced from the price table;
- finish: ``completed`` -> ``stop`` or ``tool_calls``, ``incomplete`` for
  ``max_output_tokens`` -> ``length``, for ``content_filter`` or a refusal ->
  ``content_filter``;
- streaming: text, refusal and reasoning (summary) deltas are passed on, function-call
  arguments assembled per output item; the result is read from the terminal
  ``response.completed`` (or ``response.incomplete``) event.

A reply of the wrong shape, a failed response, an ``error`` event or a stream that ends
before its terminal event is a ``ProviderError`` (see ``_errors``), never a short answer.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from agentkit.core.contracts.errors import UnsupportedSetting
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
from agentkit.core.policies.prices import DEFAULT_PRICES, PriceTable
from agentkit.providers._errors import ErrorReply, ProviderCall, StreamTruncated
from agentkit.providers._json import arguments_from_text
from agentkit.providers._model_families import OPENAI_NO_REASONING, OPENAI_REASONING
from agentkit.providers._openai_client import CacheKey, OpenAIConnection
from agentkit.providers._reply import event_data, field, json_body, obj, sse_events, stream_body
from agentkit.providers._responses_input import responses_input, responses_tools
from agentkit.providers._sdk import priced
from agentkit.providers._settings import extra_fields, tool_choice
from agentkit.providers._strict import strict_schema
from agentkit.providers.spec import model_id
from agentkit.tools.declarations.adapt import thaw

__all__ = ["OpenAIResponsesLLM", "responses_input", "responses_tools"]

PROVIDER = "openai"

_TERMINAL = ("response.completed", "response.incomplete")


class OpenAIResponsesLLM:
    """A model behind OpenAI's Responses API: ``openai:MODEL`` specs.

    Keywords as :class:`~agentkit.providers.OpenAILLM` (``api_key=``, ``base_url=``,
    ``timeout=``, ``max_retries=``, ``prices=``, ``prompt_cache_key=``, ``client=``);
    ``store=True`` lets OpenAI keep the responses (off by default: every request carries
    the whole conversation, reasoning included, so nothing depends on OpenAI's storage).
    """

    provider = PROVIDER

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        prices: PriceTable = DEFAULT_PRICES,
        client: Any = None,
        prompt_cache_key: CacheKey = "auto",
        store: bool = False,
    ) -> None:
        if not isinstance(store, bool):
            raise TypeError(f"OpenAIResponsesLLM(store=...) takes True or False, got {store!r}")
        self._connection = OpenAIConnection(
            "OpenAIResponsesLLM", api_key=api_key, base_url=base_url, timeout=timeout,
            max_retries=max_retries, client=client, prompt_cache_key=prompt_cache_key,
        )
        self._clients = self._connection.clients
        self.client = self._connection.client
        self.prompt_cache_key = prompt_cache_key
        self.prices = prices
        self.store = store

    def _params(self, request: ChatRequest, ctx: Context) -> dict[str, Any]:
        model = model_id(request.model)
        params: dict[str, Any] = {
            "model": model,
            "input": responses_input(request.messages, store=self.store),
            "store": self.store,
        }
        if request.system:
            params["instructions"] = request.system
        key = self._connection.cache_key(request, ctx)
        if key:
            params["prompt_cache_key"] = key
        if request.tools:
            params["tools"] = responses_tools(request.tools)
        if request.output_schema is not None:
            strict = strict_schema(request.output_schema)
            params["text"] = {"format": {
                "type": "json_schema", "name": "output",
                "schema": strict if strict is not None else thaw(request.output_schema),
                "strict": strict is not None,
            }}
        _apply_settings(params, request)
        if "reasoning" in params or model.startswith(OPENAI_REASONING):
            params["include"] = ["reasoning.encrypted_content"]
        return params

    async def chat(self, request: ChatRequest, ctx: Context) -> LLMResult:
        """One Responses API call."""
        params = self._params(request, ctx)
        responses = self._clients.for_call().responses
        with ProviderCall(self.provider, "x-request-id") as call:
            async with responses.with_streaming_response.create(**params) as response:
                call.answered(response.headers)
                body = json_body(await response.read(), response.headers)
            return _result(obj(body, "body"), params["model"], self.prices)

    async def stream(self, request: ChatRequest, ctx: Context) -> AsyncIterator[StreamEvent]:
        """One streamed Responses API call: deltas, then the complete result.

        A stream that ends before ``response.completed`` (or ``response.incomplete``) is
        an error, never a short answer.
        """
        params = self._params(request, ctx)
        params["stream"] = True
        responses = self._clients.for_call().responses
        with ProviderCall(self.provider, "x-request-id") as call:
            async with responses.with_streaming_response.create(**params) as response:
                call.answered(response.headers)
                await stream_body(response)
                assembly = _Assembly()
                async for _, data in sse_events(response.iter_lines()):
                    for delta in assembly.take(obj(event_data(data), "event")):
                        yield delta
                    if assembly.final is not None:
                        break
            yield assembly.result(params["model"], self.prices)

    def __repr__(self) -> str:
        return "OpenAIResponsesLLM()" if not self.store else "OpenAIResponsesLLM(store=True)"


def _apply_settings(params: dict[str, Any], request: ChatRequest) -> None:
    settings = request.settings
    for name, why in (("stop", "stop sequences"), ("seed", "a seed")):
        if getattr(settings, name) is not None:
            raise UnsupportedSetting(
                PROVIDER, name,
                f"the Responses API takes no {name} parameter; for {why}, use Chat "
                "Completions (the spec openai-chat:MODEL, or OpenAILLM)",
            )
    for name in ("temperature", "top_p"):
        value = getattr(settings, name)
        if value is not None:
            params[name] = value
    if settings.max_tokens is not None:
        params["max_output_tokens"] = settings.max_tokens
    choice = tool_choice(request, PROVIDER)
    if choice in ("auto", "none", "required"):
        params["tool_choice"] = choice
    elif choice is not None:
        params["tool_choice"] = {"type": "function", "name": choice}
    if settings.parallel_tool_calls is not None and request.tools:
        params["parallel_tool_calls"] = settings.parallel_tool_calls
    reasoning = settings.reasoning
    if reasoning is not None:
        if reasoning.budget_tokens is not None:
            raise UnsupportedSetting(
                PROVIDER, "reasoning",
                "the Responses API takes an effort ('low', 'medium', 'high'), not a token "
                f"budget (budget_tokens={reasoning.budget_tokens}); leave budget_tokens None",
            )
        if params["model"].startswith(OPENAI_NO_REASONING):
            raise UnsupportedSetting(
                PROVIDER, "reasoning",
                f"{params['model']} is not a reasoning model (the o-series and GPT-5 are)",
            )
        wire: dict[str, Any] = {"effort": reasoning.effort}
        if reasoning.summary:
            wire["summary"] = "auto"
        params["reasoning"] = wire
    if settings.extra:
        params["extra_body"] = extra_fields(settings.extra, params, PROVIDER)


def _usage(body: dict[str, Any], model: str, prices: PriceTable) -> Usage:
    usage = field(body, "usage", "response", dict, nullable=True)
    if usage is None:
        return Usage(requests=1)
    at = "response.usage"
    prompt = field(usage, "input_tokens", at, int, nullable=True) or 0
    details = field(usage, "input_tokens_details", at, dict, nullable=True) or {}
    cached = field(details, "cached_tokens", f"{at}.input_tokens_details", int,
                   nullable=True) or 0
    written = field(details, "cache_write_tokens", f"{at}.input_tokens_details", int,
                    nullable=True) or 0
    output = field(usage, "output_tokens", at, int, nullable=True) or 0
    out_details = field(usage, "output_tokens_details", at, dict, nullable=True) or {}
    thinking = field(out_details, "reasoning_tokens", f"{at}.output_tokens_details", int,
                     nullable=True) or 0
    counted = Usage(
        input_tokens=prompt - cached - written,
        output_tokens=output - thinking,
        cache_read_tokens=cached,
        cache_write_tokens=written,
        requests=1,
        reasoning_tokens=thinking,
    )
    return priced(counted, model, prices)


def _result(body: dict[str, Any], model: str, prices: PriceTable) -> LLMResult:
    """A Responses API response object as our result."""
    if body.get("error") is not None:
        raise ErrorReply(field(body, "error", "response", dict))
    text: list[str] = []
    calls: list[ToolCall] = []
    reasoning: list[ReasoningPart] = []
    refused = False
    for i, entry in enumerate(field(body, "output", "response", list)):
        where = f"response.output[{i}]"
        item = obj(entry, where)
        kind = field(item, "type", where, str)
        if kind == "reasoning":
            reasoning.append(_reasoning(item, where))
        elif kind == "message":
            for j, part in enumerate(field(item, "content", where, list)):
                at = f"{where}.content[{j}]"
                part = obj(part, at)
                part_kind = field(part, "type", at, str)
                if part_kind == "output_text":
                    text.append(field(part, "text", at, str))
                elif part_kind == "refusal":
                    text.append(field(part, "refusal", at, str))
                    refused = True
        elif kind == "function_call":
            arguments, problem = arguments_from_text(field(item, "arguments", where, str))
            item_id = field(item, "id", where, str, nullable=True)
            calls.append(ToolCall(
                field(item, "call_id", where, str), field(item, "name", where, str), arguments,
                arguments_error=problem,
                provider_state={PROVIDER: {"id": item_id}} if item_id else {},
            ))
        # hosted tools' items (web search, ...) are the provider's own business
    answered = body.get("model")
    return LLMResult(
        content="".join(text),
        tool_calls=tuple(calls),
        usage=_usage(body, model, prices),
        finish_reason=_finish(body, refused, bool(calls)),
        model=answered if isinstance(answered, str) and answered else model,
        reasoning=tuple(reasoning),
    )


def _reasoning(item: dict[str, Any], where: str) -> ReasoningPart:
    """A reasoning item: its summary (or reasoning text) readable, the item kept whole."""
    texts = []
    for key, part_kind in (("summary", "summary_text"), ("content", "reasoning_text")):
        for j, part in enumerate(field(item, key, where, list, nullable=True) or ()):
            part = obj(part, f"{where}.{key}[{j}]")
            if part.get("type") == part_kind:
                texts.append(field(part, "text", f"{where}.{key}[{j}]", str))
    field(item, "id", where, str)
    state = {k: v for k, v in item.items() if k != "status"}
    return ReasoningPart(PROVIDER, "\n\n".join(texts), state)


def _finish(body: dict[str, Any], refused: bool, called: bool) -> FinishReason:
    status = body.get("status")
    if status == "incomplete":
        details = field(body, "incomplete_details", "response", dict, nullable=True) or {}
        reason = details.get("reason")
        if reason == "max_output_tokens":
            return "length"
        return "content_filter" if reason == "content_filter" else "other"
    if refused:
        return "content_filter"
    if called:
        return "tool_calls"
    return "stop" if status in ("completed", None) else "other"


class _Assembly:
    """A streamed response put together event by event: deltas out, the result at the end."""

    def __init__(self) -> None:
        self.calls: dict[int, int] = {}  # output index -> position among the calls
        self.items: dict[int, dict[str, Any]] = {}
        self.final: dict[str, Any] | None = None
        self.delivered = 0

    def take(self, event: dict[str, Any]) -> Iterator[StreamEvent]:
        """The deltas one event carries."""
        kind = field(event, "type", "event", str)
        if kind in ("response.output_text.delta", "response.refusal.delta"):
            yield self._out(TextDelta(field(event, "delta", kind, str)))
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            yield self._out(ReasoningDelta(field(event, "delta", kind, str)))
        elif kind == "response.function_call_arguments.delta":
            index = field(event, "output_index", kind, int)
            if index in self.calls:
                fragment = field(event, "delta", kind, str)
                yield self._out(ToolCallDelta(index=self.calls[index], arguments_json=fragment))
        elif kind == "response.output_item.added":
            item = field(event, "item", kind, dict)
            if item.get("type") == "function_call":
                index = field(event, "output_index", kind, int)
                self.calls[index] = len(self.calls)
                yield self._out(ToolCallDelta(
                    index=self.calls[index],
                    id=field(item, "call_id", f"{kind}.item", str),
                    name=field(item, "name", f"{kind}.item", str),
                ))
        elif kind == "response.output_item.done":
            self.items[field(event, "output_index", kind, int)] = field(event, "item", kind, dict)
        elif kind in _TERMINAL:
            self.final = field(event, "response", kind, dict)
        elif kind == "response.failed":
            response = field(event, "response", kind, dict)
            raise ErrorReply(field(response, "error", f"{kind}.response", dict))
        elif kind == "error":
            raise ErrorReply(event)
        # created, in_progress, queued, content and summary parts, *.done events and
        # hosted tools' progress carry nothing the result does not

    def _out(self, delta: StreamEvent) -> StreamEvent:
        self.delivered += 1
        return delta

    def result(self, model: str, prices: PriceTable) -> LLMResult:
        """The whole answer; :class:`StreamTruncated` when no terminal event came."""
        if self.final is None:
            raise StreamTruncated("before response.completed", self.delivered)
        body = self.final
        if not body.get("output") and self.items:  # a terminal event that left them out
            body = {**body, "output": [self.items[i] for i in sorted(self.items)]}
        return _result(body, model, prices)
