"""Assembling a RunContext from services: the production constructor."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib import import_module

from agentkit.core.contracts.ports import (
    LLM,
    BudgetLedger,
    ChatMiddleware,
    Checkpointer,
    Observer,
    Store,
    ToolMiddleware,
    Tracer,
)
from agentkit.core.contracts.types import Autonomy, Scope
from agentkit.core.policies.chains import default_chat_chain, default_tool_chain
from agentkit.core.runtime.context import DEFAULT_MAX_DEPTH, RunContext, new_run_id
from agentkit.core.runtime.invoker import Invoker
from agentkit.core.stores.memory import InMemoryStore

__all__ = ["make_ctx"]


# The providers layer sits above this one, so the router that serves several providers
# is found by its module's name when a context needs one (docs/architecture.md).
_ROUTER_HOME = "agentkit.providers.routing"

_DEFAULT_SCOPE = Scope(org_id=0, domain_id=0)  # a frozen value: one for every context


def make_ctx(
    llm: LLM | None = None,
    *,
    providers: Mapping[str, LLM] | None = None,
    store: Store | None = None,
    scope: Scope | None = None,
    autonomy: Autonomy | str = Autonomy.AUTO,
    tool_middleware: Sequence[ToolMiddleware] | None = None,
    chat_middleware: Sequence[ChatMiddleware] | None = None,
    correlation_id: str | None = None,
    budget: BudgetLedger | None = None,
    checkpointer: Checkpointer | None = None,
    tracer: Tracer | None = None,
    observer: Observer | None = None,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> RunContext:
    """Build the context for a production run from real services.

    ``llm`` is the one model provider every agent of the context calls. For several,
    give ``providers={"google": GeminiLLM(...), "anthropic": AnthropicLLM(...)}``, or
    nothing: each agent's model spec (``google:gemini-2.5-flash``) then picks its
    provider, and a provider not given is built from the spec and the environment when
    an agent first names it (see :func:`agentkit.providers.routing.route_models`). A
    spec the context cannot serve fails when its agent's run starts.

    Without ``tool_middleware`` / ``chat_middleware`` the chains are
    :func:`~agentkit.core.policies.default_tool_chain` and
    :func:`~agentkit.core.policies.default_chat_chain`. The default store lives in
    memory; pass a durable store to make runs survive a restart. A
    :class:`~agentkit.core.policies.Budget` with ``max_depth`` also bounds nesting.
    """
    if llm is None:
        llm = import_module(_ROUTER_HOME).route_models(providers)
    elif providers is not None:
        raise TypeError(
            "make_ctx: pass one llm, or providers={...} for several, not both; with "
            "providers= an agent picks its provider by its model spec (google:gemini-2.5-flash)"
        )
    return RunContext(
        llm=llm,
        store=store if store is not None else InMemoryStore(),
        invoker=Invoker(
            tool_middleware=default_tool_chain() if tool_middleware is None else tool_middleware,
            chat_middleware=default_chat_chain() if chat_middleware is None else chat_middleware,
        ),
        scope=scope if scope is not None else _DEFAULT_SCOPE,
        correlation_id=correlation_id or new_run_id(),
        autonomy=autonomy,
        budget=budget,
        checkpointer=checkpointer,
        tracer=tracer,
        observer=observer,
        # Read leniently: an untyped caller's budget may be any object.
        max_depth=getattr(budget, "max_depth", None) or max_depth,
    )
