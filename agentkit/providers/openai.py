"""OpenAILLM: the LLM seam over OpenAI Chat Completions (the official ``openai`` SDK).

Chat Completions is also what every OpenAI-compatible server speaks (Ollama, vLLM,
llama.cpp's server, LiteLLM): point ``base_url`` at one.

Mapping, both ways:

- tools: ``{"type": "function", "function": {"name", "description", "parameters"}}``;
- the system prompt: a leading ``system`` message;
- prompt caching: OpenAI caches long prompt prefixes by itself; ``prompt_cache_key``
  (derived from the agent's name and the run's scope) keeps the requests of one agent
  on the same cache;
- settings: ``temperature``, ``max_tokens``, ``top_p``, ``stop``, ``seed``,
  ``tool_choice`` (a tool name -> ``{"type": "function", "function": {"name"}}``),
  ``parallel_tool_calls`` (sent only with tools), ``reasoning`` -> ``reasoning_effort``
  (a budget or a summary is refused), ``extra`` -> extra body fields;
- structured output: ``response_format`` (a ``json_schema``), to OpenAI's own API unless
  ``structured_output=`` says otherwise;
- assistant tool calls: ``tool_calls`` whose ``arguments`` are JSON *strings*; text that
  is not a JSON object becomes a refused call the model repairs, never a crash;
- tool results: ``role: tool`` messages with ``tool_call_id``; those messages take text
  only, so images attached to a turn's results follow them in one ``user`` message;
- a user message's media: ``image_url`` (a data URL or the image's URL), ``file`` (a PDF
  as a data URL), ``input_audio`` (WAV, MP3), a plain-text document as a ``text`` part
  headed by its name; anything else is :class:`UnsupportedMedia` before any request;
- reasoning parts are not sent: Chat Completions has no field for them;
- usage: prompt tokens (cached ones counted as cache reads) and completion tokens (the
  reasoning ones apart, as ``reasoning_tokens``);
- finish reasons: ``stop``, ``tool_calls``, ``length``, ``content_filter``;
- streaming: content deltas are passed on; ``tool_calls`` deltas are assembled per index
  (id and name first, then argument fragments); usage comes in the final chunk.

Replies are read as plain JSON, every field checked (``_reply.field``): a reply of the
wrong shape, an error object, or a stream that ends before ``data: [DONE]`` is a
``ProviderError`` (see ``_errors``), never a short answer or a raw ``TypeError``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any, Literal

from agentkit.core.contracts.errors import UnsupportedSetting
from agentkit.core.contracts.ports import Context
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
from agentkit.providers._errors import ErrorReply, MalformedReply, ProviderCall, StreamTruncated
from agentkit.providers._json import arguments_from_text, arguments_from_value
from agentkit.providers._media import (
    MB,
    NATIVE_IMAGE_TYPES,
    PDF,
    PLAIN_TEXT,
    base64_data,
    check_size,
    data_url,
    native_image,
    refuse,
)
from agentkit.providers._openai_client import CacheKey, OpenAIConnection, default_cache_key
from agentkit.providers._reply import event_data, field, json_body, obj, sse_events, stream_body
from agentkit.providers._sdk import priced
from agentkit.providers._settings import extra_fields, tool_choice
from agentkit.providers._strict import strict_schema
from agentkit.providers.spec import model_id
from agentkit.tools.declarations.adapt import thaw

__all__ = ["CacheKey", "OpenAILLM", "default_cache_key", "openai_messages", "openai_tools"]

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
    for index, message in enumerate(messages):
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
        elif message.role == "user" and message.attachments:
            out.append({"role": "user", "content": _user_parts(message, index)})
        else:
            out.append({"role": message.role, "content": message.content})
    if images:
        out.append({"role": "user", "content": images})
    return out


_ACCEPTED = (
    "images (image/png, image/jpeg, image/gif, image/webp; bytes or URL), PDF documents "
    "(application/pdf bytes), plain-text documents (text/plain bytes in UTF-8) and audio "
    "(audio/wav, audio/mpeg bytes)"
)
_AUDIO_FORMATS = {"audio/wav": "wav", "audio/x-wav": "wav", "audio/wave": "wav",
                  "audio/mpeg": "mp3", "audio/mp3": "mp3"}
_MAX_PART_BYTES = 50 * MB  # OpenAI's documented limit on the media of one request


def _user_parts(message: Message, index: int) -> list[dict[str, Any]]:
    """A user message's text and media as Chat Completions content parts."""
    where = f"messages[{index}] (user)"
    parts: list[dict[str, Any]] = []
    if message.content:
        parts.append({"type": "text", "text": message.content})
    for media in message.attachments:
        if media.url is None:
            check_size("openai", media, _MAX_PART_BYTES,
                       "Chat Completions takes at most 50 MB of media per request", _ACCEPTED,
                       where)
        if media.kind == "image" and media.mime_type in NATIVE_IMAGE_TYPES:
            parts.append({"type": "image_url", "image_url": {"url": data_url(media)}})
        elif media.kind == "file" and media.mime_type == PDF and media.url is None:
            parts.append({"type": "file", "file": {
                "filename": media.name or "document.pdf", "file_data": data_url(media),
            }})
        elif media.kind == "file" and media.mime_type == PLAIN_TEXT and media.url is None:
            try:
                text = media.data.decode("utf-8")
            except UnicodeDecodeError:
                raise refuse("openai", media, _ACCEPTED, where,
                             limit="a plain-text document must be UTF-8") from None
            parts.append({"type": "text",
                          "text": f"[file {media.name or 'document.txt'}]\n{text}"})
        elif (media.kind == "audio" and media.mime_type in _AUDIO_FORMATS
              and media.url is None):
            parts.append({"type": "input_audio", "input_audio": {
                "data": base64_data(media), "format": _AUDIO_FORMATS[media.mime_type],
            }})
        else:
            raise refuse("openai", media, _ACCEPTED, where)
    return parts


