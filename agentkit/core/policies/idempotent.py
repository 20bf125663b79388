"""idempotent(): a retried side-effecting call replays its first result instead of acting twice."""

from __future__ import annotations

from typing import Any

from agentkit.core.contracts.ports import Context, Store, ToolHandler, ToolMiddleware
from agentkit.core.contracts.state_errors import NotStorable
from agentkit.core.contracts.types import ToolRequest, Waiting
from agentkit.core.policies._kept import NotKept
from agentkit.core.policies._keys import hash_arguments

__all__ = ["idempotency_key", "idempotent"]


def idempotency_key(request: ToolRequest, ctx: Context, digest: str | None = None) -> str:
    """The store key under which ``idempotent()`` records this call's result.

    ``digest`` is the arguments' hash when already computed.
    """
    if digest is None:
        digest = hash_arguments(request.arguments)
    key = f"idempotency:{ctx.correlation_id}:{ctx.scope.key()}:{request.name}:{digest}"
    scope = request.meta.get("idempotency_scope") or request.traits.idempotency_scope
    if request.call_id is not None and scope == "call":
        key = f"{key}:{request.call_id}"
    return key


def idempotent(store: Store | None = None, *, ttl: float | None = None) -> ToolMiddleware:
    """Deduplicate side-effecting tool calls within a run.

    The key is (run id, scope, tool name, arguments), so a replay is confined to one run
    of one tenant: a second run that sends the same email really sends it. Only
    side-effecting calls are cached (the request's flag OR the tool's); concurrent
    duplicates share one execution; a call that raises stores nothing, so a retry runs
    it again. ``store`` defaults to the context's store.

    A tool whose effect depends on current state, so that the model repeating a call
    is a new action (``FileTool``: viewing a note twice, with an edit between), declares
    ``idempotency_scope="call"`` in its traits: its key also holds the model's call id,
    so a retry or a recovery of *that* call replays, while a new call with the same
    arguments runs. A caller can ask the same of one request with
    ``meta={"idempotency_scope": "call"}`` (the MCP server does, keying on the client's
    request id).

    Sets ``request.meta["idempotency"]`` to ``"executed"`` or ``"replayed"``, and
    ``request.meta["idempotency_key"]`` before running the call.
    """
    return _Idempotent(store, ttl)


class _Idempotent:
    __slots__ = ("_store", "_ttl")

    def __init__(self, store: Store | None, ttl: float | None) -> None:
        self._store = store
        self._ttl = ttl

    async def __call__(self, request: ToolRequest, ctx: Context, call_next: ToolHandler) -> Any:
        if not request.is_side_effecting:
            return await call_next(request, ctx)
        store = self._store if self._store is not None else ctx.store
        digest = hash_arguments(request.arguments)
        request.meta["arguments_sha256"] = digest  # audit() reuses it instead of rehashing
        key = idempotency_key(request, ctx, digest)
        request.meta["idempotency_key"] = key  # lets an outer retry() know a repeat is safe
        ran = False

        async def run() -> Any:
            nonlocal ran
            value = await call_next(request, ctx)
            if type(value) is Waiting:
                raise NotKept(value)  # it has no result yet: keep nothing
            ran = True
            return value

        try:
            value, created = await store.get_or_set(key, run, ttl=self._ttl)
        except NotKept as waits:
            return waits.value
        except NotStorable as exc:
            if not ran:
                raise
            raise NotStorable(
                exc.type_name,
                exc.path,
                context=f"tool {request.name!r} ran, but idempotent() could not record its "
                "result, so repeating this call would act again: ",
            ) from None
        request.meta["idempotency"] = "executed" if created else "replayed"
        return value

    def __repr__(self) -> str:
        return f"idempotent(store={self._store!r}, ttl={self._ttl!r})"
