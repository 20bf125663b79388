"""Every way a provider call fails, as one ProviderError: transient or permanent, by type.

Reading a reply only states facts: :class:`MalformedReply` (the reply is not what the
API promises), :class:`ErrorReply` (the provider put an error object in a 200 body or
in the middle of a stream) and :class:`StreamTruncated` (the stream ended before its
terminal event). :class:`ProviderCall` wraps one request and turns those facts, and the
SDK's and the HTTP client's own exceptions, into a :class:`ProviderError` carrying the
provider's request id. Nothing else in the providers decides what is worth retrying.

Transient: timeouts, dropped connections, 408/409/425/429/5xx/529, overload and server
errors reported mid-stream, a body that is empty or not JSON (a proxy's or an
overloaded server's garbage), and a stream cut off before it delivered anything.
Permanent: other 4xx, an HTML page (a wrong ``base_url``), JSON of the wrong shape, and
a stream cut off after deltas went out (retrying would deliver them twice).

A request over the model's context window is permanent with the kind
``"context_length"`` (OpenAI's ``context_length_exceeded``, Anthropic's 400 "prompt is
too long"), so that a run can compact its history and send it once more.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from types import TracebackType
from typing import Any

from agentkit.core.contracts.errors import ProviderError

__all__ = [
    "ErrorReply",
    "MalformedReply",
    "ProviderCall",
    "StreamTruncated",
    "as_provider_error",
    "missing_extra",
    "retry_after",
    "status_error",
]

# 408 request timeout, 409 conflict (retry-able lock contention), 425 too early,
# 429 rate limited, 5xx server trouble, 529 Anthropic overloaded.
_TRANSIENT_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})

_KINDS = {
    400: "bad_request",
    401: "authentication",
    403: "permission",
    404: "not_found",
    408: "timeout",
    413: "request_too_large",
    422: "unprocessable",
    429: "rate_limit",
    529: "overloaded",
}

# Error objects by their ``code`` or ``type``: Anthropic's types, then OpenAI's.
_ERROR_TYPES: dict[str, tuple[str, bool]] = {
    "overloaded_error": ("overloaded", True),
    "api_error": ("server_error", True),
    "rate_limit_error": ("rate_limit", True),
    "timeout_error": ("timeout", True),
    "invalid_request_error": ("bad_request", False),
    "authentication_error": ("authentication", False),
    "permission_error": ("permission", False),
    "not_found_error": ("not_found", False),
    "request_too_large": ("request_too_large", False),
    "billing_error": ("billing", False),
    "server_error": ("server_error", True),
    "rate_limit_exceeded": ("rate_limit", True),
    "service_unavailable": ("server_error", True),
    "insufficient_quota": ("billing", False),
    "context_length_exceeded": ("context_length", False),
    "invalid_api_key": ("authentication", False),
    # Amazon Bedrock's exception names (botocore's ``Error.Code``).
    "ThrottlingException": ("rate_limit", True),
    "ServiceUnavailableException": ("server_error", True),
    "ModelNotReadyException": ("model_not_ready", True),
    "InternalServerException": ("server_error", True),
    "ModelTimeoutException": ("timeout", True),
    "ModelStreamErrorException": ("server_error", True),
    "ValidationException": ("bad_request", False),
    "AccessDeniedException": ("permission", False),
    "ResourceNotFoundException": ("not_found", False),
    "ServiceQuotaExceededException": ("quota", False),
    "ModelErrorException": ("model_error", False),
    "UnrecognizedClientException": ("authentication", False),
    "ExpiredTokenException": ("authentication", False),
}

# botocore's own exceptions, by class name (the SDK is imported only by BedrockLLM).
_BOTOCORE_TIMEOUTS = frozenset({"ReadTimeoutError", "ConnectTimeoutError"})
_BOTOCORE_CONNECTION = frozenset({"EndpointConnectionError", "ConnectionClosedError",
                                  "HTTPClientError"})
# The event-stream parser's errors are no BotoCoreError, so they are listed here whole.
_BOTOCORE_GARBLED = frozenset({"ChecksumMismatch", "InvalidHeadersLength",
                               "InvalidPayloadLength", "ResponseParserError"})

_MESSAGE_LIMIT = 500

# Anthropic reports a prompt over the model's window only as the text of a 400
# ("prompt is too long: 215000 tokens > 200000 maximum"), and so do OpenAI-compatible
# servers that send no code (vLLM, llama.cpp: "maximum context length is 8192 tokens"),
# Gemini ("The input token count (N) exceeds the maximum number of tokens allowed") and
# Bedrock (a ValidationException "Input is too long for requested model"). Reading text
# is a last resort, kept to this one place: a run recovers from a context-length error
# by compacting its history, so it has to be told apart.
_TOO_LONG = re.compile(
    r"prompt is too long|maximum context length|context length exceeded|"
    r"input is too long|exceeds the maximum number of tokens",
    re.IGNORECASE,
)


def _context_length(kind: str, message: str) -> str:
    """``kind``, or ``"context_length"`` when a refused request says it was too long."""
    if kind in ("bad_request", "request_too_large", "error") and _TOO_LONG.search(message):
        return "context_length"
    return kind


class MalformedReply(Exception):
    """A reply that is not what the API promises; ``problem`` says what and where."""

    def __init__(self, problem: str, *, transient: bool = False) -> None:
        self.problem = problem
        self.transient = transient
        super().__init__(problem)


class ErrorReply(Exception):
    """An error object the provider sent in place of an answer."""

    def __init__(self, error: Mapping[str, Any]) -> None:
        self.error = error
        super().__init__(error.get("message"))


class StreamTruncated(Exception):
    """A stream that ended ``how`` (e.g. "before message_stop"), ``delivered`` deltas in."""

    def __init__(self, how: str, delivered: int) -> None:
        self.how = how
        self.delivered = delivered
        super().__init__(how)


def missing_extra(provider: str, package: str) -> ImportError:
    """The error for a provider whose SDK is not installed."""
    return ImportError(
        f"the {provider} provider needs the {package!r} package: "
        f'pip install "agentkit-framework[{package}]"'
    )


class ProviderCall:
    """One request to ``provider``: every failure inside ``with`` leaves as a ProviderError.

    Set :attr:`request_id` with :meth:`answered` as soon as the reply's headers are in.
    Exceptions that are neither a reply fact nor the SDK's or HTTP client's (a bug)
    pass through unchanged.
    """

    __slots__ = ("_id_header", "provider", "request_id")

    def __init__(self, provider: str, id_header: str) -> None:
        self.provider = provider
        self.request_id: str | None = None
        self._id_header = id_header

    def answered(self, headers: Mapping[str, str]) -> None:
        """Note the request id from the reply's headers."""
        self.request_id = headers.get(self._id_header) or None

    def __enter__(self) -> ProviderCall:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if not isinstance(error, Exception) or isinstance(error, ProviderError):
            return
        classified = self.classify(error)
        if classified is not None:
            raise classified from error

    def classify(self, error: Exception) -> ProviderError | None:
        """``error`` as a ProviderError, or None when it is no provider failure at all."""
        if isinstance(error, MalformedReply):
            return self._error(f"malformed reply: {error.problem}", error.transient,
                               "malformed_reply")
        if isinstance(error, ErrorReply):
            return _from_error_object(error.error, self.provider, self.request_id)
        if isinstance(error, StreamTruncated):
            # Nothing delivered: a fresh request is as good as new. Once deltas went out,
            # a repeat would deliver them twice.
            return self._error(
                f"the stream ended {error.how}, after {error.delivered} delta(s): the answer "
                "is incomplete", error.delivered == 0, "stream_truncated",
            )
        return as_provider_error(error, self.provider, self.request_id)

    def _error(self, text: str, transient: bool, kind: str) -> ProviderError:
        return ProviderError(
            _with_id(f"{self.provider}: {text}", self.request_id),
            provider=self.provider, transient=transient, kind=kind, request_id=self.request_id,
        )


