"""The Invoker: two middleware chains, folded once, ending in the tool or the model.

A middleware is ``async def mw(request, ctx, call_next)``. ``list[0]`` is outermost.
The chains are composed when the Invoker is built, so a call pays one Python call per
layer and nothing for assembling the chain.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Sequence
from typing import Any

from agentkit.core.contracts.errors import (
    ProviderError,
    ToolNotFoundError,
    ToolTimeout,
    WaitsForPerson,
    is_transient,
)
from agentkit.core.contracts.ports import (
    ChatHandler,
    ChatMiddleware,
    Context,
    Tool,
    ToolHandler,
    ToolMiddleware,
)
from agentkit.core.contracts.types import (
    ChatRequest,
    LLMResult,
    StreamEvent,
    ToolRequest,
    Waiting,
)

__all__ = ["Invoker"]


async def _run_tool(request: ToolRequest, ctx: Context) -> Any:
    tool = request.tool
    if tool is None:
        raise ToolNotFoundError(request.name, ())
    limit = request.traits.timeout
    if limit is None:
        limit = request.timeout
    try:
        if limit is None:
            return await tool.run(request.arguments, ctx)
        return await _within(limit, tool, request, ctx)
    except WaitsForPerson as waits:
        # Waiting for a person is the call's outcome, not a failure: it goes up the
        # chain as a value, so audit and tracing say so and no cache keeps it.
        return Waiting(waits.waiting, waits)


async def _within(limit: float, tool: Tool, request: ToolRequest, ctx: Context) -> Any:
    """``tool.run`` given up on after ``limit`` seconds: :class:`ToolTimeout`. Here, at
    the end of the chain, so that each attempt of ``retry()`` has the whole limit."""
    deadline = asyncio.timeout(limit)
    try:
        async with deadline:
            return await tool.run(request.arguments, ctx)
    except TimeoutError:
        if deadline.expired():
            raise ToolTimeout(request.name, request.call_id, limit) from None
        raise  # the tool's own timeout, within the limit

def _call_llm(request: ChatRequest, ctx: Context) -> Awaitable[LLMResult]:
    # The model's own awaitable, not a coroutine around it: a frame less per call.
    return ctx.llm.chat(request, ctx)


def _fold_tool(middleware: Sequence[ToolMiddleware]) -> ToolHandler:
    handler: ToolHandler = _run_tool
    for mw in reversed(middleware):
        handler = _bind_tool(mw, handler)
    return handler


def _bind_tool(mw: ToolMiddleware, call_next: ToolHandler) -> ToolHandler:
    def layer(request: ToolRequest, ctx: Context) -> Any:
        return mw(request, ctx, call_next)

    return layer


def _fold_chat(middleware: Sequence[ChatMiddleware]) -> ChatHandler:
    handler: ChatHandler = _call_llm
    for mw in reversed(middleware):
        handler = _bind_chat(mw, handler)
    return handler


def _bind_chat(mw: ChatMiddleware, call_next: ChatHandler) -> ChatHandler:
    def layer(request: ChatRequest, ctx: Context) -> Any:
        return mw(request, ctx, call_next)

    return layer


def _interrupted(ctx: Context, delivered: int, error: Exception) -> ProviderError:
    return ProviderError(
        f"the model stream broke after {delivered} delta(s) had been delivered "
        f"({type(error).__name__}: {error}); retrying would deliver them twice, so it is not "
        "retried. Run the turn again, or use chat(), which can be retried safely",
        # The provider that broke names itself; behind a router ctx.llm would not.
        provider=getattr(error, "provider", None) or type(ctx.llm).__name__,
        transient=False,
        kind="stream_interrupted",
    )


class Invoker:
    """Runs tool calls and model calls through their middleware chains."""

    __slots__ = ("_chat", "_tool", "chat_middleware", "tool_middleware")

    def __init__(
        self,
        tool_middleware: Sequence[ToolMiddleware] = (),
        chat_middleware: Sequence[ChatMiddleware] = (),
    ) -> None:
        # Snapshot into tuples first: a generator passed in would otherwise be used up
        # by the fold and leave an empty chain behind.
        self.tool_middleware: tuple[ToolMiddleware, ...] = tuple(tool_middleware)
        self.chat_middleware: tuple[ChatMiddleware, ...] = tuple(chat_middleware)
        for mw in (*self.tool_middleware, *self.chat_middleware):
            if not callable(mw):
                raise TypeError(
                    f"middleware {mw!r} is not callable; a middleware is "
                    "`async def mw(request, ctx, call_next)`"
                )
        self._tool = _fold_tool(self.tool_middleware)
        self._chat = _fold_chat(self.chat_middleware)

    async def invoke_tool(self, request: ToolRequest, ctx: Context) -> Any:
        """Run ``request`` through the tool chain; the innermost step is ``tool.run``.

        A call that waits for a person raises its
        :class:`~agentkit.core.contracts.errors.WaitsForPerson` here, for callers that
        are not an agent loop; :meth:`invoke_tool_or_wait` returns it as a value."""
        value = await self._tool(request, ctx)
        if type(value) is Waiting:
            raise value.cause
        return value

    def invoke_tool_or_wait(self, request: ToolRequest, ctx: Context) -> Awaitable[Any]:
        """Run ``request`` through the tool chain: the tool's value, or a
        :class:`~agentkit.core.contracts.types.Waiting` when the call waits for a person.

        Returns the chain's awaitable (await it), as :meth:`chat` does: a frame less on
        every tool call in flight."""
        return self._tool(request, ctx)

    def chat(self, request: ChatRequest, ctx: Context) -> Awaitable[LLMResult]:
        """Run ``request`` through the chat chain; the innermost step is ``ctx.llm.chat``.

        Returns the chain's awaitable (await it), not a coroutine around it: a frame
        less on every model call in flight."""
        return self._chat(request, ctx)

    async def stream(self, request: ChatRequest, ctx: Context) -> AsyncIterator[StreamEvent]:
        """Stream a model call.

        The chat middlewares see the call as a whole: each wraps a handler that drains
        the stream, so a middleware that charges usage or opens a span still sees one
        :class:`LLMResult`. Deltas are forwarded as they arrive.

        A stream that breaks transiently before any delta went out may be retried by a
        middleware. Once deltas went out a retry would deliver them again, so the break
        is raised as a permanent :class:`ProviderError` (``kind="stream_interrupted"``),
        with the original error as its cause.
        """
        queue: asyncio.Queue[StreamEvent | None] = asyncio.Queue()
        delivered = 0

        async def drain(req: ChatRequest, c: Context) -> LLMResult:
            nonlocal delivered
            final: LLMResult | None = None
            try:
                async for event in c.llm.stream(req, c):
                    if isinstance(event, LLMResult):
                        final = event
                    else:
                        queue.put_nowait(event)
                        delivered += 1
            except Exception as error:
                if delivered and is_transient(error):
                    raise _interrupted(c, delivered, error) from error
                raise
            if final is None:
                raise RuntimeError("the model's stream ended without a final LLMResult")
            return final

        chain: ChatHandler = drain
        for mw in reversed(self.chat_middleware):
            chain = _bind_chat(mw, chain)

        async def run() -> LLMResult:
            try:
                return await chain(request, ctx)
            finally:
                queue.put_nowait(None)

        task = asyncio.ensure_future(run())
        try:
            while True:
                event = await queue.get()
                if event is None:
                    break
                yield event
            yield await task
        finally:
            if not task.done():
                task.cancel()
