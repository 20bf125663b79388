"""Effects: what an agent run does to the world, apart from what it decides.

The loop (a cognition driving an :class:`~agentkit.agents.run.AgentRun`) decides: the
next model call, which tool calls run, when to suspend, when to finish. Carrying those
out goes through one small interface whose every method takes one value and returns
one: a :class:`~agentkit.agents.outcomes.ToolJob` in and a tool outcome out, a
``ChatRequest`` in and an ``LLMResult`` out, the run's snapshot and version in and the
new version out. So the same loop runs on several engines: :class:`InProcessEffects`
(the caller's process, checkpoints in its store) here, and Temporal activities in
:mod:`agentkit.integrations.temporal`. The loop is never copied per engine.

The tool effect also keeps the call's intent (see :mod:`agentkit.agents.intents`):
before the body of a call that changes the world starts, an intent is stored; the
outcome is written into it when the call returns, and :meth:`Effects.forget` drops it
once the run's checkpoint holds the answer.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Protocol

from agentkit.agents.autonomy import key_step
from agentkit.agents.events import AgentEvent, ReasoningDeltaEvent, TextDeltaEvent
from agentkit.agents.intents import Intent, intent_key, start_intent
from agentkit.agents.nested import SubRunSuspended, calling, left_call
from agentkit.agents.outcomes import (
    Answered,
    Asked,
    Parked,
    Stopped,
    ToolJob,
    ToolOutcome,
    Unknown,
)
from agentkit.agents.run_state import RunState
from agentkit.agents.tool_messages import describe_failure, render_result
from agentkit.core.contracts.errors import (
    DepthLimitExceeded,
    HumanInputRequired,
    RunCancelled,
    RunError,
    RunTakenOver,
    ToolTimeout,
)
from agentkit.core.contracts.ports import Checkpointer, Context
from agentkit.core.contracts.reasoning import ReasoningDelta
from agentkit.core.contracts.state_errors import VersionConflict
from agentkit.core.contracts.types import (
    ChatRequest,
    LLMResult,
    Message,
    TextDelta,
    ToolCall,
    ToolRequest,
    Waiting,
)
from agentkit.core.runtime.context import RunContext
from agentkit.state.checkpoints.store_checkpointer import StoreCheckpointer

if TYPE_CHECKING:
    from agentkit.tools.registry import ToolRegistry

__all__ = [
    "Effects",
    "InProcessEffects",
    "execute_tool_call",
    "outcome_message",
    "streamed_call",
]


class Effects(Protocol):
    """How a run's decisions are carried out."""

    def call_model(self, request: ChatRequest) -> Awaitable[LLMResult]:
        """One model call; streamed text goes to the run's event sink."""
        ...

    def call_tool(self, job: ToolJob) -> Awaitable[ToolOutcome]:
        """Carry out one tool call: what it came to, waiting for a person included."""
        ...

    async def forget(self, job: ToolJob, answer: Message) -> None:
        """The run's checkpoint now holds ``answer`` for ``job``: drop its intent."""
        ...

    async def save(self, snapshot: RunState, version: int) -> int:
        """Make ``snapshot`` durable over ``version`` (a compare-and-set); the new
        version. Raises :class:`~agentkit.core.contracts.errors.RunTakenOver` when
        another worker owns the run now."""
        ...


def _waiting_outcome(cause: BaseException) -> ToolOutcome:
    if isinstance(cause, SubRunSuspended):
        return Parked(cause.sub)
    if isinstance(cause, HumanInputRequired):
        return Asked(cause.message, cause.schema, cause.tool, cause.source)
    raise cause  # pragma: no cover - a WaitsForPerson agentkit does not know


