"""AgentRun: one agent run in progress: model calls, tool calls, checkpoints, events.

Cognitions decide *what* to do next; AgentRun does it and saves a checkpoint after
every step, each save a compare-and-set on the checkpoint's version so only one worker
can own a run (steps a crash could not repeat or lose are held and written together:
:mod:`agentkit.agents.durability`). The effects (calling the model, calling a tool,
writing the checkpoint) go through the run's :class:`~agentkit.agents.effects.Effects`,
one value in and one out, so the same loop runs in-process or on another engine. A
turn is settled from its tool calls' outcome values once every call is in.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from agentkit.agents.autonomy import gated_calls
from agentkit.agents.concurrent_calls import answer_concurrently
from agentkit.agents.decisions import (
    AnswerText,
    Decision,
    EditArguments,
    ElicitationReply,
    ForSubRun,
    PendingKind,
    Undecided,
    answers_so_far,
    decision_for,
    not_approved,
    reasoned,
)
from agentkit.agents.durability import needs_durable_checkpoint
from agentkit.agents.effects import Effects, InProcessEffects, outcome_message
from agentkit.agents.events import (
    AgentEvent,
    InterruptEvent,
    StepEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from agentkit.agents.guarding import NO_GUARDRAILS, checked_output, checked_result, first_answer
from agentkit.agents.history import HistoryPolicy
from agentkit.agents.intents import intent_key, unknown_outcome
from agentkit.agents.nested import abandon_sub_run, refuse_path_id, sub_run_key, suspension
from agentkit.agents.outcomes import Answered, Asked, Parked, Stopped, ToolJob, ToolOutcome, Unknown
from agentkit.agents.output import OutputSpec
from agentkit.agents.result import AgentResult, Suspended
from agentkit.agents.run_state import RunState, RunStatus, SubRun, with_usage
from agentkit.agents.summarize import Summarize, compacted
from agentkit.agents.tool_messages import describe_failure
from agentkit.core.contracts.errors import OutputCoercionError, ProviderError, ToolArgumentError
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.traits import traits_of
from agentkit.core.contracts.types import (
    ChatRequest,
    LLMResult,
    Message,
    ModelSettings,
    ToolCall,
    ToolSchema,
    Usage,
)
from agentkit.core.runtime.context import RunContext
from agentkit.state.checkpoints.store_checkpointer import checkpointer_for
from agentkit.state.owners import this_owner
from agentkit.tools.declarations.adapt import Invalid

if TYPE_CHECKING:
    from agentkit.tools.registry import ToolRegistry

__all__ = ["AgentRun", "EventSink", "RunAgent"]

EventSink = Callable[[AgentEvent], None]

_NO_ANSWERS: Mapping[str, Any] = FrozenDict()
_EMPTY: FrozenDict[Any, Any] = FrozenDict()  # immutable, so one serves every checkpoint
_UNDECIDED = Undecided()

class RunAgent(Protocol):
    """What a run reads of its agent to build requests and parse answers."""

    @property
    def name(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def prompt(self) -> str: ...
    @property
    def settings(self) -> ModelSettings: ...
    @property
    def output_spec(self) -> OutputSpec | None: ...
    @property
    def max_output_repairs(self) -> int: ...
    @property
    def history(self) -> HistoryPolicy | Summarize | None: ...
    @property
    def tool_timeout(self) -> float | None: ...


_NO_CALLS: frozenset[str] = frozenset()  # shared: each run held two, 216 bytes each


class AgentRun:
    """The mutable working state of one run, and the steps that change it."""

    # Slots: a thousand runs in flight each held a 1.5 KB attribute dict.
    __slots__ = ("_holds", "_owner", "agent", "answered", "ctx", "decisions", "effects", "error",
                 "extra_system", "guardrail", "guardrails", "history_len", "interrupted", "key",
                 "messages", "nested", "open_calls", "output", "pending", "questions", "repairs",
                 "rerun", "run_id", "session", "session_rows", "session_version", "settings",
                 "sink", "status", "steps", "unsaved", "usage", "usage_by_model", "version")

    def __init__(self, agent: RunAgent, ctx: RunContext, state: RunState, *, key: str,
                 version: int, effects: Effects, sink: EventSink | None = None) -> None:
        self.agent = agent
        self.ctx = ctx
        self.key = key
        self.version = version
        self.sink = sink
        self.effects = effects
        self.run_id = state.run_id
        self.status: RunStatus = state.status
        self.messages: list[Message] = list(state.messages)
        self.usage: Usage = state.usage
        # Frozen, replaced once per model call: checkpoints and the result share it.
        self.usage_by_model: FrozenDict[str, Usage] = state.usage_by_model
        self.steps = state.steps
        self.open_calls: tuple[ToolCall, ...] = state.open_calls
        self.answered: dict[str, Message] = {m.tool_call_id or "": m for m in state.answered}
        self.pending: dict[str, PendingKind] = dict(state.pending)
        self.decisions: Mapping[str, Any] = state.decisions
        self.nested: dict[str, SubRun] = dict(state.nested)
        self.repairs = state.repairs
        self.settings = state.settings
        self.session = state.session
        self.history_len = state.history_len
        self.session_version = state.session_version
        self.session_rows = state.session_rows
        self.questions: dict[str, Any] = dict(state.questions)
        self.extra_system = ""
        self.output: Any = None
        self.error: BaseException | None = None
        self.guardrail = state.guardrail  # set by the trip that ends the run
        # Only agents have guardrails; whatever else drives a run has none.
        self.guardrails = getattr(agent, "guardrails", NO_GUARDRAILS)
        # Calls open and unanswered at recovery: each may have started, so its intent rules.
        self.interrupted: frozenset[str] = _NO_CALLS
        self.rerun: frozenset[str] = _NO_CALLS  # interrupted calls that run again
        self._owner = this_owner()
        self.unsaved = False  # a step's checkpoint is held, not yet written
        # In process a step's checkpoint may be held (Temporal's history takes every one).
        self._holds = isinstance(effects, InProcessEffects)

    # -- checkpoints ----------------------------------------------------------------

    def snapshot(self) -> RunState:
        """The run as a frozen checkpoint (without the history, when the session keeps it)."""
        history = self.history_len if self.session_rows else 0
        return RunState(
            run_id=self.run_id,
            agent=self.agent.name,
            status=self.status,
            messages=tuple(self.messages[history:]),
            usage=self.usage,
            usage_by_model=self.usage_by_model,
            steps=self.steps,
            open_calls=self.open_calls,
            answered=tuple(self.answered.values()),
            pending=FrozenDict(self.pending) if self.pending else _EMPTY,
            decisions=self.decisions,
            repairs=self.repairs,
            settings=self.settings,
            session=self.session,
            history_len=self.history_len - history,
            session_version=self.session_version,
            session_rows=self.session_rows,
            questions=FrozenDict(self.questions) if self.questions else _EMPTY,
            nested=FrozenDict(self.nested) if self.nested else _EMPTY,
            owner=self._owner,
            guardrail=self.guardrail,
        )

    async def save(self, *, durable: bool = True) -> None:
        """Write the checkpoint over the version last written (or loaded); one not ``durable``
        is held for the next durable save (:mod:`agentkit.agents.durability`). Raises
        :class:`RunTakenOver` when another worker has written since."""
        if not durable and self._holds:
            self.unsaved = True
            return
        self.version = await self.effects.save(self.snapshot(), self.version)
        self.unsaved = False

    def emit(self, event: AgentEvent) -> None:
        """Hand an event to the stream, when the run is being streamed."""
        if self.sink is not None:
            self.sink(event)

    # -- model ----------------------------------------------------------------------

    def request(self, tools: tuple[ToolSchema, ...]) -> ChatRequest:
        """The next model request: the agent's prompt, the transcript, the tools, and
        the agent's settings with the run's overrides."""
        spec = self.agent.output_spec
        return ChatRequest(
            model=self.agent.model,
            system=self.agent.prompt + self.extra_system,
            messages=tuple(self.messages),
            tools=tools,
            settings=self.agent.settings.merged(self.settings),
            output_schema=None if spec is None else spec.adapter.schema,
            agent=self.agent.name,
            stable_system=len(self.agent.prompt) if self.extra_system else None,
        )

    async def call_model(self, tools: tuple[ToolSchema, ...] = ()) -> LLMResult:
        """One model call through the chat chain; the answer joins the transcript."""
        self.ctx.check_cancelled()
        request = self.request(tools)
        try:
            result = await first_answer(self, request, tools)  # the input guardrails beside it
        except ProviderError as error:
            # Over the model's window: summarise the history once and ask again.
            shorter = await compacted(self.agent.history, self.messages[: self.history_len],
                                      self.ctx, self.session, error)
            self.messages[: self.history_len] = shorter
            self.history_len = len(shorter)
            request = self.request(tools)
            result = await self.effects.call_model(request)
        self.usage = self.usage + result.usage
        model = result.model or request.model
        self.usage_by_model = with_usage(self.usage_by_model, model, result.usage)
        self.steps += 1
        self.messages.append(result.message)
        self.open_calls = result.tool_calls
        if self.sink is not None:  # events are built only for a run being streamed
            for call in result.tool_calls:
                self.sink(ToolCallEvent(call))
            self.sink(StepEvent(self.steps, result.usage, model=model))
        await self.save(durable=False)  # made durable before a call that acts, or at the end
        return result

    async def finish_with(self, content: str) -> bool:
        """Complete the run with the model's final text.

        With ``Agent(output=...)`` the text is parsed; the first failure adds a repair
        turn telling the model what was wrong and returns False (call the model again);
        a failure after the repair budget raises :class:`OutputCoercionError`.
        """
        content = await checked_output(self, content)
        spec = self.agent.output_spec
        if spec is None:
            self.output = content
        else:
            try:
                self.output = spec.parse(content)
            except Invalid as exc:
                if self.repairs >= self.agent.max_output_repairs:
                    raise OutputCoercionError(
                        self.agent.name, spec.name, exc.reason, content
                    ) from None
                self.repairs += 1
                self.messages.append(Message(role="user", content=spec.repair_prompt(exc.reason)))
                await self.save(durable=False)
                return False
        self.status = "complete"
        await self.save(durable=False)  # durable when the run stops advancing, with its record
        return True

    async def stop(self, status: RunStatus, error: BaseException | None = None) -> None:
        """End the run without an answer (``max_iterations``, ``cancelled``, ...)."""
        self.status = status
        self.error = error
        await self.save(durable=False)  # durable when the run stops advancing, with its record

    # -- waiting for a person -------------------------------------------------------

    def gate(self, registry: ToolRegistry) -> dict[str, PendingKind]:
        """The open calls that must wait for a human, by call id."""
        return gated_calls(self.open_calls, registry, self.ctx.autonomy)

    async def suspend(self, pending: dict[str, PendingKind]) -> None:
        """Pause the run: no call of the open turn runs until a human decides."""
        self.pending = pending
        self.decisions = FrozenDict()
        self.status = "suspended"
        await self.save()
        self.emit(InterruptEvent(self.suspended()))

    def suspended(self) -> Suspended:
        """The :class:`Suspended` record for the calls waiting now."""
        return suspension(self.run_id, self.agent.name, self.open_calls, self.pending,
                          self.nested, self.questions)

    def continue_with(self, decisions: Mapping[str, Any]) -> None:
        """Take a person's checked, routed decisions: the run is running again."""
        self.decisions = decisions
        self.status = "running"

    async def abandon(self, call: ToolCall) -> None:
        """An interrupted call that will not continue as it was: its intent goes, and a
        sub-run it started is ended (see :func:`~agentkit.agents.nested.abandon_sub_run`)."""
        await self.ctx.store.delete(intent_key(self.key, call.id))
        await abandon_sub_run(
            checkpointer_for(self.ctx), self.ctx.store, sub_run_key(self.key, call.id)
        )

    # -- tools ----------------------------------------------------------------------

    async def answer_open_calls(self, registry: ToolRegistry, max_concurrency: int) -> None:
        """Run every open call not yet answered (concurrently, bounded), then settle the
        turn from their outcomes: the answers join the transcript in the order the model
        asked, or, when a call waits for a person, the run suspends with the answers
        already in kept."""
        todo = [c for c in self.open_calls if c.id not in self.answered]
        if self.unsaved and needs_durable_checkpoint(todo, registry):
            await self.save()  # a crash once a call acted must find it open, by its intent
        outcomes: dict[str, ToolOutcome] = {}
        if len(todo) == 1:
            outcomes[todo[0].id] = await self._answer(todo[0], registry, None)
        elif todo:
            outcomes = await answer_concurrently(
                todo, lambda call, lock: self._answer(call, registry, lock), max_concurrency
            )
        waiting: dict[str, ToolOutcome] | None = None
        for call_id, outcome in outcomes.items():
            if outcome.kind != "answered":
                waiting = waiting or {}
                waiting[call_id] = outcome
        if waiting is not None and await self._hold(waiting):
            return
        self.messages.extend([self.answered[c.id] for c in self.open_calls])
        self.open_calls, self.answered, self.pending, self.questions = (), {}, {}, {}
        self.decisions, self.nested = FrozenDict(), {}
        await self.save(durable=False)

    async def _hold(self, waiting: Mapping[str, ToolOutcome]) -> bool:
        """Suspend the run for the calls of the turn that wait for a person (their
        outcome is unknown under gated/manual autonomy, they asked a question mid-call,
        or a sub-run they delegated to waits); the answers already in are kept. Raises
        the refusal of a call that stops the run (budget, cancellation) instead: the
        calls already under way finished and are recorded."""
        held: dict[str, PendingKind] = {}
        parked: dict[str, SubRun] = {}
        for call_id, outcome in waiting.items():
            if isinstance(outcome, Stopped):
                raise outcome.error
            if isinstance(outcome, Unknown):
                held[call_id] = "unknown_outcome"
            elif isinstance(outcome, Asked):
                self.questions[call_id] = FrozenDict({
                    "message": outcome.message,
                    "schema": outcome.schema,
                    "tool": outcome.tool,
                    "source": outcome.source,
                    "answers": answers_so_far(self.questions.get(call_id),
                                              self.decisions.get(call_id)),
                })
                held[call_id] = "elicitation"
            elif isinstance(outcome, Parked):
                parked[call_id] = outcome.sub
                held[call_id] = "nested"
        self.nested = parked
        await self.suspend(held)
        return True

    async def _answer(
        self, call: ToolCall, registry: ToolRegistry, lock: asyncio.Lock | None
    ) -> ToolOutcome:
        """One call's outcome; an answer is checkpointed as soon as it is in."""
        outcome, job = await self._execute(call, registry)
        timed_out = False
        if outcome.kind == "unknown":
            if self.ctx.autonomy in ("gated", "manual"):
                return outcome  # a person decides whether it runs again
            # A call past its timeout left its intent open; the checkpoint holds the
            # answer once it is saved, so the intent goes then (below).
            timed_out = outcome.what is not None
            outcome = Answered(unknown_outcome(call.name, outcome.why, outcome.what), True)
        if outcome.kind != "answered":
            return outcome
        message = outcome_message(call, outcome)
        self.answered[call.id] = message
        if self.sink is not None:
            self.sink(ToolResultEvent(call.id, call.name, outcome.content, outcome.is_error))
        forget = (outcome.recorded or timed_out) and job is not None  # once durable
        if lock is None:
            await self.save(durable=forget)
        else:
            async with lock:  # calls of one turn save one at a time
                await self.save(durable=forget)
        if forget and job is not None:
            await self.effects.forget(job, message)
        return outcome

    async def _execute(
        self, call: ToolCall, registry: ToolRegistry
    ) -> tuple[ToolOutcome, ToolJob | None]:
        """What the call comes to under the person's decision, running it if it runs."""
        slashed = refuse_path_id(call)
        if slashed is not None:
            return Answered(slashed, True), None
        kind = self.pending.get(call.id)
        if kind is None:
            arguments: Mapping[str, Any] = call.arguments
            note, answers = "", _NO_ANSWERS
            decision: Decision = _UNDECIDED
        else:
            decided = await self._decided(call, kind)
            if not isinstance(decided, tuple):
                return decided, None
            arguments, note, answers, decision = decided
        if call.arguments_error is not None:
            accepted: tuple[str, ...] = ()
            if call.name in registry:
                accepted = traits_of(registry.get(call.name)).accepted_arguments or ()
            refused = ToolArgumentError(
                call.name,
                invalid=[("arguments", call.arguments_error)],
                accepted=accepted,
                call_id=call.id,
            )
            return Answered(describe_failure(call.name, refused), True), None
        wake, below = None, _NO_ANSWERS
        if decision.kind == "sub_run":
            wake, below = self.nested.get(call.id), decision.decisions
        again = call.id in self.rerun
        if again:
            self.rerun = self.rerun - {call.id}
        job = ToolJob(self.run_id, self.key, self.ctx.scope, self.ctx.autonomy, call, arguments,
                      self.agent.model, answers, wake, below, note=note, again=again,
                      timeout=self.agent.tool_timeout)
        # The tool's guardrails read what it answered before the model does.
        return await checked_result(self, registry, call, await self.effects.call_tool(job)), job

    async def _decided(
        self, call: ToolCall, kind: PendingKind
    ) -> ToolOutcome | tuple[Mapping[str, Any], str, Mapping[str, Any], Decision]:
        """A waiting call under its decision: its outcome when it does not run, else
        the arguments, note, answers and decision it runs with."""
        arguments: Mapping[str, Any] = call.arguments
        note = ""
        answers = _NO_ANSWERS
        decision = decision_for(kind, self.decisions.get(call.id))
        if kind == "input":
            if not isinstance(decision, AnswerText):
                return Answered("The human gave no answer to this question.", True)
            return Answered(decision.answer)
        if kind == "elicitation":
            if not isinstance(decision, ElicitationReply):
                return Answered("The human gave no answer to the tool's question.", True)
            answers = answers_so_far(self.questions.get(call.id), decision.reply)
        if kind == "nested" and not isinstance(decision, ForSubRun):
            return Parked(self.nested[call.id])  # not decided yet: it stays put
        if kind == "unknown_outcome":
            # Rejected, or run again afresh: either way what the crash left is not continued.
            await self.abandon(call)
            if decision.kind in ("undecided", "reject"):
                why = f"a person decided not to run it again{reasoned(decision, ', saying: ')}"
                return Answered(unknown_outcome(call.name, why), True)
        if kind == "approval" or kind == "unknown_outcome":
            if decision.kind in ("undecided", "reject"):
                return Answered(not_approved(call.name, decision), True)
            if isinstance(decision, EditArguments):
                arguments = decision.arguments
                note = f"(A human edited the arguments before approving: {dict(arguments)!r})\n"
        return arguments, note, answers, decision

    # -- outcome --------------------------------------------------------------------

    def result(self) -> AgentResult:
        """The run as an :class:`AgentResult`."""
        evals: dict[str, Any] = {}
        if self.status == "suspended":
            evals["suspended"] = self.suspended()
        if self.error is not None:
            evals["error"] = self.error
        return AgentResult(
            output=self.output if self.status == "complete" else None,
            stop_reason=self.status if self.status != "running" else "error",
            usage=self.usage,
            usage_by_model=self.usage_by_model,
            evals=FrozenDict(evals),
            messages=tuple(self.messages),
            run_id=self.run_id,
            steps=self.steps,
            guardrail=self.guardrail,
        )

