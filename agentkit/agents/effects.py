"""Effects: what an agent run does to the world, apart from what it decides.

The loop (a cognition driving an :class:`~agentkit.agents.run.AgentRun`) decides: the
next model call, which tool calls run, when to suspend, when to finish. Carrying those
out goes through one small interface, so the same loop runs on several engines:
:class:`InProcessEffects` (the caller's process, checkpoints in its store) here, and
Temporal activities in :mod:`agentkit.integrations.temporal`. The loop is never copied
per engine.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from agentkit.agents.events import TextDeltaEvent
from agentkit.agents.nested import SubRunSuspended
from agentkit.agents.tool_messages import describe_failure, render_result
from agentkit.core.contracts.errors import (
    DepthLimitExceeded,
    HumanInputRequired,
    RunCancelled,
    RunError,
    RunTakenOver,
    ToolNotFoundError,
    ToolTimeout,
    VersionConflict,
)
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.media import Media
from agentkit.core.contracts.types import (
    ChatRequest,
    LLMResult,
    TextDelta,
    ToolCall,
    ToolRequest,
)
from agentkit.core.runtime.context import RunContext
from agentkit.core.runtime.current_call import CurrentCall, current_call

if TYPE_CHECKING:
    from agentkit.agents.run import AgentRun
    from agentkit.tools.registry import ToolRegistry

__all__ = ["Effects", "InProcessEffects", "OutcomeUnknown", "ToolOutcome", "execute_tool_call"]


_NO_ANSWERS: Mapping[str, Any] = FrozenDict()

ToolOutcome = tuple[str, bool, tuple[Media, ...]]
"""A tool call's result text for the model, whether it is an error, and its media."""


class Effects(Protocol):
    """How a run's decisions are carried out."""

    async def call_model(self, run: AgentRun, request: ChatRequest) -> LLMResult:
        """One model call for ``run``; streamed text goes to ``run.emit``."""
        ...

    async def call_tool(
        self,
        run: AgentRun,
        call: ToolCall,
        arguments: Mapping[str, Any],
        registry: ToolRegistry,
        *,
        answers: Mapping[str, Any] = _NO_ANSWERS,
    ) -> ToolOutcome:
        """Run one tool call: its result text for the model, whether it is an error, and
        the media it returned. ``answers`` are a person's answers to the questions the
        call asked earlier (an MCP server's elicitation), by question.

        Raises :class:`~agentkit.core.contracts.errors.RunError` for a refusal that stops
        the run, :class:`OutcomeUnknown` when the call may or may not have acted, and
        :class:`~agentkit.core.contracts.errors.HumanInputRequired` when the call stopped
        to ask a person something.
        """
        ...

    async def save(self, run: AgentRun) -> None:
        """Make the run's current state durable (a checkpoint); raises
        :class:`~agentkit.core.contracts.errors.RunTakenOver` when another worker
        owns the run now."""
        ...


class OutcomeUnknown(Exception):
    """A side-effecting call started and ended without a result (its worker died, or it
    ran past its timeout): it may or may not have taken effect, and it must not silently
    run again. ``what`` says what happened, when it was not a crash."""

    def __init__(self, call_id: str, why: str, what: str | None = None) -> None:
        self.call_id = call_id
        self.why = why
        self.what = what
        super().__init__(f"call {call_id!r}: outcome unknown ({why})")


class Intents(Protocol):
    """Where a side-effecting call's intent is recorded before its body starts, and
    dropped when it was refused before running (see :mod:`agentkit.agents.intents`)."""

    async def _start_intent(self, call: ToolCall, arguments: Mapping[str, Any]) -> None: ...

    async def _drop_intent(self, call: ToolCall) -> None: ...


