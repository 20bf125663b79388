"""The seams: small Protocols that backends, tools and middlewares implement.

The runtime and the agent loop only ever talk to these; concrete backends are adapters.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from agentkit.core.contracts.types import Tool, ToolContext

if TYPE_CHECKING:
    from agentkit.core.contracts.runs import RunPage, RunQuery, RunRecord
    from agentkit.core.contracts.types import (
        ChatRequest,
        LLMResult,
        StreamEvent,
        ToolRequest,
    )

__all__ = [
    "LLM",
    "BudgetLedger",
    "Cancellation",
    "ChatHandler",
    "ChatMiddleware",
    "Checkpointer",
    "Context",
    "ModelRouter",
    "Observer",
    "Span",
    "Store",
    "Tool",
    "ToolContext",
    "ToolHandler",
    "ToolInvoker",
    "ToolMiddleware",
    "Tracer",
]


class LLM(Protocol):
    """A chat model: one request value in, one result value out."""

    async def chat(self, request: ChatRequest, ctx: Context) -> LLMResult:
        """Answer one request."""
        ...

    def stream(self, request: ChatRequest, ctx: Context) -> AsyncIterator[StreamEvent]:
        """Answer one request as deltas, ending with the complete :class:`LLMResult`."""
        ...


class ModelRouter(LLM, Protocol):
    """An LLM over several providers that picks one per request by its model spec
    (``google:gemini-2.5-flash``); what ``make_ctx(providers=...)`` and ``make_ctx()``
    put in the context. An agent asks it for its model before its run starts."""

    def llm_for_model(self, model: str, ctx: Context) -> LLM:
        """The provider that serves ``model``, built now if it was not yet.

        Raises :class:`~agentkit.core.contracts.errors.UnservedModel` when the context
        can serve no provider for it, or the provider's
        :class:`~agentkit.core.contracts.errors.ProviderError` when building it fails
        (missing credentials)."""
        ...


class Store(Protocol):
    """Key-value state with single-flight claims, append-only logs and the run registry.

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

    async def put_run(self, record: RunRecord) -> None:
        """Write the registry record of a top-level run, replacing the one before
        (whose ``created`` is kept)."""
        ...

    async def get_run(self, run_id: str) -> RunRecord | None:
        """The registry record of ``run_id``, or None for a run never registered."""
        ...

    async def list_runs(self, query: RunQuery) -> RunPage:
        """One page of registered runs matching ``query``, newest first, from an index."""
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


ToolHandler = Callable[["ToolRequest", "Context"], Awaitable[Any]]
"""The rest of the tool chain, as seen by a middleware."""

ToolMiddleware = Callable[["ToolRequest", "Context", ToolHandler], Awaitable[Any]]
"""``async def mw(request, ctx, call_next)``: may observe, short-circuit or re-invoke."""

ChatHandler = Callable[["ChatRequest", "Context"], Awaitable["LLMResult"]]
"""The rest of the chat chain, as seen by a middleware."""

ChatMiddleware = Callable[["ChatRequest", "Context", ChatHandler], Awaitable["LLMResult"]]
"""``async def mw(request, ctx, call_next)`` around a model call."""


class Cancellation(Protocol):
    """A run's cancellation flag (:class:`~agentkit.core.runtime.CancelToken`), shared by
    the run and every nested run."""

    def cancel(self, reason: str = "cancelled") -> None:
        """Ask the run to stop at its next safe point; the first reason wins."""
        ...

    @property
    def cancelled(self) -> bool:
        """True once the run was asked to stop."""
        ...

    @property
    def reason(self) -> str | None:
        """Why the run was cancelled, if it was."""
        ...


class ToolInvoker(Protocol):
    """The two middleware chains a context calls through
    (:class:`~agentkit.core.runtime.Invoker`)."""

    @property
    def tool_middleware(self) -> tuple[ToolMiddleware, ...]:
        """The tool chain, outermost first."""
        ...

    @property
    def chat_middleware(self) -> tuple[ChatMiddleware, ...]:
        """The chat chain, outermost first."""
        ...

    async def invoke_tool(self, request: ToolRequest, ctx: Context) -> Any:
        """Run ``request`` through the tool chain; a call that waits for a person raises."""
        ...

    def invoke_tool_or_wait(self, request: ToolRequest, ctx: Context) -> Awaitable[Any]:
        """Run ``request`` through the tool chain; a call that waits for a person returns
        its ``Waiting`` value (an awaitable)."""
        ...

    def chat(self, request: ChatRequest, ctx: Context) -> Awaitable[LLMResult]:
        """Run ``request`` through the chat chain to the model (an awaitable)."""
        ...

    def stream(self, request: ChatRequest, ctx: Context) -> AsyncIterator[StreamEvent]:
        """Stream ``request`` through the chat chain."""
        ...


class Context(ToolContext, Protocol):
    """What the seams are given of a run: its identity and policy, and the services it
    calls. :class:`~agentkit.core.runtime.RunContext` is the one implementation; the seams
    name this Protocol so that they need not import the runtime that calls them."""

    llm: LLM
    """The run's model."""
    store: Store
    """Where the run keeps its state."""
    budget: BudgetLedger | None
    """The run's budget, shared with its nested runs."""
    checkpointer: Checkpointer | None
    """Saves the run's state after every step."""
    tracer: Tracer | None
    """Starts the run's spans."""
    observer: Observer | None
    """Receives what the run emits."""
    max_depth: int
    """How deep runs may nest."""

    @property
    def invoker(self) -> ToolInvoker:
        """The middleware chains tools and model calls go through."""
        ...

    @property
    def cancel(self) -> Cancellation:
        """The run's cancellation flag."""
        ...

    @property
    def run_id(self) -> str:
        """The run's id; the same as ``correlation_id``."""
        ...

    def child(self) -> Context:
        """A context for a nested run one level deeper."""
        ...