def _image_parts(message: Message) -> list[dict[str, Any]]:
    shown = [m for m in message.attachments if native_image(m)]
    if not shown:
        return []
    parts: list[dict[str, Any]] = [{
        "type": "text",
        "text": f"The image(s) returned by tool call {message.tool_call_id} ({message.name}):",
    }]
    for image in shown:
        parts.append({"type": "image_url", "image_url": {"url": data_url(image)}})
    return parts


def _usage(parent: dict[str, Any], where: str, model: str, prices: PriceTable) -> Usage:
    usage = field(parent, "usage", where, dict, nullable=True)
    if usage is None:
        return Usage(requests=1)
    at = f"{where}.usage" if where else "usage"
    prompt = field(usage, "prompt_tokens", at, int, nullable=True) or 0
    details = field(usage, "prompt_tokens_details", at, dict, nullable=True) or {}
    cached = field(details, "cached_tokens", f"{at}.prompt_tokens_details", int,
                   nullable=True) or 0
    completion = field(usage, "completion_tokens", at, int, nullable=True) or 0
    out_details = field(usage, "completion_tokens_details", at, dict, nullable=True) or {}
    thinking = field(out_details, "reasoning_tokens", f"{at}.completion_tokens_details", int,
                     nullable=True) or 0
    counted = Usage(
        input_tokens=prompt - cached,
        output_tokens=completion - thinking,
        cache_read_tokens=cached,
        requests=1,
        reasoning_tokens=thinking,
    )
    return priced(counted, model, prices)


def _finish(reason: Any) -> FinishReason:
    return _FINISH.get(reason, "other") if isinstance(reason, str) else "other"


def _apply_settings(params: dict[str, Any], request: ChatRequest, provider: str) -> None:
    settings = request.settings
    for name in ("max_tokens", "temperature", "top_p", "seed"):
        value = getattr(settings, name)
        if value is not None:
            params[name] = value
    if settings.stop:
        params["stop"] = list(settings.stop)
    choice = tool_choice(request, provider)
    if choice in ("auto", "none", "required"):
        params["tool_choice"] = choice
    elif choice is not None:
        params["tool_choice"] = {"type": "function", "function": {"name": choice}}
    if settings.parallel_tool_calls is not None and request.tools:
        params["parallel_tool_calls"] = settings.parallel_tool_calls
    reasoning = settings.reasoning
    if reasoning is not None:
        if reasoning.budget_tokens is not None:
            raise UnsupportedSetting(
                provider, "reasoning",
                "Chat Completions takes an effort (reasoning_effort), not a token budget "
                f"(budget_tokens={reasoning.budget_tokens}); leave budget_tokens None",
            )
        if reasoning.summary:
            raise UnsupportedSetting(
                provider, "reasoning",
                "Chat Completions returns no reasoning summary; the Responses API (the spec "
                "openai:MODEL) does, or leave summary False",
            )
        params["reasoning_effort"] = reasoning.effort
    if settings.extra:
        params["extra_body"] = extra_fields(settings.extra, params, provider)


