"""memoize(): a general result cache for read-only tools.

It declines side-effecting calls outright. Measured before this default existed:
``send_email(to=...)`` invoked twice through a cache sent one email, and the second
caller was handed the first call's stored ``{'sent': True}``. Caching a side effect
reports success for an action that never happened, while a missed cache hit costs
only a re-execution; that asymmetry decides the default. ``idempotent()`` is the one
middleware that caches side effects, and it confines the replay to a single run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentkit.core.contracts.ports import Context, Store, ToolHandler, ToolMiddleware
from agentkit.core.contracts.state_errors import NotStorable
from agentkit.core.contracts.types import ToolRequest, Waiting
from agentkit.core.policies._kept import NotKept
from agentkit.core.policies._keys import hash_arguments

if TYPE_CHECKING:
    pass

__all__ = ["memoize"]


def memoize(store: Store | None = None, *, ttl: float | None = None) -> ToolMiddleware:
    """Cache results of calls that are not side-effecting, per scope, across runs.

    The key is (scope, tool name, arguments). Side-effecting calls (the request's flag
    OR the tool's) pass straight through, uncached. ``store`` defaults to the context's.

    A result the store cannot keep (see :mod:`agentkit.state.codec`) is returned
    uncached.

    Sets ``request.meta["memoize"]`` to ``"hit"``, ``"miss"``, ``"skipped"`` or
    ``"unstorable"``.
    """
    return _Memoize(store, ttl)


class _Memoize:
    __slots__ = ("_store", "_ttl")

    def __init__(self, store: Store | None, ttl: float | None) -> None:
        self._store = store
        self._ttl = ttl

    async def __call__(self, request: ToolRequest, ctx: Context, call_next: ToolHandler) -> Any:
        if request.is_side_effecting:
            request.meta["memoize"] = "skipped"
            return await call_next(request, ctx)
        store = self._store if self._store is not None else ctx.store
        key = f"memoize:{ctx.scope.key()}:{request.name}:{hash_arguments(request.arguments)}"
        produced: list[Any] = []

        async def run() -> Any:
            value = await call_next(request, ctx)
            if type(value) is Waiting:
                raise NotKept(value)  # it has no result yet: keep nothing
            produced.append(value)
            return value

        try:
            value, created = await store.get_or_set(key, run, ttl=self._ttl)
        except NotKept as waits:
            return waits.value
        except NotStorable:
            # A cache that cannot hold a read-only result is no reason to fail the call.
            request.meta["memoize"] = "unstorable"
            return produced[0] if produced else await call_next(request, ctx)
        request.meta["memoize"] = "miss" if created else "hit"
        return value

    def __repr__(self) -> str:
        return f"memoize(store={self._store!r}, ttl={self._ttl!r})"