def _with_id(message: str, request_id: str | None) -> str:
    return f"{message}; request id {request_id}" if request_id else message


def _bounded(text: str) -> str:
    return text if len(text) <= _MESSAGE_LIMIT else text[:_MESSAGE_LIMIT] + "..."


def _from_error_object(
    error: Mapping[str, Any], provider: str, request_id: str | None
) -> ProviderError:
    names = [n for n in (error.get("code"), error.get("type")) if isinstance(n, str) and n]
    kind, transient = next(
        (_ERROR_TYPES[n] for n in names if n in _ERROR_TYPES), ("error", False)
    )
    label = names[0] if names else "error"
    message = error.get("message")
    text = _bounded(message) if isinstance(message, str) else "(no message)"
    kind = _context_length(kind, text)
    return ProviderError(
        _with_id(f"{provider}: {label}: {text}", request_id),
        provider=provider, transient=transient, kind=kind, request_id=request_id,
    )


def as_provider_error(
    error: Exception, provider: str, request_id: str | None = None
) -> ProviderError | None:
    """``error`` from a provider SDK or its HTTP client as a :class:`ProviderError`,
    keeping the provider's message; None when it is neither (a bug to surface as it is).

    Both official SDKs share the shape: ``APIStatusError`` with ``status_code``,
    ``APITimeoutError`` and ``APIConnectionError``; reading a streamed body raises the
    HTTP client's own ``TimeoutException`` and ``TransportError``.
    """
    names = {cls.__name__ for cls in type(error).__mro__}
    if "BotoCoreError" in names or "ClientError" in names or names & _BOTOCORE_GARBLED:
        return _from_botocore(error, names, provider, request_id)
    status = getattr(error, "status_code", None)
    message = _bounded(_body_message(getattr(error, "body", None))
                       or getattr(error, "message", None) or str(error))
    request_id = getattr(error, "request_id", None) or request_id
    if names & {"APITimeoutError", "TimeoutException"}:
        return ProviderError(
            _with_id(f"{provider}: request timed out: {message}", request_id),
            provider=provider, transient=True, kind="timeout", request_id=request_id,
        )
    if names & {"APIConnectionError", "TransportError"}:
        return ProviderError(
            _with_id(f"{provider}: connection failed: {message}", request_id),
            provider=provider, transient=True, kind="connection", request_id=request_id,
        )
    if "DecodingError" in names:  # a body the transfer or content encoding garbled
        return ProviderError(
            _with_id(f"{provider}: malformed reply: {message}", request_id),
            provider=provider, transient=True, kind="malformed_reply", request_id=request_id,
        )
    if isinstance(status, int):
        code = getattr(error, "code", None)  # OpenAI's: a 429 may be an empty account
        response = getattr(error, "response", None)
        return status_error(
            provider, status, message, request_id=request_id,
            code=code if isinstance(code, str) else None,
            retry_after=retry_after(getattr(response, "headers", None) or {}),
        )
    if "APIError" in names or "AnthropicError" in names or "OpenAIError" in names:
        return ProviderError(
            _with_id(f"{provider}: {message}", request_id),
            provider=provider, transient=False, kind="error", request_id=request_id,
        )
    return None


