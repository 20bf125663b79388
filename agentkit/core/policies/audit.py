"""audit(): one record per tool call, appended to a store's log.

Records name the call without repeating it: arguments and results are SHA-256 hashes
unless ``include_arguments=True``, so secrets a model passes to a tool do not end up
in logs. Place ``audit()`` outside ``idempotent()`` and ``memoize()`` in the chain so
it sees whether a call was replayed (``deduped``).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from agentkit.core.contracts.errors import (
    BudgetExceeded,
    EgressRefused,
    ToolArgumentError,
    ToolNotFoundError,
)
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.ports import Context, Store
from agentkit.core.contracts.types import ToolRequest, Waiting
from agentkit.core.policies._keys import hash_arguments, hash_value

__all__ = ["AuditRecord", "DecisionRecord", "audit", "audit_log_of"]

_log = logging.getLogger("agentkit.audit")

Decision = Literal["executed", "deduped", "refused", "failed", "suspended"]

_REFUSALS = (ToolArgumentError, ToolNotFoundError, EgressRefused, BudgetExceeded)


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """What happened to one tool call."""

    run_id: str
    """The run the call belonged to."""
    scope: str
    """The tenant, as ``Scope.key()``."""
    tool: str
    """The tool's name."""
    call_id: str | None
    """The model's call id, if any."""
    arguments_sha256: str
    """Hash of the canonical JSON of the arguments."""
    result_sha256: str | None
    """Hash of the result; None when the call raised."""
    decision: Decision
    """``executed``, ``deduped`` (replayed by idempotent/memoize), ``refused`` (before
    the body ran: bad arguments, egress, budget), ``failed``, or ``suspended`` (the
    call waits for a person: a question mid-call, a delegated sub-run that waits; it
    runs again once they answer, and is recorded again then)."""
    time: float
    """When the call finished, in seconds since the epoch."""
    error: str | None = None
    """The error's type name, when there was one."""
    arguments: FrozenDict[str, Any] | None = field(default=None)
    """The raw arguments, only with ``include_arguments=True``."""
    side_effecting: bool | None = field(default=None, kw_only=True)
    """Whether the call was declared side-effecting (by the request or the tool); None
    in records written before agentkit recorded it."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DecisionRecord:
    """A person's decision on a run, in the audit log beside its tool-call records: who
    decided (or cancelled) what, and when. Written where a decision is accepted, so a
    decision that lost (409) or was refused (422) has none."""

    run_id: str
    """The run decided on."""
    scope: str
    """The run's tenant, as ``Scope.key()``."""
    call_id: str | None
    """The path id decided (``"c1/s3"`` for a sub-run's call); None for a cancel."""
    kind: str
    """``approve``, ``reject``, ``edit``, ``answer``, ``elicitation``, ``sub_run`` (the
    decisions for a sub-run's calls, given as one mapping) or ``cancel``."""
    by: str
    """The name of the principal who decided."""
    time: float
    """When it was accepted, in seconds since the epoch (the run's decision log says
    the same time)."""


def audit(
    store: Store | None = None, *, log: str = "audit", include_arguments: bool = False
) -> _Audit:
    """Append an :class:`AuditRecord` for every tool call to ``store``'s log ``log``
    (default: the context's store). A failing store is logged and never breaks a call."""
    return _Audit(store, log, include_arguments)


def audit_log_of(ctx: Context) -> tuple[Store, str] | None:
    """Where the audit() in ``ctx``'s tool chain appends its records: the store and the
    log name, or None when the chain has no audit() (evals read a run's records here)."""
    for mw in ctx.invoker.tool_middleware:
        if isinstance(mw, _Audit):
            return (mw._store if mw._store is not None else ctx.store), mw._log
    return None


class _Audit:
    __slots__ = ("_include", "_log", "_store")

    def __init__(self, store: Store | None, log: str, include: bool) -> None:
        self._store = store
        self._log = log
        self._include = include

    async def __call__(self, request: Any, ctx: Context, call_next: Any) -> Any:
        if not isinstance(request, ToolRequest):
            return await call_next(request, ctx)
        result_hash: str | None = None
        error: BaseException | None = None
        decision: Decision
        try:
            value = await call_next(request, ctx)
        except _REFUSALS as exc:
            decision, error = "refused", exc
            raise
        except Exception as exc:
            decision, error = "failed", exc
            raise
        else:
            if type(value) is Waiting:
                decision = "suspended"
                await self._record(request, ctx, decision, None, None)
                return value
            result_hash = hash_value(value)
            replayed = request.meta.get("idempotency") == "replayed"
            decision = "deduped" if replayed or request.meta.get("memoize") == "hit" else "executed"
            return value
        finally:
            if error is not None or result_hash is not None:
                await self._record(request, ctx, decision, result_hash, error)

    async def _record(
        self,
        request: ToolRequest,
        ctx: Context,
        decision: Decision,
        result_hash: str | None,
        error: BaseException | None,
    ) -> None:
        record = AuditRecord(
            run_id=ctx.correlation_id,
            scope=ctx.scope.key(),
            tool=request.name,
            call_id=request.call_id,
            arguments_sha256=request.meta.get("arguments_sha256")
            or hash_arguments(request.arguments),
            result_sha256=result_hash,
            decision=decision,
            time=time.time(),
            error=None if error is None else type(error).__name__,
            arguments=FrozenDict(request.arguments) if self._include else None,
            side_effecting=request.is_side_effecting,
        )
        store = self._store if self._store is not None else ctx.store
        try:
            await store.append(self._log, record)
        except Exception:
            _log.warning("audit store failed to append a record; continuing", exc_info=True)

    def __repr__(self) -> str:
        return f"audit(store={self._store!r}, log={self._log!r})"
