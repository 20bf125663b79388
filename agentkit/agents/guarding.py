"""Guardrails in a run: where the loop checks the input, tool calls and the answer.

An agent's guardrails (``Agent(input_guardrails=, output_guardrails=,
tool_guardrails=)``) and a tool's own (``@tool(guardrails=)``) are read into
:class:`~agentkit.core.guardrails.Guardrail` values once, when the agent or tool is
built. The run checks, with :func:`~agentkit.core.guardrails.check` and
:func:`~agentkit.core.guardrails.check_alongside`:

- the task, around the run's first model call (:func:`first_answer`): the guardrails
  that allow it run alongside the call and cancel it when they trip; one that rewrites,
  or is wrapped ``input_guardrail(g, parallel=False)``, runs first;
- each tool call's frozen arguments, before the turn is gated or run
  (:func:`check_calls`), and a person's edit of them (:func:`checked_arguments`);
- each tool result, before the model reads it (:func:`checked_result`);
- the final answer, before it is parsed (:func:`checked_output`).

A trip is recorded (audit log, span, stream event) and ends the run as the run error
:class:`~agentkit.core.guardrails.GuardrailTripped` (``stop_reason="guardrail"``); a
trip on one tool result of a turn is the call's ``Stopped`` outcome, so the other calls
already under way finish and are recorded first, as for a budget refusal.

An engine whose loop must not run user code (Temporal's workflow) gives its effects a
``check_guardrails(GuardrailCheck)`` method: each check is then handed to it, and runs
where it runs them (:func:`verdict`, in an activity), before the first model call rather
than alongside it; everything else here is the same for every engine.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Iterable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal, Protocol

from agentkit.agents.decisions import EditArguments, PendingKind, decision_for
from agentkit.agents.events import AgentEvent, GuardrailEvent
from agentkit.agents.outcomes import Stopped, ToolOutcome
from agentkit.agents.run_state import with_usage
from agentkit.core.contracts.frozen import FrozenDict, freeze_arguments
from agentkit.core.contracts.traits import traits_of
from agentkit.core.contracts.types import (
    ChatRequest,
    LLMResult,
    Message,
    ToolCall,
    ToolSchema,
    Usage,
)
from agentkit.core.guardrails.running import (
    Guardrail,
    GuardrailTrip,
    as_guardrail,
    check,
    check_alongside,
)
from agentkit.core.guardrails.tripped import GuardrailRecord, GuardrailTripped
from agentkit.core.policies.audit import audit_log_of
from agentkit.core.runtime.cancelled_usage import collecting_cancelled_usage
from agentkit.core.runtime.spans import add_span_event

if TYPE_CHECKING:
    from agentkit.agents.effects import Effects
    from agentkit.core.runtime.context import RunContext
    from agentkit.tools.registry import ToolRegistry

__all__ = [
    "NO_GUARDRAILS",
    "GuardrailCheck",
    "Guardrails",
    "check_calls",
    "checked_arguments",
    "checked_output",
    "checked_result",
    "first_answer",
    "guardrails_at",
    "guardrails_of",
    "verdict",
]


@dataclass(frozen=True, slots=True)
class Guardrails:
    """An agent's guardrails, each read once into a :class:`Guardrail`."""

    input: tuple[Guardrail, ...] = ()
    """On the task, around the first model call."""
    output: tuple[Guardrail, ...] = ()
    """On the final answer."""
    tool: tuple[Guardrail, ...] = ()
    """On every tool call's arguments and result, before a tool's own."""


NO_GUARDRAILS = Guardrails()


@dataclass(frozen=True, slots=True)
class GuardrailCheck:
    """One check of a run's value by the guardrails of one place, for effects that run
    the checks elsewhere (their ``check_guardrails``)."""

    at: Literal["input", "arguments", "result", "output"]
    """Which guardrails: the input's, a tool call's (arguments or result), the output's."""
    value: Any
    """The value checked."""
    where: str
    """Where, as a trip names it (``"tool fetch result"``)."""
    call: ToolCall | None = None
    """The tool call, for ``arguments`` and ``result``."""


_log = logging.getLogger("agentkit.audit")


