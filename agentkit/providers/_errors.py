"""Provider SDK failures as ProviderError, transient or permanent, by type and status."""

from __future__ import annotations

from agentkit.core.contracts.errors import ProviderError

__all__ = ["as_provider_error", "missing_extra"]

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


def missing_extra(provider: str, package: str) -> ImportError:
    """The error for a provider whose SDK is not installed."""
    return ImportError(
        f"the {provider} provider needs the {package!r} package: "
        f'pip install "agentkit-framework[{package}]"'
    )


def as_provider_error(error: Exception, provider: str) -> ProviderError | None:
    """``error`` from a provider SDK as a :class:`ProviderError`, keeping the provider's
    message; None when it is not an SDK error at all (a bug to surface as it is).

    Both official SDKs share the shape: ``APIStatusError`` with ``status_code``,
    ``APITimeoutError`` and ``APIConnectionError``.
    """
    names = {cls.__name__ for cls in type(error).__mro__}
    status = getattr(error, "status_code", None)
    message = getattr(error, "message", None) or str(error)
    if "APITimeoutError" in names:
        return ProviderError(
            f"{provider}: request timed out: {message}",
            provider=provider, transient=True, kind="timeout",
        )
    if "APIConnectionError" in names:
        return ProviderError(
            f"{provider}: connection failed: {message}",
            provider=provider, transient=True, kind="connection",
        )
    if isinstance(status, int):
        kind = _KINDS.get(status, "server_error" if status >= 500 else "error")
        if getattr(error, "code", None) == "context_length_exceeded":  # OpenAI's error code
            kind = "context_length"
        return ProviderError(
            f"{provider}: HTTP {status} ({kind}): {message}",
            provider=provider,
            transient=status in _TRANSIENT_STATUS or status >= 500,
            status=status,
            kind=kind,
        )
    if "APIError" in names or "AnthropicError" in names or "OpenAIError" in names:
        return ProviderError(
            f"{provider}: {message}", provider=provider, transient=False, kind="error"
        )
    return None
