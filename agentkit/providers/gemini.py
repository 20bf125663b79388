"""GeminiLLM: the LLM seam over Google's Gemini API and Vertex AI (the ``google-genai`` SDK).

Mapping, both ways (the request side is in ``_gemini_wire``, schemas in ``_gemini_schema``):

- tools: one ``function_declarations`` tool; parameter schemas translated to Gemini's
  ``Schema`` or refused with ``UnsupportedSchema``;
- the system prompt: ``system_instruction``;
- settings: ``temperature``, ``top_p``, ``seed``, ``max_tokens`` -> ``max_output_tokens``,
  ``stop`` -> ``stop_sequences``, ``tool_choice`` -> ``function_calling_config`` (``AUTO``,
  ``NONE``, ``ANY``, ``ANY`` with one allowed name), ``reasoning`` -> ``thinking_config``,
  ``extra`` -> further ``GenerateContentConfig`` fields (``top_k``);
  ``parallel_tool_calls=False`` is refused (Gemini has no such switch);
- structured output: ``response_json_schema`` with ``response_mime_type`` JSON, on a
  request without tools to Gemini 2.5 and later, where the schema is of Gemini's subset;
- tool calls: ``function_call`` parts; results: ``function_response`` parts in the next
  user turn, ``{"output": ...}`` or ``{"error": ...}``;
- thought signatures: kept on each call's ``provider_state`` and on ``ReasoningPart``
  state, tagged with this provider, and sent back on every later request;
- usage: prompt (less its cached part), cached, candidate and thought tokens, priced;
- finish reasons: ``STOP`` -> ``stop`` (``tool_calls`` with calls), ``MAX_TOKENS`` ->
  ``length``, ``SAFETY``/``RECITATION``/``BLOCKLIST``/... -> ``content_filter``, the
  reason as sent kept in ``provider_details``.

Replies come back through the SDK's own response types (validated by pydantic); a reply
those reject, a body that is not JSON, or a stream that ends before a finish reason is
a ``ProviderError``, classified by ``_errors`` like the other providers.
"""

from __future__ import annotations

import base64
import json
import os
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING, Any

from agentkit.core.contracts.errors import ProviderError, UnsupportedSetting
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
from agentkit.providers._errors import (
    MalformedReply,
    ProviderCall,
    StreamTruncated,
    retry_after,
    status_error,
)
from agentkit.providers._gemini_wire import gemini_config, gemini_contents, gemini_tools
from agentkit.providers._json import arguments_from_value
from agentkit.providers._sdk import priced
from agentkit.providers.spec import model_id

if TYPE_CHECKING:
    pass

__all__ = ["GeminiLLM", "gemini_contents", "gemini_tools"]

_FILTERED = frozenset({
    "SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY",
    "IMAGE_PROHIBITED_CONTENT", "IMAGE_RECITATION", "LANGUAGE",
})


