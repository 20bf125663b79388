"""What both OpenAI providers share: the SDK client, credentials and the prompt-cache key."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentkit.core.contracts.errors import ProviderError
from agentkit.core.contracts.types import ChatRequest
from agentkit.providers._errors import missing_extra
from agentkit.providers._sdk import SdkClients, client_options

if TYPE_CHECKING:
    from agentkit.core.contracts.ports import Context

__all__ = ["CacheKey", "OpenAIConnection", "default_cache_key"]


# What a server that needs no key (Ollama, vLLM, llama.cpp) is sent: the SDK insists on
# some key, and these servers ignore the Authorization header.
_NO_KEY = "no-key"


def _api_key(api_key: str | None, base_url: str | None, owner: str) -> str | None:
    """The key to give the SDK: ``api_key``, else ``OPENAI_API_KEY`` (None lets the SDK
    read it), else a placeholder when a server address is set; with neither a key nor an
    address, the same one-line error as the Anthropic provider."""
    if api_key is not None or os.environ.get("OPENAI_API_KEY"):
        return api_key
    if base_url is not None or os.environ.get("OPENAI_BASE_URL"):
        return _NO_KEY
    raise ProviderError(
        f"openai: no credentials: set OPENAI_API_KEY or pass {owner}(api_key=...) (a "
        "local OpenAI-compatible server needs only its address: openai:MODEL@http://HOST/v1)",
        provider="openai",
        transient=False,
        kind="authentication",
    )


_OPENAI_HOSTS = ("api.openai.com",)
"""Where ``prompt_cache_key="auto"`` sends a key: servers known to accept the field."""

CacheKey = str | Callable[[ChatRequest, "Context"], str | None] | None
"""``OpenAILLM(prompt_cache_key=...)``: ``"auto"``, a fixed key, a function of the request
and context, or None."""


def default_cache_key(request: ChatRequest, ctx: Context) -> str | None:
    """The ``prompt_cache_key`` for ``request``: one per agent and scope, so that every
    run of an agent for one tenant shares the cache of its tools and instructions. None
    for a request no agent made. The names are hashed: the key names no one."""
    if not request.agent:
        return None
    digest = hashlib.sha256(f"{request.agent}\0{ctx.scope.key()}".encode()).hexdigest()
    return f"agentkit-{digest[:32]}"


class OpenAIConnection:
    """The SDK client a provider talks through, built from its keywords (``owner`` names
    the provider class in error messages), and where its prompt-cache key comes from."""

    __slots__ = ("client", "clients", "openai_itself", "prompt_cache_key")

    def __init__(
        self,
        owner: str,
        *,
        api_key: str | None,
        base_url: str | None,
        timeout: float | None,
        max_retries: int | None,
        client: Any,
        prompt_cache_key: CacheKey,
    ) -> None:
        if not (prompt_cache_key is None or isinstance(prompt_cache_key, str)
                or callable(prompt_cache_key)):
            raise TypeError(
                f"{owner}(prompt_cache_key=...) takes 'auto', a key string, a function "
                f"(request, ctx) -> str | None, or None; got {prompt_cache_key!r}"
            )
        self.prompt_cache_key = prompt_cache_key
        if client is None:
            try:
                import openai
            except ImportError:
                raise missing_extra("OpenAI", "openai") from None
            options = client_options(
                _api_key(api_key, base_url, owner), base_url, timeout, max_retries
            )
            client = openai.AsyncOpenAI(**options)
            self.clients = SdkClients(client, retries_chosen=max_retries is not None)
        else:
            self.clients = SdkClients(client, retries_chosen=True)
        self.client = client
        host = getattr(getattr(client, "base_url", None), "host", None)
        self.openai_itself = host in _OPENAI_HOSTS

    def cache_key(self, request: ChatRequest, ctx: Context) -> str | None:
        """The ``prompt_cache_key`` to send with ``request``, if any."""
        chosen = self.prompt_cache_key
        if chosen == "auto":
            return default_cache_key(request, ctx) if self.openai_itself else None
        if chosen is None or isinstance(chosen, str):
            return chosen
        return chosen(request, ctx)