class AgentRun(Protocol):
    """What the checks read and change of an :class:`~agentkit.agents.run.AgentRun`."""

    agent: Any
    ctx: RunContext
    effects: Effects
    run_id: str
    messages: list[Message]
    history_len: int
    steps: int
    usage: Usage
    usage_by_model: FrozenDict[str, Usage]
    open_calls: tuple[ToolCall, ...]
    answered: dict[str, Message]
    pending: dict[str, PendingKind]
    decisions: Mapping[str, Any]
    guardrail: GuardrailTrip | None
    guardrails: Guardrails

    def request(self, tools: tuple[ToolSchema, ...]) -> ChatRequest: ...
    def emit(self, event: AgentEvent) -> None: ...
    async def save(self) -> None: ...


def _read(keyword: str, given: Iterable[Any]) -> tuple[Guardrail, ...]:
    if isinstance(given, str) or not isinstance(given, Iterable):
        raise TypeError(
            f"Agent({keyword}=...) takes a list of guardrails (functions g(value) or "
            f"g(value, ctx), or checks such as PII()), got {given!r}"
        )
    try:
        return tuple(as_guardrail(g) for g in given)
    except TypeError as exc:
        raise TypeError(f"Agent({keyword}=...): {exc}") from None


def guardrails_of(
    input_guardrails: Iterable[Any], output_guardrails: Iterable[Any],
    tool_guardrails: Iterable[Any],
) -> Guardrails:
    """The agent's guardrails; a ``TypeError`` naming the keyword for anything that
    cannot be one."""
    found = Guardrails(
        _read("input_guardrails", input_guardrails),
        _read("output_guardrails", output_guardrails),
        _read("tool_guardrails", tool_guardrails),
    )
    return NO_GUARDRAILS if found == NO_GUARDRAILS else found


async def _record_trip(ctx: RunContext, trip: GuardrailTrip, call_id: str | None = None) -> None:
    """Write ``trip`` to the audit log (when the tool chain has an ``audit()``) and as an
    ``agentkit.guardrail`` event on the open span. A failing store is logged, never
    raised: the run stops on the trip either way."""
    add_span_event("agentkit.guardrail", {
        "agentkit.guardrail.name": trip.guardrail,
        "agentkit.guardrail.where": trip.where,
        "agentkit.guardrail.reason": trip.reason,
    })
    found = audit_log_of(ctx)
    if found is None:
        return
    store, log = found
    record = GuardrailRecord(
        run_id=ctx.correlation_id, scope=ctx.scope.key(), guardrail=trip.guardrail,
        where=trip.where, reason=trip.reason, time=time.time(), call_id=call_id,
        info=trip.info,
    )
    try:
        await store.append(log, record)
    except Exception:
        _log.warning("audit store failed to append a guardrail record; continuing",
                     exc_info=True)


async def _tripped(run: AgentRun, trip: GuardrailTrip, call_id: str | None = None
                   ) -> GuardrailTripped:
    """Record ``trip`` (on the run too, for its result and checkpoint) and return the
    error that ends the run on it."""
    run.guardrail = trip
    await _record_trip(run.ctx, trip, call_id)
    run.emit(GuardrailEvent(trip))
    return GuardrailTripped(run.run_id, trip)


async def _checked(
    run: AgentRun, guardrails: tuple[Guardrail, ...], check_: GuardrailCheck
) -> tuple[Any, GuardrailTrip | None]:
    """``guardrails`` on ``check_.value``, here or where the run's effects run them."""
    elsewhere = getattr(run.effects, "check_guardrails", None)
    if elsewhere is None:
        return await check(guardrails, check_.value, run.ctx, check_.where)
    found: tuple[Any, GuardrailTrip | None] = await elsewhere(check_)
    return found


def guardrails_at(
    agent: Any, registry: ToolRegistry, at: str, tool: str = ""
) -> tuple[Guardrail, ...]:
    """The guardrails of ``agent`` at ``at`` (a :attr:`GuardrailCheck.at`); for a tool
    call's, those of the agent then the tool ``tool``'s own."""
    found: Guardrails = getattr(agent, "guardrails", NO_GUARDRAILS)
    if at == "input":
        return found.input
    if at == "output":
        return found.output
    return _for_tool(found.tool, registry, tool)


