"""The seams: small Protocols that backends, tools and middlewares implement.

The runtime and the agent loop only ever talk to these; concrete backends are adapters.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from agentkit.core.contracts.types import (
        ChatRequest,
        LLMResult,
        StreamEvent,
        ToolRequest,
        ToolSchema,
    )
    from agentkit.core.runtime.context import RunContext

__all__ = [
    "LLM",
    "BudgetLedger",
    "ChatHandler",
    "ChatMiddleware",
    "Checkpointer",
    "ModelRouter",
    "Observer",
    "Span",
    "Store",
    "Tool",
    "ToolHandler",
    "ToolMiddleware",
    "Tracer",
]


@runtime_checkable
class Tool(Protocol):
    """Anything with these attributes and ``async def run(args, ctx)`` is a tool."""

    name: str
    description: str
    schema: ToolSchema | None
    output_schema: Any
    side_effecting: bool
    requires_approval: bool

    async def run(self, args: Mapping[str, Any], ctx: RunContext | None) -> Any:
        """Execute the tool with the model's (frozen) arguments."""
        ...


class LLM(Protocol):
    """A chat model: one request value in, one result value out."""

    async def chat(self, request: ChatRequest, ctx: RunContext) -> LLMResult:
        """Answer one request."""
        ...

    def stream(self, request: ChatRequest, ctx: RunContext) -> AsyncIterator[StreamEvent]:
        """Answer one request as deltas, ending with the complete :class:`LLMResult`."""
        ...


class ModelRouter(LLM, Protocol):
    """An LLM over several providers that picks one per request by its model spec
    (``google:gemini-2.5-flash``); what ``make_ctx(providers=...)`` and ``make_ctx()``
    put in the context. An agent asks it for its model before its run starts."""

    def llm_for_model(self, model: str, ctx: RunContext) -> LLM:
        """The provider that serves ``model``, built now if it was not yet.

        Raises :class:`~agentkit.core.contracts.errors.UnservedModel` when the context
        can serve no provider for it, or the provider's
        :class:`~agentkit.core.contracts.errors.ProviderError` when building it fails
        (missing credentials)."""
        ...


class Store(Protocol):
    """Key-value state with single-flight claims and append-only logs.

    ``get_or_set`` is the one atomic primitive idempotency needs: concurrent callers
    with the same key run ``factory`` once; a factory that raises stores nothing.
    """

    async def get(self, key: str) -> Any | None:
        """The value under ``key``, or None when absent or expired."""
        ...

    async def set(self, key: str, value: Any, *, ttl: float | None = None) -> None:
        """Store ``value``; with ``ttl`` seconds it expires."""
        ...

    async def get_or_set(
        self,
        key: str,
        factory: Callable[[], Awaitable[Any]],
        *,
        ttl: float | None = None,
    ) -> tuple[Any, bool]:
        """Return ``(value, created)``: the stored value, or ``factory()``'s once stored."""
        ...

    async def delete(self, key: str) -> bool:
        """Remove ``key``; True when something was there."""
        ...

    async def append(self, log: str, value: Any) -> None:
        """Append ``value`` to the log named ``log``."""
        ...

    async def get_versioned(self, key: str) -> tuple[Any, int]:
        """``(value, version)`` under ``key``; ``(None, 0)`` when nothing was ever written."""
        ...

    async def get_versioned_many(self, keys: Sequence[str]) -> tuple[tuple[Any, int], ...]:
        """``get_versioned`` of each of ``keys``, in their order, in one round trip."""
        ...

    async def set_versioned(self, key: str, value: Any, *, expected_version: int) -> int:
        """Write ``value`` only if the current version is ``expected_version``.

        Returns the new version; raises :class:`VersionConflict` when another writer
        got there first. This is how one run keeps one writer across workers.
        """
        ...

    async def list(self, log: str) -> tuple[Any, ...]:
        """Every value appended to ``log``, oldest first."""
        ...


class Checkpointer(Protocol):
    """Saves a run's state after every step, one writer per run.

    ``save`` is a compare-and-set on the version: a worker that lost the run to another
    gets :class:`VersionConflict` on its next save and must stop.
    """

    async def load(self, key: str) -> tuple[Any, int]:
        """``(state, version)``; ``(None, 0)`` when the run was never saved."""
        ...

    async def save(self, key: str, state: Any, *, expected_version: int) -> int:
        """Write ``state`` over version ``expected_version``; returns the new version."""
        ...


class BudgetLedger(Protocol):
    """A run's budget as ``meter()`` uses it (:class:`~agentkit.core.policies.Budget` is
    the one agentkit ships): admit a call before it runs, release it after.

    One ledger is shared by a run and its nested runs, so an admission must check and
    reserve without awaiting in between.
    """

    @property
    def max_cost_usd(self) -> float | None:
        """The money ceiling, or None without one (an unpriced model is refused under one)."""
        ...

    @property
    def max_depth(self) -> int | None:
        """How deep runs may nest, or None to leave it to the context."""
        ...

    def admit(self, what: str, *, estimate_usd: float = 0.0, depth: int = 0) -> int:
        """Admit one call (``what`` names it in the error) or raise ``BudgetExceeded``;
        returns the reservation to hand back to :meth:`release`."""
        ...

    def release(self, reservation: int, *, cost_usd: float = 0.0) -> None:
        """Finish an admitted call: drop its reservation and charge what it cost."""
        ...


class Span(Protocol):
    """An open trace span."""

    def set_attribute(self, key: str, value: Any) -> None:
        """Attach one attribute."""
        ...

    def add_event(self, name: str, attributes: Mapping[str, Any] | None = None) -> None:
        """Record a point-in-time event on the span."""
        ...

    def record_error(self, error: BaseException) -> None:
        """Mark the span failed with ``error``."""
        ...

    def end(self) -> None:
        """Close the span."""
        ...


class Tracer(Protocol):
    """Starts spans; the current span is tracked by the runtime, not the tracer."""

    def start_span(
        self,
        name: str,
        attributes: Mapping[str, Any] | None = None,
        parent: Span | None = None,
    ) -> Span:
        """Open a span named ``name`` as a child of ``parent``."""
        ...


class Observer(Protocol):
    """Receives observations a run emits (``ctx.emit``); must not be relied on to raise."""

    def __call__(self, kind: str, data: Mapping[str, Any]) -> None:
        """Take one observation."""
        ...


ToolHandler = Callable[["ToolRequest", "RunContext"], Awaitable[Any]]
"""The rest of the tool chain, as seen by a middleware."""

ToolMiddleware = Callable[["ToolRequest", "RunContext", ToolHandler], Awaitable[Any]]
"""``async def mw(request, ctx, call_next)``: may observe, short-circuit or re-invoke."""

ChatHandler = Callable[["ChatRequest", "RunContext"], Awaitable["LLMResult"]]
"""The rest of the chat chain, as seen by a middleware."""

ChatMiddleware = Callable[["ChatRequest", "RunContext", ChatHandler], Awaitable["LLMResult"]]
"""``async def mw(request, ctx, call_next)`` around a model call."""