async def execute_tool_call(
    ctx: RunContext, job: ToolJob, registry: ToolRegistry, *, intents: bool = False
) -> ToolOutcome:
    """Run ``job`` through ``ctx``'s tool chain and say what it came to.

    A tool's failure is an :class:`Answered` error the model reads; a refusal that stops
    the run (budget, cancellation) is :class:`Stopped`; a call that waits for a person
    is :class:`Asked` or :class:`Parked`; a call past its timeout (``job.timeout`` when
    its tool declares none) that may have changed the world is :class:`Unknown`. With
    ``intents``, a call that changes the world records its intent first, and its
    outcome when it returns."""
    call = job.call
    intent: str | None = None
    try:
        tool = registry.get(call.name)
        request = ToolRequest(
            call.name,
            job.arguments,
            tool,
            bool(tool.side_effecting),
            call_id=call.id,
            key_step=bool(tool.side_effecting),
            timeout=job.timeout,
        )
        if intents and key_step(tool, call):
            intent = await start_intent(ctx, job.run_key, call, job.arguments)
        token = calling(job.run_key, call.id, job.wake, job.decisions, model=job.model,
                        answers=job.answers, again=job.again)
        try:
            value = await ctx.invoker.invoke_tool_or_wait(request, ctx)
        finally:
            left_call(token)
    except (RunError, asyncio.CancelledError) as exc:
        if intent is not None and not isinstance(exc, RunCancelled | asyncio.CancelledError):
            await ctx.store.delete(intent_key(job.run_key, call.id))  # refused before it ran
        if isinstance(exc, DepthLimitExceeded):
            return Answered(describe_failure(call.name, exc), True)
        if isinstance(exc, RunError):
            return Stopped(exc)
        raise
    except ToolTimeout as exc:
        traits = request.traits
        if not (traits.idempotent or traits.is_read_only_call(job.arguments)):
            # It may have acted: its intent stays open, and it is not run again.
            return Unknown(
                f"{call.name!r} is side-effecting and not declared idempotent",
                f"it ran past its timeout of {exc.seconds:g}s and was stopped before it "
                "reported a result",
            )
        outcome = Answered(describe_failure(call.name, exc), True)  # safe to try again
    except Exception as exc:
        outcome = Answered(describe_failure(call.name, exc), True)
    else:
        if type(value) is Waiting:
            # It runs again with the person's answer: no outcome to recover, no intent.
            if intent is not None:
                await ctx.store.delete(intent_key(job.run_key, call.id))
            return _waiting_outcome(value.cause)
        content, attached = render_result(value)
        outcome = Answered(job.note + content, False, attached)
    if intent is not None:
        message = outcome_message(call, outcome)
        await ctx.store.set(
            intent_key(job.run_key, call.id), Intent(call.id, call.name, intent, message)
        )
        return replace(outcome, recorded=True)
    return outcome


def outcome_message(call: ToolCall, outcome: Answered) -> Message:
    """The tool-result message of an answered call."""
    return Message(
        role="tool", content=outcome.content, tool_call_id=call.id, name=call.name,
        is_error=outcome.is_error, attachments=outcome.attachments,
    )


class InProcessEffects:
    """Effects in the caller's process: ``ctx.invoker`` for model and tool calls, the
    run's checkpointer (a compare-and-set on its version) for checkpoints."""

    __slots__ = ("checkpointer", "ctx", "key", "registry", "sink", "with_run")

    def __init__(
        self,
        ctx: RunContext,
        checkpointer: Checkpointer,
        key: str,
        registry: ToolRegistry | None,
        sink: Callable[[AgentEvent], None] | None = None,
    ) -> None:
        self.ctx = ctx
        self.checkpointer = checkpointer
        self.key = key
        self.registry = registry
        self.sink = sink
        # The checkpointer, when it and the run registry share one store that writes a
        # checkpoint and a run record together (agentkit.agents.saves). Looked up on the
        # store's type, so a wrapper that forwards unknown attributes to a store still
        # sees each write as its own.
        self.with_run: StoreCheckpointer | None = None
        if (
            isinstance(checkpointer, StoreCheckpointer)
            and checkpointer.store is ctx.store
            and getattr(type(ctx.store), "set_versioned_with_run", None) is not None
        ):
            self.with_run = checkpointer

    def call_model(self, request: ChatRequest) -> Awaitable[LLMResult]:
        # Without a sink the chain's own awaitable is handed back, not a coroutine
        # around it: a frame less on every model call in flight.
        if self.sink is None:
            return self.ctx.invoker.chat(request, self.ctx)
        return streamed_call(self.ctx, request, self.sink)

    def call_tool(self, job: ToolJob) -> Awaitable[ToolOutcome]:
        # The call's own coroutine, not one around it: a frame less while a tool runs.
        assert self.registry is not None, "a run without tools made a tool call"
        return execute_tool_call(self.ctx, job, self.registry, intents=True)

    async def forget(self, job: ToolJob, answer: Message) -> None:
        await self.ctx.store.delete(intent_key(job.run_key, job.call.id))

    async def save(self, snapshot: RunState, version: int) -> int:
        try:
            return await self.checkpointer.save(self.key, snapshot, expected_version=version)
        except VersionConflict:
            raise RunTakenOver(snapshot.run_id) from None


async def streamed_call(ctx: Context, request: ChatRequest,
                        sink: Callable[[AgentEvent], None]) -> LLMResult:
    """One model call through ``ctx``'s stream chain, its deltas handed to ``sink`` as
    events: how a streamed run calls its model, in process or in a Temporal activity."""
    result: LLMResult | None = None
    async for event in ctx.invoker.stream(request, ctx):
        if isinstance(event, TextDelta):
            sink(TextDeltaEvent(event.text))
        elif isinstance(event, ReasoningDelta):
            sink(ReasoningDeltaEvent(event.text))
        elif isinstance(event, LLMResult):
            result = event
    if result is None:
        raise RuntimeError("the model stream ended without a final result")
    return result