class GeminiLLM:
    """Gemini through the Gemini API, or through Vertex AI with ``vertexai=True``.

    The Gemini API takes ``api_key`` (default ``GEMINI_API_KEY`` or ``GOOGLE_API_KEY``,
    as the SDK reads them). Vertex AI takes ``project`` and ``location`` (default
    ``GOOGLE_CLOUD_PROJECT`` and ``GOOGLE_CLOUD_LOCATION``, else ``global``) and
    Application Default Credentials, or ``credentials=``. ``base_url`` points either at
    another endpoint (a proxy, a test server): it goes to the SDK's ``http_options``,
    and with Vertex AI the project and location stay in the path, so both must be
    known. ``timeout`` is in seconds; the SDK's own retries are off unless
    ``max_retries`` is given, so each agentkit ``retry()`` attempt is one request.
    Missing credentials are a :class:`ProviderError` here, before any call.
    """

    def __init__(
        self,
        *,
        api_key: str | None = None,
        vertexai: bool = False,
        project: str | None = None,
        location: str | None = None,
        credentials: Any = None,
        base_url: str | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
        prices: PriceTable = DEFAULT_PRICES,
        client: Any = None,
    ) -> None:
        self.provider = "vertex" if vertexai else "google"
        self.prices = prices
        try:
            from google import genai
            from google.genai import types
        except ImportError:
            raise ImportError(  # the extra is named for the vendor, the package for the SDK
                'the Gemini provider needs the google-genai package: pip install '
                '"agentkit-framework[google]"'
            ) from None
        self._types = types
        self._config_fields = frozenset(types.GenerateContentConfig.model_fields)
        if client is None:
            try:
                client = self._client(genai, types, api_key, vertexai, project, location,
                                      credentials, base_url, timeout, max_retries)
            except Exception as exc:  # google.auth: no Application Default Credentials
                if type(exc).__name__ != "DefaultCredentialsError":
                    raise
                raise self._no_credentials(
                    "Vertex AI found no Application Default Credentials: run `gcloud auth "
                    "application-default login`, set GOOGLE_APPLICATION_CREDENTIALS, or pass "
                    "GeminiLLM(credentials=...)"
                ) from None
        self.client = client

    def _client(self, genai: Any, types: Any, api_key: str | None, vertexai: bool,
                project: str | None, location: str | None, credentials: Any,
                base_url: str | None, timeout: float | None, max_retries: int | None) -> Any:
        http: dict[str, Any] = {}
        if base_url is not None:
            http["base_url"] = base_url
        if timeout is not None:
            http["timeout"] = int(timeout * 1000)  # the SDK counts milliseconds
        if max_retries is not None:
            http["retry_options"] = types.HttpRetryOptions(attempts=max_retries + 1)
        # vertexai is always said, so GOOGLE_GENAI_USE_VERTEXAI cannot switch the door
        # behind the provider's name.
        options: dict[str, Any] = {"http_options": types.HttpOptions(**http),
                                   "vertexai": vertexai}
        if vertexai:
            project = project or os.environ.get("GOOGLE_CLOUD_PROJECT")
            location = location or os.environ.get("GOOGLE_CLOUD_LOCATION")
            if base_url is not None and not (project and location):
                # Without both, the SDK drops them from the path for a custom base_url.
                raise self._no_credentials(
                    "Vertex AI with base_url= needs a project and a location: set "
                    "GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION or pass "
                    "GeminiLLM(project=..., location=...)"
                )
            options.update(project=project, location=location or "global")
            if credentials is None and api_key is None and base_url is None:
                # Found now rather than at the first request, so a missing login is said
                # before a run starts (the SDK would look them up only then).
                import google.auth

                credentials, _ = google.auth.default(
                    scopes=["https://www.googleapis.com/auth/cloud-platform"]
                )
            if credentials is not None:
                options["credentials"] = credentials
        if api_key is not None:
            options["api_key"] = api_key
        try:
            return genai.Client(**options)
        except ValueError as exc:  # the SDK's "No API key was provided" and friends
            if vertexai:
                raise self._no_credentials(
                    "Vertex AI needs a project: set GOOGLE_CLOUD_PROJECT or pass "
                    f"GeminiLLM(project=...) ({exc})"
                ) from None
            raise self._no_credentials(
                "set GEMINI_API_KEY (or GOOGLE_API_KEY) or pass GeminiLLM(api_key=...)"
            ) from None

    def _no_credentials(self, what: str) -> ProviderError:
        return ProviderError(f"{self.provider}: no credentials: {what}",
                             provider=self.provider, transient=False, kind="authentication")

    def _request(self, request: ChatRequest) -> tuple[str, list[Any], Any]:
        """The model id, contents and config, validated into the SDK's types before
        anything is sent."""
        model = model_id(request.model)
        contents = gemini_contents(request.messages, self.provider)
        config = gemini_config(request, model, self.provider, self._config_fields)
        types = self._types
        try:
            typed = types.GenerateContentConfig.model_validate(config)
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            raise UnsupportedSetting(self.provider, "extra", f"Gemini refuses it: {exc}") from None
        return model, [types.Content.model_validate(c) for c in contents], typed

    async def chat(self, request: ChatRequest, ctx: Context) -> LLMResult:
        """One ``generateContent`` call."""
        model, contents, config = self._request(request)
        with _GeminiCall(self.provider):
            response = await self.client.aio.models.generate_content(
                model=model, contents=contents, config=config
            )
            assembly = _Assembly(model, self.provider)
            list(assembly.take(response))
            return assembly.result(self.prices, streamed=False)

    async def stream(self, request: ChatRequest, ctx: Context) -> AsyncIterator[StreamEvent]:
        """One ``streamGenerateContent?alt=sse`` call: deltas, then the complete result.

        A stream that ends before a finish reason is an error, never a short answer.
        """
        model, contents, config = self._request(request)
        with _GeminiCall(self.provider):
            chunks = await self.client.aio.models.generate_content_stream(
                model=model, contents=contents, config=config
            )
            assembly = _Assembly(model, self.provider)
            async for chunk in chunks:
                for delta in assembly.take(chunk):
                    yield delta
            yield assembly.result(self.prices, streamed=True)

    def __repr__(self) -> str:
        return "GeminiLLM(vertexai=True)" if self.provider == "vertex" else "GeminiLLM()"