async def execute_tool_call(
    ctx: RunContext,
    call: ToolCall,
    arguments: Mapping[str, Any],
    registry: ToolRegistry,
    intents: Intents | None = None,
    *,
    model: str = "",
    answers: Mapping[str, Any] = _NO_ANSWERS,
    timeout: float | None = None,
) -> ToolOutcome:
    """Run ``call`` with ``arguments`` through ``ctx``'s tool chain: its result text,
    whether it is an error, and the media it returned. A tool's failure is a result the
    model reads; a refusal that stops the run (budget, cancellation) is raised, and so
    is a question the tool must put to a person (:class:`HumanInputRequired`). With
    ``intents``, a call that changes the world records its intent first. ``model`` and
    ``answers`` are what the call can see of its run while it runs (an MCP server's
    sampling and elicitation requests are answered from them). ``timeout`` is the run's
    default limit for a call whose tool declares none; a call past its limit that may
    have changed the world raises :class:`OutcomeUnknown`."""
    from agentkit.agents.run import _key_step

    try:
        tool = registry.get(call.name)
        request = ToolRequest(
            call.name,
            arguments,
            tool,
            bool(tool.side_effecting),
            call_id=call.id,
            key_step=bool(tool.side_effecting),
            timeout=timeout,
        )
        if intents is not None and _key_step(tool, call):
            await intents._start_intent(call, arguments)
        scope = current_call.set(CurrentCall(call.id, model, answers))
        try:
            value = await ctx.invoker.invoke_tool(request, ctx)
        finally:
            current_call.reset(scope)
    except (HumanInputRequired, SubRunSuspended):
        # The call stopped to ask a person (itself, or in a sub-run it delegated to) and
        # runs again with the answer: it has no outcome to recover, so its intent goes.
        if intents is not None:
            await intents._drop_intent(call)
        raise
    except (RunError, asyncio.CancelledError) as exc:
        if intents is not None and not isinstance(exc, RunCancelled | asyncio.CancelledError):
            await intents._drop_intent(call)  # refused before the body ran (budget, depth)
        if isinstance(exc, DepthLimitExceeded):
            return describe_failure(call.name, exc), True, ()
        raise
    except ToolNotFoundError as exc:
        return describe_failure(call.name, exc), True, ()
    except ToolTimeout as exc:
        traits = request.traits
        if traits.idempotent or traits.is_read_only_call(arguments):
            return describe_failure(call.name, exc), True, ()  # safe to try again
        raise OutcomeUnknown(
            call.id, f"{call.name!r} is side-effecting and not declared idempotent",
            f"it ran past its timeout of {exc.seconds:g}s and was stopped before it "
            "reported a result",
        ) from exc
    except Exception as exc:
        return describe_failure(call.name, exc), True, ()
    content, attached = render_result(value)
    return content, False, attached


class InProcessEffects:
    """Effects in the caller's process: ``ctx.invoker`` for model and tool calls, the
    run's checkpointer (a compare-and-set on its version) for checkpoints."""

    __slots__ = ()

    async def call_model(self, run: AgentRun, request: ChatRequest) -> LLMResult:
        ctx = run.ctx
        if run.sink is None:
            return await ctx.invoker.chat(request, ctx)
        result: LLMResult | None = None
        async for event in ctx.invoker.stream(request, ctx):
            if isinstance(event, TextDelta):
                run.emit(TextDeltaEvent(event.text))
            elif isinstance(event, LLMResult):
                result = event
        if result is None:
            raise RuntimeError("the model stream ended without a final result")
        return result

    async def call_tool(
        self,
        run: AgentRun,
        call: ToolCall,
        arguments: Mapping[str, Any],
        registry: ToolRegistry,
        *,
        answers: Mapping[str, Any] = _NO_ANSWERS,
    ) -> ToolOutcome:
        return await execute_tool_call(
            run.ctx, call, arguments, registry, intents=run, model=run.agent.model,
            answers=answers, timeout=run.agent.tool_timeout,
        )

    async def save(self, run: AgentRun) -> None:
        try:
            run.version = await run.checkpointer.save(
                run.key, run.snapshot(), expected_version=run.version
            )
        except VersionConflict:
            raise RunTakenOver(run.run_id) from None


IN_PROCESS = InProcessEffects()
"""The effects of every run started with ``agent.run`` (they hold no state)."""