async def verdict(
    agent: Any, registry: ToolRegistry, check_: GuardrailCheck, ctx: RunContext
) -> tuple[Any, GuardrailTrip | None]:
    """Run, on ``ctx``, the guardrails of ``agent`` that ``check_`` names (what effects
    that check elsewhere run there): the value as they leave it, and the trip, which is
    recorded in ``ctx``'s audit log and span. The input's run as they would alongside a
    model call (a rewrite from one that may not rewrite is ``GuardrailMisplaced``)."""
    tool = check_.call.name if check_.call else ""
    guardrails = guardrails_at(agent, registry, check_.at, tool)
    if check_.at == "input":
        async def nothing(value: Any) -> None:
            return None

        _, value, trip = await check_alongside(guardrails, check_.value, ctx, "input", nothing)
    else:
        value, trip = await check(guardrails, check_.value, ctx, check_.where)
    if trip is not None:
        await _record_trip(ctx, trip, check_.call.id if check_.call else None)
    return value, trip


def first_answer(
    run: AgentRun, request: ChatRequest, tools: tuple[ToolSchema, ...]
) -> Awaitable[LLMResult]:
    """The model's answer to ``request``; for the run's first, with the input guardrails
    on the task.

    A rewrite replaces the task before the model is asked (with the request built
    again). A trip cancels the call if it is in flight; what the cancelled call reported
    as spent (see :mod:`agentkit.core.runtime.cancelled_usage`) is added to the run's
    usage, and the run ends with :class:`GuardrailTripped`."""
    # Not a coroutine itself: without guardrails the model call's own awaitable is
    # handed back, so every model call skips a frame (0.26 KB a run in flight) and a
    # coroutine's calls.
    if run.steps:  # asked first: this is on every model call's path
        return run.effects.call_model(request)
    guardrails = run.guardrails.input
    index = run.history_len  # the task is the first message of the run's turn
    if not guardrails or index >= len(run.messages):
        return run.effects.call_model(request)
    return _guarded_answer(run, request, tools, guardrails, index)


async def _guarded_answer(
    run: AgentRun, request: ChatRequest, tools: tuple[ToolSchema, ...],
    guardrails: tuple[Guardrail, ...], index: int,
) -> LLMResult:
    """:func:`first_answer` with the input ``guardrails`` on the task at ``index``."""
    task = run.messages[index]
    spent: list[tuple[str, Usage]] = []

    async def call(value: Any) -> LLMResult:
        if value is task.content:
            return await run.effects.call_model(request)
        if not isinstance(value, str):
            raise TypeError(
                f"run {run.run_id!r}: an input guardrail rewrote the task into a "
                f"{type(value).__name__}; a rewrite of the input must be a str"
            )
        run.messages[index] = replace(task, content=value)
        return await run.effects.call_model(run.request(tools))

    if getattr(run.effects, "check_guardrails", None) is not None:
        # Checked where the effects check, before the call: its cost would not be known.
        value, trip = await _checked(run, guardrails, GuardrailCheck("input", task.content,
                                                                     "input"))
        answer = None if trip is not None else await call(value)
    else:
        with collecting_cancelled_usage() as spent:
            answer, _, trip = await check_alongside(guardrails, task.content, run.ctx, "input",
                                                    call)
    if trip is None:
        assert answer is not None
        return answer
    for model, usage in spent:
        run.usage = run.usage + usage
        run.usage_by_model = with_usage(run.usage_by_model, model, usage)
    raise await _tripped(run, trip)


def _for_tool(
    agents: tuple[Guardrail, ...], registry: ToolRegistry, name: str
) -> tuple[Guardrail, ...]:
    """The agent's tool guardrails, then the tool's own."""
    if name not in registry.guarded:
        return agents  # an unknown tool is answered with the names there are; nothing runs
    own: tuple[Guardrail, ...] = traits_of(registry.get(name)).guardrails
    return agents + own


async def checked_arguments(
    run: AgentRun, registry: ToolRegistry, call: ToolCall, arguments: Mapping[str, Any]
) -> Mapping[str, Any] | GuardrailTripped:
    """``arguments`` of ``call`` as the tool guardrails leave them, or the trip."""
    guardrails = _for_tool(run.guardrails.tool, registry, call.name)
    if not guardrails:
        return arguments
    value: Any
    value, trip = await _checked(run, guardrails, GuardrailCheck(
        "arguments", arguments, f"tool {call.name} arguments", call))
    if trip is not None:
        return await _tripped(run, trip, call.id)
    if not isinstance(value, Mapping):  # a guardrail's rewrite: checked, as it may be anything
        raise TypeError(
            f"run {run.run_id!r}: a guardrail of tool {call.name!r} rewrote the arguments of "
            f"call {call.id!r} into a {type(value).__name__}; a rewrite of arguments must be "
            "a mapping of argument names to values"
        )
    return value if value is arguments else freeze_arguments(value)