class _GeminiCall(ProviderCall):
    """A Gemini request: the SDK's ``APIError`` classified by its HTTP status, a reply its
    types reject or that is not JSON as a malformed reply."""

    def __init__(self, provider: str) -> None:
        super().__init__(provider, "x-request-id")

    def classify(self, error: Exception) -> ProviderError | None:
        names = {cls.__name__ for cls in type(error).__mro__}
        code = getattr(error, "code", None)
        if "APIError" in names and isinstance(code, int):
            status = getattr(error, "status", None)
            message = getattr(error, "message", None) or str(error)
            text = f"{status}: {message}" if status else message
            return status_error(self.provider, code, text,
                                retry_after=_retry_delay(error))
        if "ValidationError" in names:  # pydantic: the reply is not what the API promises
            first = error.errors()[0] if hasattr(error, "errors") else {}
            where = ".".join(str(p) for p in first.get("loc", ()))
            return super().classify(MalformedReply(f"{where}: {first.get('msg', error)}"))
        if isinstance(error, json.JSONDecodeError) or "UnknownApiResponseError" in names:
            # A proxy's or an overloaded server's garbage is worth another try; an HTML
            # page (a wrong base_url) is not.
            html = str(getattr(error, "doc", error)).lstrip().startswith("<")
            return super().classify(MalformedReply(f"the body is not JSON: {error}",
                                                   transient=not html))
        if names & {"DefaultCredentialsError", "RefreshError"}:
            return ProviderError(f"{self.provider}: authentication failed: {error}",
                                 provider=self.provider, transient=False,
                                 kind="authentication")
        return super().classify(error)


def _retry_delay(error: Any) -> float | None:
    """The wait a Gemini error asks for: a ``google.rpc.RetryInfo`` detail (``"31s"``),
    else the ``Retry-After`` header."""
    body = error.details if isinstance(error.details, dict) else {}
    inner = body.get("error", body)
    for detail in inner.get("details", ()) if isinstance(inner, dict) else ():
        delay = detail.get("retryDelay") if isinstance(detail, dict) else None
        if isinstance(delay, str) and delay.endswith("s"):
            try:
                return max(0.0, float(delay[:-1]))
            except ValueError:
                pass
    response = getattr(error, "response", None)
    return retry_after(getattr(response, "headers", None) or {})


def _b64(value: bytes | None) -> str | None:
    return None if value is None else base64.b64encode(value).decode("ascii")


