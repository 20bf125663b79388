"""make_test_ctx: a RunContext for tests, with in-memory services and no middleware."""

from __future__ import annotations

from collections.abc import Sequence

from agentkit.core.assembly import make_ctx
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
from agentkit.core.runtime.context import DEFAULT_MAX_DEPTH, RunContext
from agentkit.core.testing.fake_llm import FakeLLM

__all__ = ["make_test_ctx"]


def make_test_ctx(
    llm: LLM | None = None,
    *,
    store: Store | None = None,
    scope: Scope | None = None,
    tool_middleware: Sequence[ToolMiddleware] = (),
    chat_middleware: Sequence[ChatMiddleware] = (),
    autonomy: Autonomy | str = Autonomy.AUTO,
    correlation_id: str | None = None,
    budget: BudgetLedger | None = None,
    checkpointer: Checkpointer | None = None,
    tracer: Tracer | None = None,
    observer: Observer | None = None,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> RunContext:
    """A context for tests: the chains hold exactly the middleware you pass (none by
    default), the store is a fresh :class:`InMemoryStore`, the model a strict
    :class:`FakeLLM`, the scope ``org0:dom0``."""
    return make_ctx(
        llm if llm is not None else FakeLLM(),
        store=store,
        scope=scope,
        autonomy=autonomy,
        tool_middleware=tool_middleware,
        chat_middleware=chat_middleware,
        correlation_id=correlation_id,
        budget=budget,
        checkpointer=checkpointer,
        tracer=tracer,
        observer=observer,
        max_depth=max_depth,
    )
