"""AnthropicLLM: the LLM seam over Anthropic's Messages API (the official ``anthropic`` SDK).

Mapping, both ways:

- tools: ``{"name", "description", "input_schema"}``, or a tool's own native declaration
  (``ToolSchema.native["anthropic"]``, e.g. the client-side memory tool);
- the system prompt: the ``system`` parameter;
- assistant tool calls: ``tool_use`` blocks; tool results: ``tool_result`` blocks (with
  ``is_error`` for failures) in the next user turn, consecutive results together; an
  attached image goes inside its ``tool_result`` as an ``image`` block;
- usage: input, output, cache-read and cache-write tokens, priced from the price table;
- stop reasons: ``end_turn``/``stop_sequence`` -> ``stop``, ``tool_use`` ->
  ``tool_calls``, ``max_tokens`` -> ``length``, ``refusal`` -> ``content_filter``;
- streaming: text deltas are passed on, ``input_json_delta`` fragments are assembled
  per content block into each call's arguments.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from agentkit.core.contracts.errors import ProviderError
from agentkit.core.contracts.types import (
    ChatRequest,
    FinishReason,
    LLMResult,
    Message,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallDelta,
    ToolSchema,
    Usage,
)
from agentkit.core.policies.prices import DEFAULT_PRICES, PriceTable
from agentkit.providers._errors import as_provider_error, missing_extra
from agentkit.providers._json import parse_arguments
from agentkit.providers._media import native_image
from agentkit.providers._sdk import client_options, priced
from agentkit.providers.spec import model_id
from agentkit.tools.declarations.adapt import thaw

if TYPE_CHECKING:
    from agentkit.core.runtime.context import RunContext

__all__ = ["AnthropicLLM", "anthropic_messages", "anthropic_tools"]

DEFAULT_MAX_TOKENS = 4096
"""Anthropic requires ``max_tokens``; this is sent when the request sets none."""

_FINISH: dict[str | None, FinishReason] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "refusal": "content_filter",
}


def anthropic_tools(tools: tuple[ToolSchema, ...]) -> list[dict[str, Any]]:
    """Our tool schemas as the Messages API's ``tools``."""
    declared = []
    for schema in tools:
        native = schema.native.get("anthropic")
        if native is not None:
            declared.append(dict(native))
        else:
            declared.append({
                "name": schema.name,
                "description": schema.description,
                "input_schema": thaw(schema.parameters),
            })
    return declared


def anthropic_messages(messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    """Our transcript as the Messages API's ``messages``: tool results become
    ``tool_result`` blocks in a user turn, and consecutive turns of one role merge."""
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for message in messages:
        if message.role == "tool":
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id,
                "content": _tool_result_content(message),
            }
            if message.is_error:
                result["is_error"] = True
            add("user", [result])
        elif message.role == "assistant":
            blocks: list[dict[str, Any]] = []
            if message.content:
                blocks.append({"type": "text", "text": message.content})
            for call in message.tool_calls:
                blocks.append({
                    "type": "tool_use", "id": call.id, "name": call.name,
                    "input": thaw(call.arguments),
                })
            add("assistant", blocks or [{"type": "text", "text": ""}])
        elif message.role == "user":
            add("user", [{"type": "text", "text": message.content}])
        # system messages travel in the ``system`` parameter, never in the transcript
    return out


def _tool_result_content(message: Message) -> str | list[dict[str, Any]]:
    """The text, plus an image block per attached image the API accepts (other media
    stay as the description lines already in the text)."""
    images = [m for m in message.attachments if native_image(m)]
    if not images:
        return message.content
    blocks: list[dict[str, Any]] = [{"type": "text", "text": message.content}]
    for image in images:
        blocks.append({"type": "image", "source": {
            "type": "base64", "media_type": image.mime_type,
            "data": base64.b64encode(image.data).decode("ascii"),
        }})
    return blocks


def _usage(usage: Any, model: str, prices: PriceTable) -> Usage:
    if usage is None:
        return Usage(requests=1)
    counted = Usage(
        input_tokens=getattr(usage, "input_tokens", 0) or 0,
        output_tokens=getattr(usage, "output_tokens", 0) or 0,
        cache_read_tokens=getattr(usage, "cache_read_input_tokens", 0) or 0,
        cache_write_tokens=getattr(usage, "cache_creation_input_tokens", 0) or 0,
        requests=1,
    )
    return priced(counted, model, prices)