def _call(call_id: str, name: str, arguments: Any) -> ToolCall:
    # Arguments are a JSON string on this API; a few compatible servers send the object.
    if arguments is None or isinstance(arguments, str):
        parsed, problem = arguments_from_text(arguments or "")
    else:
        parsed, problem = arguments_from_value(arguments)
    return ToolCall(call_id, name, parsed, arguments_error=problem)


def _completion(body: Any, model: str, prices: PriceTable) -> LLMResult:
    """A Chat Completions reply body as our result."""
    body = obj(body, "body")
    if body.get("error") is not None:
        raise ErrorReply(field(body, "error", "", dict))
    choices = field(body, "choices", "", list)
    if not choices:
        raise MalformedReply("choices: expected at least one choice, got an empty list")
    choice = obj(choices[0], "choices[0]")
    message = field(choice, "message", "choices[0]", dict)
    where = "choices[0].message"
    calls = []
    for j, item in enumerate(field(message, "tool_calls", where, list, nullable=True) or ()):
        at = f"{where}.tool_calls[{j}]"
        entry = obj(item, at)
        call_id = field(entry, "id", at, str)
        function = field(entry, "function", at, dict)
        name = field(function, "name", f"{at}.function", str)
        calls.append(_call(call_id, name, function.get("arguments")))
    answered = body.get("model")
    return LLMResult(
        content=field(message, "content", where, str, nullable=True) or "",
        tool_calls=tuple(calls),
        usage=_usage(body, "", model, prices),
        finish_reason=_finish(choice.get("finish_reason")),
        model=answered if isinstance(answered, str) and answered else model,
    )


class _Assembly:
    """A streamed reply put together chunk by chunk: deltas out, the result at the end."""

    def __init__(self, model: str) -> None:
        self.model = model
        self.answered_model = model
        self.text: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish: str | None = None
        self.usage: dict[str, Any] = {}
        self.delivered = 0
        self.done = False

    def take(self, chunk: dict[str, Any]) -> Iterator[StreamEvent]:
        """The deltas one chunk carries."""
        if chunk.get("error") is not None:
            raise ErrorReply(field(chunk, "error", "chunk", dict))
        model = chunk.get("model")
        if isinstance(model, str) and model:
            self.answered_model = model
        if field(chunk, "usage", "chunk", dict, nullable=True) is not None:
            self.usage = chunk
        for k, item in enumerate(field(chunk, "choices", "chunk", list, nullable=True) or ()):
            where = f"chunk.choices[{k}]"
            choice = obj(item, where)
            delta = field(choice, "delta", where, dict, nullable=True) or {}
            content = field(delta, "content", f"{where}.delta", str, nullable=True)
            if content:
                self.text.append(content)
                yield self._out(TextDelta(content))
            pieces = field(delta, "tool_calls", f"{where}.delta", list, nullable=True) or ()
            for p, part in enumerate(pieces):
                yield self._out(self._piece(obj(part, f"{where}.delta.tool_calls[{p}]"), p,
                                            f"{where}.delta.tool_calls[{p}]"))
            reason = choice.get("finish_reason")
            if isinstance(reason, str) and reason:
                self.finish = reason

    def _piece(self, part: dict[str, Any], position: int, where: str) -> ToolCallDelta:
        index = field(part, "index", where, int, nullable=True)
        index = position if index is None else index  # some servers leave it out
        call_id = field(part, "id", where, str, nullable=True)
        function = field(part, "function", where, dict, nullable=True) or {}
        name = field(function, "name", f"{where}.function", str, nullable=True)
        fragment = field(function, "arguments", f"{where}.function", str, nullable=True) or ""
        call = self.calls.setdefault(index, {"id": "", "name": "", "json": []})
        if call_id:
            call["id"] = call_id
        if name:
            call["name"] += name
        call["json"].append(fragment)
        return ToolCallDelta(index=index, id=call_id or None, name=name or None,
                             arguments_json=fragment)

    def _out(self, delta: StreamEvent) -> StreamEvent:
        self.delivered += 1
        return delta

    def result(self, prices: PriceTable) -> LLMResult:
        """The whole answer; :class:`StreamTruncated` unless ``[DONE]`` and a finish came."""
        if not self.done:
            raise StreamTruncated("before data: [DONE]", self.delivered)
        if self.finish is None:
            raise StreamTruncated("without a finish_reason", self.delivered)
        calls = []
        for index, call in sorted(self.calls.items()):
            for key in ("id", "name"):
                if not call[key]:
                    raise MalformedReply(
                        f"tool_calls[{index}].{key}: expected a string, got nothing"
                    )
            calls.append(_call(call["id"], call["name"], "".join(call["json"])))
        return LLMResult(
            content="".join(self.text),
            tool_calls=tuple(calls),
            usage=_usage(self.usage, "chunk", self.model, prices),
            finish_reason=_finish(self.finish),
            model=self.answered_model,
        )