class _Assembly:
    """A reply put together response by response (one for ``generateContent``, one per
    event for a stream): deltas out, the result at the end."""

    def __init__(self, model: str, provider: str) -> None:
        self.asked = model
        self.model = model
        self.provider = provider
        self.text: list[str] = []
        self.reasoning: list[ReasoningPart] = []
        self.text_signature: str | None = None
        self.calls: list[ToolCall] = []
        self.usage: Any = None
        self.finish: str | None = None
        self.blocked: str | None = None
        self.delivered = 0

    def take(self, response: Any) -> Iterator[StreamEvent]:
        """The deltas one response carries."""
        if response.model_version:
            self.model = response.model_version
        if response.usage_metadata is not None:
            self.usage = response.usage_metadata  # each event reports the running total
        feedback = response.prompt_feedback
        if feedback is not None and feedback.block_reason is not None:
            self.blocked = str(feedback.block_reason.value)
        for candidate in (response.candidates or ())[:1]:
            if candidate.finish_reason is not None:
                self.finish = str(candidate.finish_reason.value)
            parts = candidate.content.parts if candidate.content is not None else None
            for part in parts or ():
                yield from self._part(part, response.response_id)

    def _part(self, part: Any, response_id: str | None) -> Iterator[StreamEvent]:
        sig = _b64(part.thought_signature)
        if part.function_call is not None:
            call = part.function_call
            arguments, problem = arguments_from_value(call.args or {})
            state: dict[str, Any] = {}
            if call.id:
                state["id"] = call.id
            if sig is not None:
                state["thought_signature"] = sig
            # Gemini gives calls no id unless asked; ours only pairs call and result.
            call_id = call.id or f"call_{response_id or uuid.uuid4().hex[:12]}_{len(self.calls)}"
            self.calls.append(ToolCall(
                call_id, call.name or "", arguments, arguments_error=problem,
                provider_state={self.provider: state} if state else {},
            ))
            yield self._out(ToolCallDelta(index=len(self.calls) - 1, id=call_id,
                                          name=call.name or "",
                                          arguments_json=json.dumps(call.args or {})))
        elif part.thought:
            text = part.text or ""
            last = self.reasoning[-1] if self.reasoning else None
            if last is not None and "thought_signature" not in last.state:
                # One thought streamed in pieces: one part, its signature on the last piece.
                state = {"thought_signature": sig} if sig is not None else {}
                self.reasoning[-1] = ReasoningPart(self.provider, last.text + text, state)
            else:
                self.reasoning.append(ReasoningPart(
                    self.provider, text, {"thought_signature": sig} if sig is not None else {}
                ))
            if text:
                yield self._out(ReasoningDelta(text))
        elif part.text is not None:
            if sig is not None:
                self.text_signature = sig
            if part.text:
                self.text.append(part.text)
                yield self._out(TextDelta(part.text))
        # code execution, inline data and other parts carry nothing an agent reads

    def _out(self, delta: StreamEvent) -> StreamEvent:
        self.delivered += 1
        return delta

    def result(self, prices: PriceTable, *, streamed: bool) -> LLMResult:
        """The whole answer; :class:`StreamTruncated` when no finish reason came."""
        details: dict[str, Any] = {}
        if self.blocked is not None:
            details["block_reason"] = self.blocked
            finish: FinishReason = "content_filter"
        elif self.finish is None:
            if streamed:
                raise StreamTruncated("before a finishReason", self.delivered)
            raise MalformedReply("candidates: expected a candidate with a finishReason, "
                                 "got none")
        else:
            details["finish_reason"] = self.finish
            finish = _finish(self.finish, bool(self.calls))
        reasoning = list(self.reasoning)
        if self.text_signature is not None:
            reasoning.append(ReasoningPart(self.provider, "",
                                           {"text_signature": self.text_signature}))
        return LLMResult(
            content="".join(self.text),
            tool_calls=tuple(self.calls),
            usage=self._usage(prices),
            finish_reason=finish,
            model=self.model,
            reasoning=tuple(reasoning),
            provider_details=details,
        )

    def _usage(self, prices: PriceTable) -> Usage:
        meta = self.usage
        if meta is None:
            return priced(Usage(requests=1), self.asked, prices)
        cached = meta.cached_content_token_count or 0
        prompt = (meta.prompt_token_count or 0) + (meta.tool_use_prompt_token_count or 0)
        counted = Usage(
            input_tokens=max(0, prompt - cached),  # the prompt count includes the cached part
            output_tokens=meta.candidates_token_count or 0,
            cache_read_tokens=cached,
            reasoning_tokens=meta.thoughts_token_count or 0,
            requests=1,
        )
        return priced(counted, self.asked, prices)


def _finish(reason: str, called: bool) -> FinishReason:
    if reason in _FILTERED:
        return "content_filter"
    if reason == "STOP":
        return "tool_calls" if called else "stop"
    if reason == "MAX_TOKENS":
        return "length"
    if reason in ("MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "MISSING_THOUGHT_SIGNATURE",
                  "MALFORMED_RESPONSE"):
        return "error"
    return "other"
