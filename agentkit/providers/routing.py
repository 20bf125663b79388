"""route_models: one LLM over several providers, each request sent to the provider its
model spec names.

A context made with ``make_ctx(providers=...)`` or ``make_ctx()`` holds one of these as
its ``llm``, so every provider sits under the context's one chat middleware chain
(tracing, meter, retry) and nothing above the chain knows there are several. A spec's
``PROVIDER:`` prefix (``google:gemini-2.5-flash``) picks the provider: one given under
that name, else one built by :func:`~agentkit.providers.llm_for` from the spec and the
environment on first use and kept for the context's life. A bare model id
(``claude-sonnet-4-6``) goes to the one provider when the context was given exactly one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING

from agentkit.core.contracts.errors import UnservedModel
from agentkit.core.contracts.ports import LLM, Context, ModelRouter
from agentkit.core.contracts.types import ChatRequest, LLMResult, StreamEvent
from agentkit.providers.factory import llm_for
from agentkit.providers.spec import _PROVIDERS, parse_model_spec

if TYPE_CHECKING:
    pass

__all__ = ["route_models"]


def route_models(providers: Mapping[str, LLM] | None = None) -> ModelRouter:
    """An LLM that sends each request to the provider its model spec names.

    ``providers`` maps provider names (the ``PROVIDER`` of ``PROVIDER:MODEL``:
    ``anthropic``, ``openai``, ``openai-chat``, ``google``, ``vertex``, ``bedrock``) to
    built providers; any other provider a spec names is built from the spec and the
    environment when an agent first names it. A name that is no provider is a
    ``ValueError`` here.
    """
    given = dict(providers or {})
    for name, llm in given.items():
        if name not in _PROVIDERS:
            raise ValueError(
                f"make_ctx(providers=...): {name!r} is no provider name; accepted: "
                f"{list(_PROVIDERS)} (the PROVIDER of a PROVIDER:MODEL spec)"
            )
        if not callable(getattr(llm, "chat", None)) or not callable(getattr(llm, "stream", None)):
            raise TypeError(
                f"make_ctx(providers=...): {name!r} is {llm!r}, which is no LLM; a provider "
                "has chat(request, ctx) and stream(request, ctx)"
            )
    return _Router(given)


class _Router:
    __slots__ = ("_default", "_llms")

    def __init__(self, given: dict[str, LLM]) -> None:
        # Keyed by provider name, or "name@base_url" for a spec that names a server.
        self._llms = given
        self._default = next(iter(given.values())) if len(given) == 1 else None

    @property
    def cache_ttl(self) -> str:
        """The longest cache lifetime any held provider writes, so the meter's estimate
        of a call never falls short (see ``meter()``)."""
        held = (getattr(llm, "cache_ttl", "5m") for llm in self._llms.values())
        return "1h" if "1h" in held else "5m"

    def llm_for_model(self, model: str, ctx: Context) -> LLM:
        """The provider that serves ``model``, built from its spec on first use."""
        prefix, colon, _ = model.partition(":")
        if not colon or prefix not in _PROVIDERS:
            # No provider prefix: a Bedrock id's own colon comes after a dot.
            if self._default is not None:
                return self._default
            raise UnservedModel(model, self._unnamed(model), available=self._held(),
                                run_id=ctx.correlation_id)
        spec = parse_model_spec(model)
        key = spec.provider if spec.base_url is None else f"{spec.provider}@{spec.base_url}"
        llm = self._llms.get(key)
        if llm is None:
            # Built now, with no await between the look-up and the store, so concurrent
            # first calls on one loop build it once.
            llm = self._llms[key] = llm_for(model)
        return llm

    async def chat(self, request: ChatRequest, ctx: Context) -> LLMResult:
        return await self.llm_for_model(request.model, ctx).chat(request, ctx)

    def stream(self, request: ChatRequest, ctx: Context) -> AsyncIterator[StreamEvent]:
        return self.llm_for_model(request.model, ctx).stream(request, ctx)

    def _held(self) -> tuple[str, ...]:
        return tuple(sorted(self._llms))

    def _unnamed(self, model: str) -> str:
        held = list(self._held())
        holds = ("builds providers from model specs" if not held
                 else f"holds several ({held})" if len(held) > 1 else f"holds {held}")
        return (f"names no provider, and this context {holds}; write the agent's model as "
                f"PROVIDER:MODEL, e.g. '{_guess(model)}:{model}'")

    def __repr__(self) -> str:
        return f"route_models(providers={self._held()})"


def _guess(model: str) -> str:
    """The provider a bare model id most likely belongs to, for the error's example."""
    for family, provider in (("claude", "anthropic"), ("gemini", "google"), ("gpt", "openai"),
                             ("o1", "openai"), ("o3", "openai"), ("o4", "openai")):
        if model.startswith(family):
            return provider
    return "PROVIDER"
