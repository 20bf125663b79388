"""RunContext: what one run carries through every layer, and how to build one."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

from agentkit.core.contracts.errors import DepthLimitExceeded, RunCancelled
from agentkit.core.contracts.ports import LLM, BudgetLedger, Checkpointer, Observer, Store, Tracer
from agentkit.core.contracts.types import Autonomy, Scope
from agentkit.core.runtime.invoker import Invoker
from agentkit.core.runtime.reporting import LOG_LEVELS, report_log, report_progress

_log = logging.getLogger("agentkit.runtime")

DEFAULT_MAX_DEPTH = 8
"""How deep agents may nest (an agent calling an agent as a tool) before ``child()`` refuses."""


class CancelToken:
    """A run's cancellation flag, shared by the run and every nested run."""

    __slots__ = ("_reason",)

    def __init__(self) -> None:
        self._reason: str | None = None

    def cancel(self, reason: str = "cancelled") -> None:
        """Ask the run to stop at its next safe point; the first reason wins."""
        if self._reason is None:
            self._reason = reason

    @property
    def cancelled(self) -> bool:
        """True once :meth:`cancel` was called."""
        return self._reason is not None

    @property
    def reason(self) -> str | None:
        """Why the run was cancelled, if it was."""
        return self._reason


class _Keep:
    """The default of :meth:`RunContext.for_run`'s ``budget``: keep this context's
    (None is a value there: no budget)."""

    def __repr__(self) -> str:
        return "<this context's budget>"


_KEEP = _Keep()


class RunContext:
    """Everything a run carries: identity, tenant, policy and the services it calls.

    One context is passed along by reference through the agent loop, the invoker and
    every tool. :meth:`for_run` is the one derivation, for another run on the same
    services; :meth:`child` (a nested run) goes through it.
    """

    __slots__ = (
        "autonomy",
        "budget",
        "cancel",
        "checkpointer",
        "correlation_id",
        "depth",
        "invoker",
        "llm",
        "max_depth",
        "observer",
        "scope",
        "store",
        "tracer",
    )

    def __init__(
        self,
        *,
        llm: LLM,
        store: Store,
        invoker: Invoker,
        scope: Scope,
        correlation_id: str,
        autonomy: Autonomy | str = Autonomy.AUTO,
        budget: BudgetLedger | None = None,
        checkpointer: Checkpointer | None = None,
        tracer: Tracer | None = None,
        observer: Observer | None = None,
        cancel: CancelToken | None = None,
        depth: int = 0,
        max_depth: int = DEFAULT_MAX_DEPTH,
    ) -> None:
        self.llm = llm
        self.store = store
        self.invoker = invoker
        self.scope = scope
        self.correlation_id = correlation_id
        self.autonomy = _autonomy(autonomy)
        self.budget = budget
        self.checkpointer = checkpointer
        self.tracer = tracer
        self.observer = observer
        self.cancel = cancel if cancel is not None else CancelToken()
        self.depth = depth
        self.max_depth = max_depth

    @property
    def run_id(self) -> str:
        """The run's id; the same as ``correlation_id``."""
        return self.correlation_id

    def child(self) -> RunContext:
        """A context for a nested run: one level deeper, same run id, budget and cancel token.

        Raises :class:`DepthLimitExceeded` past ``max_depth``.
        """
        depth = self.depth + 1
        if depth > self.max_depth:
            raise DepthLimitExceeded(depth, self.max_depth)
        return self.for_run(self.correlation_id, depth=depth)

    def for_run(
        self,
        run_id: str,
        *,
        scope: Scope | None = None,
        autonomy: Autonomy | str | None = None,
        budget: BudgetLedger | _Keep | None = _KEEP,
        cancel: CancelToken | None = None,
        depth: int | None = None,
        tracer: Tracer | _Keep | None = _KEEP,
        store: Store | None = None,
    ) -> RunContext:
        """A context for run ``run_id`` on the same services (model, store, invoker,
        checkpointer, tracer, observer, nesting limit).

        Everything not given is this context's: its scope, autonomy, budget, cancel
        token, depth and tracer (a served run records its own trace), and its store
        (``agentkit serve --store`` gives another; a checkpointer of its own stays).
        Resuming a run from a fresh context keeps them all; a Temporal activity gives
        the run's own scope, autonomy, budget and cancel token.
        """
        return RunContext(
            llm=self.llm,
            store=self.store if store is None else store,
            invoker=self.invoker,
            scope=self.scope if scope is None else scope,
            correlation_id=run_id,
            autonomy=self.autonomy if autonomy is None else autonomy,
            budget=self.budget if isinstance(budget, _Keep) else budget,
            checkpointer=self.checkpointer,
            tracer=self.tracer if isinstance(tracer, _Keep) else tracer,
            observer=self.observer,
            cancel=self.cancel if cancel is None else cancel,
            depth=self.depth if depth is None else depth,
            max_depth=self.max_depth,
        )

    def emit(self, kind: str, /, **data: Any) -> None:
        """Send an observation to the observer. Never raises: a broken observer is logged."""
        observer = self.observer
        if observer is None:
            return
        try:
            observer(kind, {"run_id": self.correlation_id, "depth": self.depth, **data})
        except Exception:
            _log.warning("observer failed on %r; continuing", kind, exc_info=True)

    async def progress(
        self, done: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report how far the running tool call has got: a ``tool.progress`` event, and
        forwarded to the call's caller when it asked (an MCP progress token). Never raises."""
        self.emit("tool.progress", done=done, total=total, message=message)
        await report_progress(done, total, message)

    async def log(self, level: str, message: str, /, **data: Any) -> None:
        """Log a line from the running tool call: a ``tool.log`` event, and forwarded to
        the call's caller when it listens (MCP ``notifications/message``).

        ``level`` is one of ``debug info notice warning error critical alert emergency``;
        anything else raises ValueError.
        """
        if level not in LOG_LEVELS:
            raise ValueError(f"unknown log level {level!r}; expected one of {list(LOG_LEVELS)}")
        self.emit("tool.log", **{**data, "level": level, "message": message})
        await report_log(level, message, data)

    def check_cancelled(self) -> None:
        """Raise :class:`RunCancelled` if the run was asked to stop."""
        reason = self.cancel.reason
        if reason is not None:
            raise RunCancelled(reason)

    def __repr__(self) -> str:
        return (
            f"RunContext(run_id={self.correlation_id!r}, scope={self.scope.key()!r}, "
            f"autonomy={self.autonomy.value!r}, depth={self.depth})"
        )


def _autonomy(value: Autonomy | str) -> Autonomy:
    if type(value) is Autonomy:
        return value
    try:
        return Autonomy(value)
    except ValueError:
        accepted = [a.value for a in Autonomy]
        raise ValueError(f"unknown autonomy {value!r}; expected one of {accepted}") from None


def new_run_id() -> str:
    """A fresh, unique run id."""
    return os.urandom(16).hex()


def describe_context(ctx: RunContext) -> Mapping[str, Any]:
    """The context's identity fields, for logs and audit records."""
    return {
        "run_id": ctx.correlation_id,
        "scope": ctx.scope.key(),
        "autonomy": ctx.autonomy.value,
        "depth": ctx.depth,
    }