class AnthropicLLM:
    """Claude through the Messages API.

    ``api_key`` defaults to ``ANTHROPIC_API_KEY`` and ``base_url`` to
    ``ANTHROPIC_BASE_URL``, as the SDK defines them; ``timeout`` (seconds) and
    ``max_retries`` go to the SDK client. The model comes from ``Agent(model=...)``.
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
    ) -> None:
        if client is None:
            try:
                import anthropic
            except ImportError:
                raise missing_extra("Anthropic", "anthropic") from None
            options = client_options(api_key, base_url, timeout, max_retries)
            client = anthropic.AsyncAnthropic(**options)
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
        if request.temperature is not None:
            params["temperature"] = request.temperature
        return params

    async def chat(self, request: ChatRequest, ctx: RunContext) -> LLMResult:
        """One Messages API call."""
        params = self._params(request)
        try:
            response = await self.client.messages.create(**params)
        except Exception as exc:
            raise (as_provider_error(exc, self.provider) or exc) from exc
        text: list[str] = []
        calls: list[ToolCall] = []
        for block in response.content:
            if block.type == "text":
                text.append(block.text)
            elif block.type == "tool_use":
                calls.append(ToolCall(block.id, block.name, dict(block.input or {})))
        return LLMResult(
            content="".join(text),
            tool_calls=tuple(calls),
            usage=_usage(response.usage, params["model"], self.prices),
            finish_reason=_FINISH.get(response.stop_reason, "other"),
            model=response.model or params["model"],
        )

    async def stream(self, request: ChatRequest, ctx: RunContext) -> AsyncIterator[StreamEvent]:
        """One streamed Messages API call: deltas, then the complete result."""
        params = self._params(request)
        try:
            events = await self.client.messages.create(**params, stream=True)
        except Exception as exc:
            raise (as_provider_error(exc, self.provider) or exc) from exc
        text: list[str] = []
        blocks: dict[int, dict[str, Any]] = {}
        usage: dict[str, int] = {}
        stop_reason: str | None = None
        model = params["model"]
        try:
            async for event in events:
                kind = event.type
                if kind == "message_start":
                    model = event.message.model or model
                    _merge_usage(usage, event.message.usage)
                elif kind == "content_block_start":
                    block = event.content_block
                    if block.type == "tool_use":
                        blocks[event.index] = {"id": block.id, "name": block.name, "json": []}
                        yield ToolCallDelta(index=len(blocks) - 1, id=block.id, name=block.name)
                elif kind == "content_block_delta":
                    delta = event.delta
                    if delta.type == "text_delta":
                        text.append(delta.text)
                        yield TextDelta(delta.text)
                    elif delta.type == "input_json_delta" and event.index in blocks:
                        blocks[event.index]["json"].append(delta.partial_json)
                        position = list(blocks).index(event.index)
                        yield ToolCallDelta(index=position, arguments_json=delta.partial_json)
                elif kind == "message_delta":
                    stop_reason = event.delta.stop_reason or stop_reason
                    _merge_usage(usage, event.usage)
        except Exception as exc:
            raise (as_provider_error(exc, self.provider) or exc) from exc
        calls = tuple(
            _assembled(block["id"], block["name"], "".join(block["json"]))
            for _, block in sorted(blocks.items())
        )
        counted = Usage(
            input_tokens=usage.get("input_tokens", 0),
            output_tokens=usage.get("output_tokens", 0),
            cache_read_tokens=usage.get("cache_read_input_tokens", 0),
            cache_write_tokens=usage.get("cache_creation_input_tokens", 0),
            requests=1,
        )
        yield LLMResult(
            content="".join(text),
            tool_calls=calls,
            usage=priced(counted, params["model"], self.prices),
            finish_reason=_FINISH.get(stop_reason, "other"),
            model=model,
        )

    def __repr__(self) -> str:
        return "AnthropicLLM()"


def _merge_usage(totals: dict[str, int], usage: Any) -> None:
    if usage is None:
        return
    for field in (
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    ):
        value = getattr(usage, field, None)
        if value:
            totals[field] = value


def _assembled(call_id: str, name: str, text: str) -> ToolCall:
    arguments, problem = parse_arguments(text or "{}")
    return ToolCall(call_id, name, arguments, arguments_error=problem)
