"""OpenAILLM: the LLM seam over OpenAI Chat Completions (the official ``openai`` SDK).

Chat Completions is also what every OpenAI-compatible server speaks (Ollama, vLLM,
llama.cpp's server, LiteLLM): point ``base_url`` at one.

Mapping, both ways:

- tools: ``{"type": "function", "function": {"name", "description", "parameters"}}``;
- the system prompt: a leading ``system`` message;
- assistant tool calls: ``tool_calls`` whose ``arguments`` are JSON *strings*; text that
  is not a JSON object becomes a refused call the model repairs, never a crash;
- tool results: ``role: tool`` messages with ``tool_call_id``; those messages take text
  only, so images attached to a turn's results follow them in one ``user`` message;
- usage: prompt tokens (cached ones counted as cache reads) and completion tokens;
- finish reasons: ``stop``, ``tool_calls``, ``length``, ``content_filter``;
- streaming: content deltas are passed on; ``tool_calls`` deltas are assembled per index
  (id and name first, then argument fragments); usage comes in the final chunk.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

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

__all__ = ["OpenAILLM", "openai_messages", "openai_tools"]

_FINISH: dict[str | None, FinishReason] = {
    "stop": "stop",
    "tool_calls": "tool_calls",
    "function_call": "tool_calls",
    "length": "length",
    "content_filter": "content_filter",
}


def openai_tools(tools: tuple[ToolSchema, ...]) -> list[dict[str, Any]]:
    """Our tool schemas as Chat Completions ``tools``."""
    return [
        {
            "type": "function",
            "function": {
                "name": schema.name,
                "description": schema.description,
                "parameters": thaw(schema.parameters),
            },
        }
        for schema in tools
    ]


def openai_messages(system: str, messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    """Our transcript (and system prompt) as Chat Completions ``messages``."""
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    images: list[dict[str, Any]] = []
    for message in messages:
        if message.role != "tool" and images:
            out.append({"role": "user", "content": images})
            images = []
        if message.role == "assistant":
            entry: dict[str, Any] = {"role": "assistant", "content": message.content or None}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {
                        "id": call.id,
                        "type": "function",
                        "function": {
                            "name": call.name,
                            "arguments": json.dumps(thaw(call.arguments), ensure_ascii=False),
                        },
                    }
                    for call in message.tool_calls
                ]
            out.append(entry)
        elif message.role == "tool":
            out.append(
                {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
            )
            images.extend(_image_parts(message))
        else:
            out.append({"role": message.role, "content": message.content})
    if images:
        out.append({"role": "user", "content": images})
    return out


def _image_parts(message: Message) -> list[dict[str, Any]]:
    shown = [m for m in message.attachments if native_image(m)]
    if not shown:
        return []
    parts: list[dict[str, Any]] = [{
        "type": "text",
        "text": f"The image(s) returned by tool call {message.tool_call_id} ({message.name}):",
    }]
    for image in shown:
        data = base64.b64encode(image.data).decode("ascii")
        url = f"data:{image.mime_type};base64,{data}"
        parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts


def _usage(usage: Any, model: str, prices: PriceTable) -> Usage:
    if usage is None:
        return Usage(requests=1)
    prompt = getattr(usage, "prompt_tokens", 0) or 0
    details = getattr(usage, "prompt_tokens_details", None)
    cached = (getattr(details, "cached_tokens", 0) or 0) if details is not None else 0
    counted = Usage(
        input_tokens=prompt - cached,
        output_tokens=getattr(usage, "completion_tokens", 0) or 0,
        cache_read_tokens=cached,
        requests=1,
    )
    return priced(counted, model, prices)


def _call(call_id: str, name: str, arguments: str) -> ToolCall:
    parsed, problem = parse_arguments(arguments)
    return ToolCall(call_id, name, parsed, arguments_error=problem)


class OpenAILLM:
    """A model behind OpenAI Chat Completions, OpenAI's own or any compatible server.

    ``api_key`` defaults to ``OPENAI_API_KEY`` and ``base_url`` to ``OPENAI_BASE_URL``,
    as the SDK defines them; ``timeout`` (seconds) and ``max_retries`` go to the SDK
    client. For a local server that needs no key, any ``api_key`` will do.
    """

    provider = "openai"

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
                import openai
            except ImportError:
                raise missing_extra("OpenAI", "openai") from None
            options = client_options(api_key, base_url, timeout, max_retries)
            client = openai.AsyncOpenAI(**options)
        self.client = client
        self.prices = prices

    def _params(self, request: ChatRequest) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": model_id(request.model),
            "messages": openai_messages(request.system, request.messages),
        }
        if request.tools:
            params["tools"] = openai_tools(request.tools)
        if request.max_tokens is not None:
            params["max_tokens"] = request.max_tokens
        if request.temperature is not None:
            params["temperature"] = request.temperature
        return params

    async def chat(self, request: ChatRequest, ctx: RunContext) -> LLMResult:
        """One Chat Completions call."""
        params = self._params(request)
        try:
            response = await self.client.chat.completions.create(**params)
        except Exception as exc:
            raise (as_provider_error(exc, self.provider) or exc) from exc
        choice = response.choices[0]
        message = choice.message
        calls = tuple(
            _call(c.id, c.function.name, c.function.arguments or "")
            for c in (message.tool_calls or ())
        )
        return LLMResult(
            content=message.content or "",
            tool_calls=calls,
            usage=_usage(response.usage, params["model"], self.prices),
            finish_reason=_FINISH.get(choice.finish_reason, "other"),
            model=response.model or params["model"],
        )

    async def stream(self, request: ChatRequest, ctx: RunContext) -> AsyncIterator[StreamEvent]:
        """One streamed Chat Completions call: deltas, then the complete result."""
        params = self._params(request)
        params["stream"] = True
        params["stream_options"] = {"include_usage": True}
        try:
            chunks = await self.client.chat.completions.create(**params)
        except Exception as exc:
            raise (as_provider_error(exc, self.provider) or exc) from exc
        text: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        finish: str | None = None
        usage: Any = None
        model = params["model"]
        try:
            async for chunk in chunks:
                model = chunk.model or model
                if chunk.usage is not None:
                    usage = chunk.usage
                for choice in chunk.choices or ():
                    delta = choice.delta
                    if delta.content:
                        text.append(delta.content)
                        yield TextDelta(delta.content)
                    for piece in delta.tool_calls or ():
                        call = calls.setdefault(piece.index, {"id": "", "name": "", "json": []})
                        function = piece.function
                        if piece.id:
                            call["id"] = piece.id
                        if function is not None and function.name:
                            call["name"] += function.name
                        fragment = (function.arguments or "") if function is not None else ""
                        call["json"].append(fragment)
                        yield ToolCallDelta(
                            index=piece.index,
                            id=piece.id or None,
                            name=(function.name or None) if function is not None else None,
                            arguments_json=fragment,
                        )
                    if choice.finish_reason:
                        finish = choice.finish_reason
        except Exception as exc:
            raise (as_provider_error(exc, self.provider) or exc) from exc
        yield LLMResult(
            content="".join(text),
            tool_calls=tuple(
                _call(c["id"], c["name"], "".join(c["json"])) for _, c in sorted(calls.items())
            ),
            usage=_usage(usage, params["model"], self.prices),
            finish_reason=_FINISH.get(finish, "other"),
            model=model,
        )

    def __repr__(self) -> str:
        return "OpenAILLM()"