def _body_message(body: object) -> str | None:
    """The provider's own words from an error body (``{"error": {"message": ...,
    "type": ...}}``, Anthropic's and OpenAI's envelope), so that a message says the
    same whichever version of the SDK raised it; None for any other body."""
    error = body.get("error") if isinstance(body, Mapping) else None
    if isinstance(error, Mapping):
        body = error
    if not isinstance(body, Mapping) or not isinstance(body.get("message"), str):
        return None
    kind = body.get("type") or body.get("code")
    return f"{body['message']} ({kind})" if isinstance(kind, str) and kind else body["message"]


def status_error(
    provider: str,
    status: int,
    message: str,
    *,
    request_id: str | None = None,
    code: str | None = None,
    retry_after: float | None = None,
) -> ProviderError:
    """An HTTP error status as a :class:`ProviderError`: its kind and whether it is
    transient from the status (or from an error ``code`` this module knows), the
    provider's ``message`` kept."""
    kind = _KINDS.get(status, "server_error" if status >= 500 else "error")
    transient = status in _TRANSIENT_STATUS or status >= 500
    if code is not None and code in _ERROR_TYPES:
        kind, transient = _ERROR_TYPES[code]
    kind = _context_length(kind, message)
    return ProviderError(
        _with_id(f"{provider}: HTTP {status} ({kind}): {_bounded(message)}", request_id),
        provider=provider,
        transient=transient,
        status=status,
        kind=kind,
        request_id=request_id,
        retry_after=retry_after,
    )


def _from_botocore(
    error: Exception, names: set[str], provider: str, request_id: str | None
) -> ProviderError:
    """botocore's failures: ``ClientError`` carries the service's exception name and
    message (``EventStreamError``, its subclass, one sent in the middle of a stream,
    named in lower camel case); the rest are the SDK's own."""
    response = getattr(error, "response", None)
    if "ClientError" in names and isinstance(response, dict):
        detail = response.get("Error") or {}
        metadata = response.get("ResponseMetadata") or {}
        code = str(detail.get("Code") or "")
        code = code[:1].upper() + code[1:]
        status = metadata.get("HTTPStatusCode")
        status = status if isinstance(status, int) and status != 200 else None
        request_id = metadata.get("RequestId") or request_id
        kind, transient = _ERROR_TYPES.get(code) or (
            _KINDS.get(status or 0, "server_error" if (status or 0) >= 500 else "error"),
            status in _TRANSIENT_STATUS or (status or 0) >= 500,
        )
        message = _bounded(str(detail.get("Message") or "(no message)"))
        kind = _context_length(kind, message)
        return ProviderError(
            _with_id(f"{provider}: {code or 'error'}: {message}", request_id),
            provider=provider, transient=transient, status=status, kind=kind,
            request_id=request_id,
            retry_after=retry_after(metadata.get("HTTPHeaders") or {}),
        )
    message = _bounded(str(error))
    if names & _BOTOCORE_TIMEOUTS:
        kind, transient, text = "timeout", True, f"request timed out: {message}"
    elif names & _BOTOCORE_CONNECTION:
        kind, transient, text = "connection", True, f"connection failed: {message}"
    elif names & _BOTOCORE_GARBLED:
        kind, transient, text = "malformed_reply", True, f"malformed reply: {message}"
    elif names & {"NoCredentialsError", "PartialCredentialsError"}:
        kind, transient, text = "authentication", False, (
            f"{message}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE"
        )
    elif "ParamValidationError" in names:
        kind, transient, text = "bad_request", False, message
    else:
        kind, transient, text = "error", False, message
    return ProviderError(_with_id(f"{provider}: {text}", request_id), provider=provider,
                         transient=transient, kind=kind, request_id=request_id)


def retry_after(headers: Mapping[str, str]) -> float | None:
    """The wait in seconds a reply asks for: ``retry-after-ms``, else ``Retry-After`` as
    seconds or an HTTP date; None when there is none or it cannot be read."""
    millis = _number(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    value = headers.get("retry-after")
    if not value:
        return None
    seconds = _number(value)
    if seconds is not None:
        return seconds
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # an HTTP date is GMT even when it does not say so
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _number(text: str | None) -> float | None:
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None
