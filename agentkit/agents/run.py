"""AgentRun: one agent run in progress: model calls, tool calls, checkpoints, events.

Cognitions decide *what* to do next; AgentRun does it and saves a checkpoint after
every step (a model call, each tool result, a suspension, the end), each save a
compare-and-set on the checkpoint's version so only one worker can own a run. The
effects themselves (calling the model, calling a tool, writing the checkpoint) go
through the run's :class:`~agentkit.agents.effects.Effects`, so the same loop runs
in-process or on another engine.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from agentkit.agents.autonomy import should_gate
from agentkit.agents.effects import IN_PROCESS, Effects, OutcomeUnknown
from agentkit.agents.events import (
    AgentEvent,
    InterruptEvent,
    StepEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from agentkit.agents.intents import (
    Intent,
    intent_key,
    settle,
    start_intent,
    unknown_outcome,
)
from agentkit.agents.nested import (
    SubRunSuspended,
    abandon_sub_run,
    calling,
    left_call,
    refuse_path_id,
    sub_run_key,
    suspension,
)
from agentkit.agents.result import AgentResult, Suspended
from agentkit.agents.run_state import PendingKind, RunState, RunStatus, SubRun
from agentkit.agents.summarize import compacted
from agentkit.agents.tool_messages import describe_failure, render_result
from agentkit.core.contracts.errors import (
    HumanInputRequired,
    OutputCoercionError,
    ProviderError,
    RunError,
    ToolArgumentError,
)
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.media import Media
from agentkit.core.contracts.ports import Checkpointer, Tool
from agentkit.core.contracts.traits import traits_of
from agentkit.core.contracts.types import (
    ChatRequest,
    LLMResult,
    Message,
    ToolCall,
    ToolSchema,
    Usage,
)
from agentkit.core.runtime.context import RunContext
from agentkit.state.owners import this_owner
from agentkit.tools.declarations.adapt import Invalid

if TYPE_CHECKING:
    from agentkit.agents.agent import Agent
    from agentkit.tools.registry import ToolRegistry

__all__ = ["AgentRun", "EventSink", "validate_decisions"]

EventSink = Callable[[AgentEvent], None]


class AgentRun:
    """The mutable working state of one run, and the steps that change it."""

    def __init__(
        self,
        agent: Agent,
        ctx: RunContext,
        state: RunState,
        *,
        key: str,
        version: int,
        checkpointer: Checkpointer,
        sink: EventSink | None = None,
        effects: Effects = IN_PROCESS,
    ) -> None:
        self.agent = agent
        self.ctx = ctx
        self.key = key
        self.version = version
        self.checkpointer = checkpointer
        self.sink = sink
        self.effects = effects
        self.run_id = state.run_id
        self.status: RunStatus = state.status
        self.messages: list[Message] = list(state.messages)
        self.usage: Usage = state.usage
        # Frozen and replaced once per model call, so every checkpoint and the result
        # share it rather than copy it.
        self.usage_by_model: FrozenDict[str, Usage] = state.usage_by_model
        self.steps = state.steps
        self.open_calls: tuple[ToolCall, ...] = state.open_calls
        self.answered: dict[str, Message] = {m.tool_call_id or "": m for m in state.answered}
        self.pending: dict[str, PendingKind] = dict(state.pending)
        self.decisions: Mapping[str, Any] = state.decisions
        self.nested: dict[str, SubRun] = dict(state.nested)
        self._parked: dict[str, SubRun] = {}
        self.repairs = state.repairs
        self.settings = state.settings
        self.session = state.session
        self.history_len = state.history_len
        self.session_version = state.session_version
        self.session_rows = state.session_rows
        self.questions: dict[str, Any] = dict(state.questions)
        self._asked: dict[str, Any] = {}
        self.extra_system = ""
        self.output: Any = None
        self.error: BaseException | None = None
        self._save_lock: asyncio.Lock | None = None
        self._stop: RunError | None = None
        self.interrupted: frozenset[str] = frozenset()
        """Calls that were open and unanswered when this run was recovered: each may
        have started before the crash, so its intent is consulted before it runs."""
        self._rerun: set[str] = set()
        """Interrupted calls that run again: a sub-run one of them started continues."""
        self._intents: dict[str, str] = {}
        self._unknown: list[str] = []
        self._owner = this_owner()

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
            pending=FrozenDict(self.pending),
            decisions=self.decisions,
            repairs=self.repairs,
            settings=self.settings,
            session=self.session,
            history_len=self.history_len - history,
            session_version=self.session_version,
            session_rows=self.session_rows,
            questions=FrozenDict(self.questions),
            nested=FrozenDict(self.nested),
            owner=self._owner,
        )

    async def save(self) -> None:
        """Write the checkpoint over the version this run last wrote (or loaded).

        Raises :class:`RunTakenOver` when another worker has written since.
        """
        await self.effects.save(self)

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
            result = await self.effects.call_model(self, request)
        except ProviderError as error:
            # Over the model's window: summarise the history once and ask again.
            shorter = None if error.kind != "context_length" else await compacted(
                self.agent.history, self.messages[: self.history_len], self.ctx, self.session)
            if shorter is None:
                raise
            self.messages[: self.history_len] = shorter
            self.history_len = len(shorter)
            request = self.request(tools)
            result = await self.effects.call_model(self, request)
        self.usage = self.usage + result.usage
        model = result.model or request.model
        earlier = self.usage_by_model.get(model)
        self.usage_by_model = FrozenDict({
            **self.usage_by_model,
            model: result.usage if earlier is None else earlier + result.usage,
        })
        self.steps += 1
        self.messages.append(result.message)
        self.open_calls = result.tool_calls
        for call in result.tool_calls:
            self.emit(ToolCallEvent(call))
        self.emit(StepEvent(self.steps, result.usage, model=model))
        await self.save()
        return result

    async def finish_with(self, content: str) -> bool:
        """Complete the run with the model's final text.

        With ``Agent(output=...)`` the text is parsed; the first failure adds a repair
        turn telling the model what was wrong and returns False (call the model again);
        a failure after the repair budget raises :class:`OutputCoercionError`.
        """
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
                await self.save()
                return False
        self.status = "complete"
        await self.save()
        return True

    async def stop(self, status: RunStatus, error: BaseException | None = None) -> None:
        """End the run without an answer (``max_iterations``, ``cancelled``, ...)."""
        self.status = status
        self.error = error
        await self.save()

    # -- tools ----------------------------------------------------------------------

    def gate(self, registry: ToolRegistry) -> dict[str, PendingKind]:
        """The open calls that must wait for a human, by call id."""
        pending: dict[str, PendingKind] = {}
        autonomy = self.ctx.autonomy
        for call in self.open_calls:
            if call.name not in registry or refuse_path_id(call) is not None:
                continue  # becomes an error result the model reads; nothing to approve
            traits = traits_of(registry.get(call.name))
            key_step = not traits.is_read_only_call(call.arguments)
            if traits.asks_human:
                pending[call.id] = "input"
            elif should_gate(autonomy, traits.requires_approval, key_step):
                pending[call.id] = "approval"
        return pending

    async def suspend(self, pending: dict[str, PendingKind]) -> None:
        """Pause the run: no call of the open turn runs until a human decides."""
        self.pending = pending
        self.status = "suspended"
        await self.save()
        self.emit(InterruptEvent(self.suspended()))

    def suspended(self) -> Suspended:
        """The :class:`Suspended` record for the calls waiting now."""
        return suspension(
            self.run_id, self.agent.name, self.open_calls, self.pending, self.nested,
            self.questions,
        )

    # -- intents --------------------------------------------------------------------

    async def settle_interrupted(self, registry: ToolRegistry) -> bool:
        """Decide what to do with the calls a crash interrupted (see
        :mod:`agentkit.agents.intents`), before any call of the turn runs again.

        Finished calls get their recorded answers; calls that may have acted and cannot
        safely run again are answered as unknown, or, under ``gated``/``manual``
        autonomy, held for a person: then the run suspends and this returns True.
        """
        interrupted, self.interrupted = self.interrupted, frozenset()
        unknown: list[str] = []
        settled: list[ToolCall] = []
        abandoned: list[ToolCall] = []
        for call in self.open_calls:
            if call.id not in interrupted or call.id in self.answered:
                continue
            if call.name not in registry:
                continue
            how, value = await settle(self.ctx, self.key, call, registry.get(call.name))
            if how == "run":
                self._rerun.add(call.id)  # a sub-run it started continues
            elif how == "finished":
                self.answered[call.id] = value
                settled.append(call)
            elif how == "replayed":
                content, attached = render_result(value)
                self.answered[call.id] = self._tool_message(
                    call, content, is_error=False, attached=attached
                )
                settled.append(call)
            elif self.ctx.autonomy in ("gated", "manual"):
                unknown.append(call.id)
            else:
                self.answered[call.id] = self._tool_message(
                    call,
                    unknown_outcome(call.name, f"{call.name!r} is not declared idempotent"),
                    is_error=True,
                )
                abandoned.append(call)
        if unknown:
            held: dict[str, PendingKind] = {
                cid: kind for cid, kind in self.pending.items() if cid not in self.answered
            }
            held.update(dict.fromkeys(unknown, "unknown_outcome"))
            self.decisions = FrozenDict()
            await self.suspend(held)
        else:
            await self.save()
        # The checkpoint holds these answers now, so their intents have served.
        for call in settled:
            await self.ctx.store.delete(intent_key(self.key, call.id))
        for call in abandoned:
            await self._abandon(call)
        return bool(unknown)

    async def _abandon(self, call: ToolCall) -> None:
        """An interrupted call that will not continue as it was: its intent goes, and a
        sub-run it started is ended (see :func:`~agentkit.agents.nested.abandon_sub_run`)."""
        await self.ctx.store.delete(intent_key(self.key, call.id))
        await abandon_sub_run(self.checkpointer, self.ctx.store, sub_run_key(self.key, call.id))

    @staticmethod
    def _tool_message(
        call: ToolCall, content: str, *, is_error: bool, attached: tuple[Media, ...] = ()
    ) -> Message:
        return Message(
            role="tool", content=content, tool_call_id=call.id, name=call.name, is_error=is_error,
            attachments=attached,
        )

    async def answer_open_calls(self, registry: ToolRegistry, max_concurrency: int) -> None:
        """Run every open call not yet answered (concurrently, bounded), then add the
        answers to the transcript in the order the model asked. A call whose outcome is
        unknown under gated/manual autonomy suspends the run instead."""
        todo = [c for c in self.open_calls if c.id not in self.answered]
        if len(todo) == 1:
            await self._answer(todo[0], registry)
        elif todo:
            self._save_lock = asyncio.Lock()
            limit = asyncio.Semaphore(max_concurrency)

            async def bounded(call: ToolCall) -> None:
                async with limit:
                    await self._answer(call, registry)

            tasks: list[asyncio.Task[None]] = []
            try:
                async with asyncio.TaskGroup() as group:
                    for call in todo:
                        tasks.append(group.create_task(bounded(call)))
            except BaseExceptionGroup as group_error:
                first = group_error.exceptions[0]
                raise first from first.__cause__
            finally:
                self._save_lock = None
            # A TaskGroup ignores a child that ends cancelled; a tool that raised
            # CancelledError must still stop the run, as it does when it runs alone.
            if any(task.cancelled() for task in tasks):
                raise asyncio.CancelledError
        if self._stop is not None:
            stop, self._stop = self._stop, None
            raise stop
        held: dict[str, PendingKind] = {}
        if self._unknown:
            # Calls whose outcome the engine could not learn, under gated/manual autonomy:
            # the turn's other answers are kept, and a person decides about these.
            held.update(dict.fromkeys(self._unknown, "unknown_outcome"))
            self._unknown = []
        if self._asked:
            # A tool asked a person something mid-call: the calls that finished keep their
            # answers, and the ones that asked run again on resume, with the answer.
            asked, self._asked = self._asked, {}
            self.questions.update(asked)
            held.update(dict.fromkeys(asked, "elicitation"))
        if self._parked:
            # Calls waiting on suspended sub-runs: the turn is not over, so this run
            # suspends too; the answers already in stay in the checkpoint.
            self.nested, self._parked = self._parked, {}
            held.update(dict.fromkeys(self.nested, "nested"))
        if held:
            self.decisions = FrozenDict()
            await self.suspend(held)
            return
        self.messages.extend(self.answered[c.id] for c in self.open_calls)
        self.open_calls = ()
        self.answered = {}
        self.pending = {}
        self.decisions = FrozenDict()
        self.questions = {}
        self.nested = {}
        await self.save()

    async def _answer(self, call: ToolCall, registry: ToolRegistry) -> None:
        if self._stop is not None:
            return  # the run is stopping: calls not yet started never start
        try:
            content, is_error, attached = await self._execute(call, registry)
        except HumanInputRequired as exc:
            earlier = self.questions.get(call.id)
            self._asked[call.id] = FrozenDict({
                "message": exc.message,
                "schema": exc.schema,
                "tool": exc.tool,
                "source": exc.source,
                "answers": _answers(earlier, self.decisions.get(call.id)),
            })
            return
        except SubRunSuspended as exc:
            self._parked[call.id] = exc.sub
            return
        except RunError as exc:
            # A refusal that stops the run (budget, cancellation): this call did not run,
            # but calls of the same turn already under way finish and are recorded.
            if self._stop is None:
                self._stop = exc
            return
        except OutcomeUnknown as exc:
            # The call may or may not have acted and is not run again (see intents).
            if self.ctx.autonomy in ("gated", "manual"):
                self._unknown.append(call.id)
                return
            content, is_error, attached = unknown_outcome(call.name, exc.why, exc.what), True, ()
        message = self._tool_message(call, content, is_error=is_error, attached=attached)
        key = intent_key(self.key, call.id)
        started = self._intents.pop(call.id, None)
        if started is not None:
            await self.ctx.store.set(key, Intent(call.id, call.name, started, message))
        self.answered[call.id] = message
        self.emit(ToolResultEvent(call.id, call.name, content, is_error))
        if self._save_lock is None:
            await self.save()
        else:
            async with self._save_lock:
                await self.save()
        if started is not None:
            await self.ctx.store.delete(key)

    async def _execute(
        self, call: ToolCall, registry: ToolRegistry
    ) -> tuple[str, bool, tuple[Media, ...]]:
        slashed = refuse_path_id(call)
        if slashed is not None:
            return slashed, True, ()
        arguments: Mapping[str, Any] = call.arguments
        note = ""
        kind = self.pending.get(call.id)
        decision = self.decisions.get(call.id)
        if kind == "input":
            answer = decision.get("answer") if isinstance(decision, Mapping) else None
            if not isinstance(answer, str):
                return "The human gave no answer to this question.", True, ()
            return answer, False, ()
        answers: Mapping[str, Any] = FrozenDict()
        if kind == "elicitation":
            if decision is None:
                return "The human gave no answer to the tool's question.", True, ()
            answers = _answers(self.questions.get(call.id), decision)
        if kind == "nested" and decision is None:
            raise SubRunSuspended(self.nested[call.id])  # not decided yet: it stays put
        if kind == "unknown_outcome":
            # Rejected, or run again afresh: either way what the crash left is not continued.
            await self._abandon(call)
            if decision is None or decision == "reject":
                return unknown_outcome(call.name, "a person decided not to run it again"), True, ()
        if kind == "approval" or kind == "unknown_outcome":
            if decision is None or decision == "reject":
                return (
                    f"The call to {call.name!r} was not approved by a human, so it did not run. "
                    "Do not retry it unchanged; continue without it or ask differently.",
                    True,
                    (),
                )
            if isinstance(decision, Mapping):
                arguments = decision
                note = f"(A human edited the arguments before approving: {dict(decision)!r})\n"
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
            return describe_failure(call.name, refused), True, ()
        wake = self.nested.get(call.id) if kind == "nested" else None
        again = call.id in self._rerun
        self._rerun.discard(call.id)
        token = calling(self.key, call.id, wake, decision, again=again)
        try:
            content, is_error, attached = await self.effects.call_tool(
                self, call, arguments, registry, answers=answers
            )
        finally:
            left_call(token)
        return (content if is_error else note + content), is_error, attached

    async def _start_intent(self, call: ToolCall, arguments: Mapping[str, Any]) -> None:
        """Record that this side-effecting call is about to start."""
        self._intents[call.id] = await start_intent(self.ctx, self.key, call, arguments)

    async def _drop_intent(self, call: ToolCall) -> None:
        if self._intents.pop(call.id, None) is not None:
            await self.ctx.store.delete(intent_key(self.key, call.id))

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
        )


def _answers(question: Mapping[str, Any] | None, decision: Any) -> Mapping[str, Any]:
    """The answers a call has so far: earlier ones, plus ``decision`` for the question
    it asked last."""
    if question is None:
        return FrozenDict()
    answers = dict(question.get("answers") or {})
    if decision is not None:
        answers[question["message"]] = decision
    return FrozenDict(answers)


def _key_step(tool: Tool, call: ToolCall) -> bool:
    """Whether this call changes the world: the tool's declaration, unless the tool can
    tell that this particular call only reads (``is_read_only_call(arguments)``, as
    FileTool's ``view`` does)."""
    traits = traits_of(tool)
    return traits.side_effecting and not traits.is_read_only_call(call.arguments)


def validate_decisions(
    run_id: str, pending: Mapping[str, str], decisions: Mapping[str, Any]
) -> Mapping[str, Any]:
    """Check a resume's decisions before anything changes; returns them frozen."""
    unknown = [call_id for call_id in decisions if call_id not in pending]
    if unknown:
        raise ValueError(
            f"run {run_id!r}: decisions name call id(s) {unknown} that are not pending; "
            f"pending calls: {sorted(pending)}"
        )
    for call_id, decision in decisions.items():
        if pending[call_id] == "elicitation":
            if not _elicitation_decision(decision):
                raise ValueError(
                    f"run {run_id!r}: call {call_id!r} waits for the answer to a tool's "
                    "question; its decision must be {'action': 'accept', 'content': {...}}, "
                    "{'action': 'decline'}, {'action': 'cancel'} or {'answer': '...'}, "
                    f"got {decision!r}"
                )
        elif pending[call_id] == "input":
            if not (isinstance(decision, Mapping) and isinstance(decision.get("answer"), str)):
                raise ValueError(
                    f"run {run_id!r}: call {call_id!r} asks the human a question; its decision "
                    f"must be {{'answer': '...'}}, got {decision!r}"
                )
        elif not (decision in ("approve", "reject") or isinstance(decision, Mapping)):
            raise ValueError(
                f"run {run_id!r}: decision for call {call_id!r} must be 'approve', 'reject' "
                f"or a dict of edited arguments, got {decision!r}"
            )
    return FrozenDict({k: v for k, v in decisions.items()})


def _elicitation_decision(decision: Any) -> bool:
    if not isinstance(decision, Mapping):
        return False
    if "answer" in decision:
        return isinstance(decision["answer"], str) and len(decision) == 1
    action = decision.get("action")
    if action == "accept":
        return isinstance(decision.get("content", {}), Mapping)
    return action in ("decline", "cancel")