class OpenAILLM:
    """A model behind OpenAI Chat Completions, OpenAI's own or any compatible server.

    ``api_key`` defaults to ``OPENAI_API_KEY`` and ``base_url`` to ``OPENAI_BASE_URL``,
    as the SDK defines them; ``timeout`` (seconds) and ``max_retries`` go to the SDK
    client. Left unset, ``max_retries`` is the SDK's default outside an agentkit
    ``retry()`` and 0 inside one, so that each ``retry()`` attempt is one request.
    A server set by ``base_url`` (or ``OPENAI_BASE_URL``) needs no key: without
    one, a placeholder it ignores is sent. With neither a key nor a server address the
    constructor raises :class:`ProviderError` (``kind="authentication"``).

    ``prompt_cache_key``: ``"auto"`` (the default) sends :func:`default_cache_key` to
    OpenAI's own API and nothing to other servers, some of which refuse fields they do
    not know; a string is sent as it is, and a function ``(request, ctx) -> str | None``
    chooses per request, to any server; None sends none.

    ``structured_output``: how ``Agent(output=...)``'s schema is sent. ``"auto"`` (the
    default) sends it as ``response_format`` (a ``json_schema``, strict where the schema
    allows) to OpenAI's own API, and not to other servers, which vary in what they take;
    ``"json_schema"`` sends it to any server; None never. agentkit's validation and repair
    turn apply either way.
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
        prompt_cache_key: CacheKey = "auto",
        structured_output: Literal["auto", "json_schema"] | None = "auto",
    ) -> None:
        if structured_output not in ("auto", "json_schema", None):
            raise ValueError(
                "OpenAILLM(structured_output=...) must be 'auto', 'json_schema' or None, "
                f"got {structured_output!r}"
            )
        self.structured_output = structured_output
        self._connection = OpenAIConnection(
            "OpenAILLM", api_key=api_key, base_url=base_url, timeout=timeout,
            max_retries=max_retries, client=client, prompt_cache_key=prompt_cache_key,
        )
        self._clients = self._connection.clients
        self.client = self._connection.client
        self.prompt_cache_key = prompt_cache_key
        self.prices = prices

    def _params(self, request: ChatRequest, ctx: Context) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": model_id(request.model),
            "messages": openai_messages(request.system, request.messages),
        }
        key = self._connection.cache_key(request, ctx)
        if key:
            params["prompt_cache_key"] = key
        if request.tools:
            params["tools"] = openai_tools(request.tools)
        mode = self.structured_output
        if request.output_schema is not None and (
            mode == "json_schema" or (mode == "auto" and self._connection.openai_itself)
        ):
            strict = strict_schema(request.output_schema)
            params["response_format"] = {"type": "json_schema", "json_schema": {
                "name": "output",
                "schema": strict if strict is not None else thaw(request.output_schema),
                "strict": strict is not None,
            }}
        _apply_settings(params, request, self.provider)
        return params

    async def chat(self, request: ChatRequest, ctx: Context) -> LLMResult:
        """One Chat Completions call."""
        params = self._params(request, ctx)
        completions = self._clients.for_call().chat.completions
        with ProviderCall(self.provider, "x-request-id") as call:
            async with completions.with_streaming_response.create(**params) as response:
                call.answered(response.headers)
                body = json_body(await response.read(), response.headers)
            return _completion(body, params["model"], self.prices)

    async def stream(self, request: ChatRequest, ctx: Context) -> AsyncIterator[StreamEvent]:
        """One streamed Chat Completions call: deltas, then the complete result.

        A stream that ends before ``data: [DONE]``, or without a finish reason, is an
        error, never a short answer.
        """
        params = self._params(request, ctx)
        params["stream"] = True
        params["stream_options"] = {"include_usage": True}
        completions = self._clients.for_call().chat.completions
        with ProviderCall(self.provider, "x-request-id") as call:
            async with completions.with_streaming_response.create(**params) as response:
                call.answered(response.headers)
                await stream_body(response)
                assembly = _Assembly(params["model"])
                async for _, data in sse_events(response.iter_lines()):
                    if data.strip() == "[DONE]":
                        assembly.done = True
                        break
                    for delta in assembly.take(obj(event_data(data), "chunk")):
                        yield delta
            yield assembly.result(self.prices)

    def __repr__(self) -> str:
        return "OpenAILLM()"