async def _check_edits(run: AgentRun, registry: ToolRegistry) -> None:
    """The tool guardrails on the arguments a person edited on resume: a trip ends the
    run; a rewrite replaces the edit the call runs with."""
    edits: dict[str, Any] = {}
    for call in run.open_calls:
        decision = decision_for(run.pending.get(call.id), run.decisions.get(call.id))
        if call.id in run.answered or not isinstance(decision, EditArguments):
            continue
        checked = await checked_arguments(run, registry, call, decision.arguments)
        if isinstance(checked, GuardrailTripped):
            raise checked
        if checked is not decision.arguments:
            edits[call.id] = checked
    if edits:
        run.decisions = FrozenDict({**run.decisions, **edits})


async def check_calls(run: AgentRun, registry: ToolRegistry) -> None:
    """The tool guardrails on the arguments of the open calls not answered yet, before
    the turn is gated, or on a person's edits of them once it was: a trip ends the run
    (no call of the turn runs); a rewrite replaces the call, in the open turn and in the
    model's message that asked for it, so the person approving it and the tool both see
    the rewritten arguments."""
    if run.pending:
        await _check_edits(run, registry)
        return
    agents = run.guardrails.tool
    if not agents and not registry.guarded:
        return  # no guardrail on any tool of the run
    rewritten: dict[str, ToolCall] = {}
    for call in run.open_calls:
        if call.id in run.answered or call.arguments_error is not None or not _for_tool(
            agents, registry, call.name
        ):
            continue
        checked = await checked_arguments(run, registry, call, call.arguments)
        if isinstance(checked, GuardrailTripped):
            raise checked
        if checked is not call.arguments:
            rewritten[call.id] = replace(call, arguments=checked)
    if not rewritten:
        return
    run.open_calls = tuple(rewritten.get(c.id, c) for c in run.open_calls)
    for index in range(len(run.messages) - 1, -1, -1):
        message = run.messages[index]
        if message.tool_calls:
            calls = tuple(rewritten.get(c.id, c) for c in message.tool_calls)
            run.messages[index] = replace(message, tool_calls=calls)
            break
    await run.save()


async def checked_result(
    run: AgentRun, registry: ToolRegistry, call: ToolCall, outcome: ToolOutcome
) -> ToolOutcome:
    """The tool guardrails on what the call answered, before the model reads it: the
    answer as they leave it, or the trip as the call's ``Stopped`` outcome (an outcome
    that is not an answer is left as it is)."""
    if outcome.kind != "answered":
        return outcome
    guardrails = _for_tool(run.guardrails.tool, registry, call.name)
    if not guardrails:
        return outcome
    value, trip = await _checked(run, guardrails, GuardrailCheck(
        "result", outcome.content, f"tool {call.name} result", call))
    if trip is not None:
        return Stopped(await _tripped(run, trip, call.id))
    if value is outcome.content:
        return outcome
    if not isinstance(value, str):
        raise TypeError(
            f"run {run.run_id!r}: a guardrail of tool {call.name!r} rewrote the result of "
            f"call {call.id!r} into a {type(value).__name__}; a rewrite of a result must be "
            "a str"
        )
    return replace(outcome, content=value)


async def checked_output(run: AgentRun, content: str) -> str:
    """The output guardrails on the final answer: the answer as they leave it (a rewrite
    replaces the model's message too), or the run ends on the trip."""
    guardrails = run.guardrails.output
    if not guardrails:
        return content
    value: Any
    value, trip = await _checked(run, guardrails, GuardrailCheck("output", content, "output"))
    if trip is not None:
        raise await _tripped(run, trip)
    if not isinstance(value, str):
        raise TypeError(
            f"run {run.run_id!r}: an output guardrail rewrote the answer into a "
            f"{type(value).__name__}; a rewrite of the output must be a str"
        )
    if value is content:
        return content
    last = run.messages[-1]
    if last.role == "assistant":
        run.messages[-1] = replace(last, content=value)
    return value
