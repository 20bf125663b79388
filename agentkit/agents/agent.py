"""Agent: a name, a model, a prompt and a cognition; runs, streams, suspends and resumes."""

from __future__ import annotations

import asyncio
import dataclasses
import math
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

from agentkit.agents.cognition.single_call import SingleCallCognition
from agentkit.agents.conversation import (
    Opening,
    append_left_turn,
    commit_turn,
    continued,
    join_session,
    rejoined,
)
from agentkit.agents.events import AgentEvent, FinalEvent
from agentkit.agents.history import HistoryPolicy
from agentkit.agents.nested import route_decisions, run_delegated, suspension
from agentkit.agents.output import OutputSpec
from agentkit.agents.result import AgentResult
from agentkit.agents.run import AgentRun, EventSink, validate_decisions
from agentkit.agents.run_state import TERMINAL, RunState
from agentkit.agents.summarize import Summarize
from agentkit.core.contracts.errors import (
    CheckpointCorrupt,
    OutputCoercionError,
    RunError,
    RunNotResumable,
    RunTakenOver,
)
from agentkit.core.contracts.frozen import freeze
from agentkit.core.contracts.ports import Checkpointer
from agentkit.core.contracts.types import Message, ModelSettings
from agentkit.core.runtime.context import RunContext, new_run_id
from agentkit.core.runtime.spans import open_span, set_cost
from agentkit.state.checkpoints.store_checkpointer import (
    StoreCheckpointer,
    missing_checkpoint_hint,
)
from agentkit.state.memory.source import MemoryItem, MemorySource
from agentkit.state.owners import owner_alive, this_owner

__all__ = ["Agent", "Cognition", "memory_prompt"]

_NO_SETTINGS = ModelSettings()

_ADVANCING: set[str] = set()
"""Checkpoint keys of the runs this process is advancing now: a run whose checkpoint
names this process as its owner is only free to recover when it is not among them."""


class Cognition(Protocol):
    """How an agent gets from a task to an answer: drives an :class:`AgentRun`."""

    async def advance(self, run: AgentRun) -> None:
        """Continue ``run`` until it completes, suspends or stops."""
        ...


def _checkpointer(ctx: RunContext) -> Checkpointer:
    checkpointer = ctx.checkpointer
    if checkpointer is None:
        return StoreCheckpointer(ctx.store)
    assert hasattr(checkpointer, "save"), f"ctx.checkpointer {checkpointer!r} is not a Checkpointer"
    return checkpointer


async def _load(checkpointer: Checkpointer, key: str, run_id: str) -> tuple[RunState | None, int]:
    """The run's checkpoint; a corrupt one raises :class:`CheckpointCorrupt` naming the run."""
    try:
        state, version = await checkpointer.load(key)
    except CheckpointCorrupt as exc:
        raise exc.for_run(run_id) from None
    if state is not None and not isinstance(state, RunState):
        raise CheckpointCorrupt(
            key, f"expected an agent run's state, found a {type(state).__name__}", run_id=run_id
        )
    return state, version


def _describe(owner: str) -> str:
    host, _, rest = owner.partition("|")
    pid = rest.partition("|")[0]
    return "this process" if owner == this_owner() else f"process {pid} on {host}"


def _quote(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def memory_prompt(items: Sequence[MemoryItem]) -> str:
    """Recalled items as the block appended to the system prompt ("" for none)."""
    if not items:
        return ""
    blocks = "\n".join(
        f'<memory source="{_quote(item.source)}">\n{item.content}\n</memory>' for item in items
    )
    return (
        "Notes recalled from your memory for this task (they may be out of date):\n"
        f"<memories>\n{blocks}\n</memories>"
    )


class Agent:
    """An agent: ``await agent.run(task, ctx)`` returns an :class:`AgentResult`.

    Tools live on the cognition (``cognition=ReActCognition(tools=[...])``); without one
    the agent makes a single model call. ``output=`` (a dataclass, attrs class,
    Pydantic model or JSON Schema) makes the answer structured and validated.

    ``memory=`` (a :class:`~agentkit.state.memory.MemorySource`) is queried with the task
    when a run starts or resumes; the ``memory_k`` best items are added to the system
    prompt of every model request of that run.

    Every step is checkpointed through the context's checkpointer (by default one over
    ``ctx.store``), so a run suspended for approval can be resumed with
    :meth:`resume`, and a run whose worker died can be continued with :meth:`recover`,
    in another process if the store is durable.

    ``settings=`` (:class:`ModelSettings`) are the agent's model settings; a run's own
    ``settings=`` override them field by field. ``run(task, ctx, session="...")``
    continues a conversation kept in ``ctx.store`` under the context's scope: the model
    sees the session's earlier turns, and the run's turn is appended once it completes.
    ``history=`` (:class:`HistoryPolicy`) bounds how much history a run carries, or
    (:class:`Summarize`) replaces its older turns by a summary. ``tool_timeout=`` is how
    many seconds a tool call may run when its tool declares no ``timeout=`` itself.
    """

    __slots__ = (
        "cognition",
        "description",
        "history",
        "max_output_repairs",
        "memory",
        "memory_k",
        "model",
        "name",
        "output",
        "output_spec",
        "prompt",
        "settings",
        "tool_timeout",
    )

    def __init__(
        self,
        name: str,
        model: str,
        prompt: str,
        cognition: Cognition | None = None,
        output: Any = None,
        *,
        description: str | None = None,
        max_output_repairs: int = 1,
        memory: MemorySource | None = None,
        memory_k: int = 5,
        settings: ModelSettings | None = None,
        history: HistoryPolicy | Summarize | None = None,
        tool_timeout: float | None = None,
        tools: None = None,
    ) -> None:
        if tools is not None:
            raise TypeError(
                "Agent has no tools= keyword: tools live on the cognition. "
                "Use Agent(..., cognition=ReActCognition(tools=[...]))."
            )
        if not name or not isinstance(name, str):
            raise ValueError(f"an agent needs a non-empty name, got {name!r}")
        if memory is not None and not isinstance(memory, MemorySource):
            raise TypeError(
                f"Agent(memory=...) takes a memory source (an object with "
                f"`async def query(text, k, ctx)`, e.g. FileMemory), got {memory!r}"
            )
        if memory_k < 1:
            raise ValueError(f"memory_k must be at least 1, got {memory_k}")
        if settings is not None and not isinstance(settings, ModelSettings):
            raise TypeError(f"Agent(settings=...) takes a ModelSettings, got {settings!r}")
        if history is not None and not isinstance(history, HistoryPolicy | Summarize):
            raise TypeError(
                "Agent(history=...) takes a HistoryPolicy(max_messages=..., max_tokens=...) "
                f"or a Summarize(max_tokens=..., keep_last=...), got {history!r}"
            )
        if tool_timeout is not None and (
            isinstance(tool_timeout, bool) or not isinstance(tool_timeout, int | float)
            or not 0 < tool_timeout < math.inf
        ):
            raise ValueError(
                "Agent(tool_timeout=...) takes a positive number of seconds or None, "
                f"got {tool_timeout!r}"
            )
        if isinstance(history, Summarize) and history.model is None:
            history = dataclasses.replace(history, model=model)  # the agent's own writes
        self.name = name
        self.model = model
        self.prompt = prompt
        self.cognition: Cognition = cognition if cognition is not None else SingleCallCognition()
        self.output = output
        self.output_spec = None if output is None else OutputSpec(output)
        self.description = description
        self.max_output_repairs = max_output_repairs
        self.memory = memory
        self.memory_k = memory_k
        self.settings = settings if settings is not None else _NO_SETTINGS
        self.history = history
        self.tool_timeout = None if tool_timeout is None else float(tool_timeout)

    async def _recall(self, task: str, ctx: RunContext) -> str:
        """The system-prompt addition for ``task``: the memory's best items, or ""."""
        if self.memory is None:
            return ""
        items = tuple(await self.memory.query(task, self.memory_k, ctx))[: self.memory_k]
        ctx.emit("memory.recalled", agent=self.name, sources=[item.source for item in items])
        block = memory_prompt(items)
        return ("\n\n" if block and self.prompt else "") + block

    @staticmethod
    def _task_of(state: RunState) -> str:
        turn = state.messages[state.history_len :]
        return next((m.content for m in turn if m.role == "user"), "")

    def _key(self, ctx: RunContext) -> str:
        # Nested runs (an agent called as a tool) may run several times, even at once,
        # inside one outer run, so each gets its own checkpoint; only top-level runs
        # are resumable by run id.
        if ctx.depth == 0:
            return f"{ctx.correlation_id}:{self.name}"
        return f"{ctx.correlation_id}:{self.name}:d{ctx.depth}:{new_run_id()}"

    async def run(
        self,
        task: str,
        ctx: RunContext,
        *,
        session: str | None = None,
        history: Sequence[Message] | None = None,
        settings: ModelSettings | None = None,
    ) -> AgentResult:
        """Run the agent on ``task`` until it answers, suspends or stops.

        ``session=`` continues the conversation of that id in ``ctx.store`` (for
        ``ctx.scope``); ``history=`` starts from messages the caller keeps instead
        (``result.messages`` of the previous run continues it). ``settings=``
        overrides the agent's model settings for this run.

        Raises :class:`SessionBusy` when the run completed but another run appended a
        turn to the session since this one read it; the result is on the error.
        """
        return await self._start(task, ctx, None, Opening(session, history, settings))

    def stream(
        self,
        task: str,
        ctx: RunContext,
        *,
        session: str | None = None,
        history: Sequence[Message] | None = None,
        settings: ModelSettings | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """Run the agent on ``task``, yielding typed events as they happen; the last is a
        :class:`FinalEvent` with the :class:`AgentResult`. Keywords as for :meth:`run`."""
        opening = Opening(session, history, settings)
        return _events(lambda sink: self._start(task, ctx, sink, opening))

    def stream_resume(
        self,
        run_id: str,
        decisions: Mapping[str, Any],
        ctx: RunContext,
        *,
        session: str | None = None,
        settings: ModelSettings | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """:meth:`resume`, yielding events as the continued run makes progress."""
        return _events(
            lambda sink: self._resume(run_id, decisions, ctx, sink, session, settings)
        )

    async def run_delegated(self, task: str, ctx: RunContext) -> AgentResult:
        """Run as the sub-run of the tool call being executed (``as_tool`` calls this):
        its suspension suspends the run above (see :mod:`agentkit.agents.nested`)."""
        result: AgentResult = await run_delegated(self, task, ctx)
        return result

    async def _start_at(self, key: str, task: str, ctx: RunContext) -> AgentResult:
        return await self._start(task, ctx, None, key=key)

    async def _resume_at(
        self, key: str, decisions: Mapping[str, Any], ctx: RunContext
    ) -> AgentResult:
        return await self._resume(ctx.correlation_id, decisions, ctx, None, key=key)

    async def _continue_at(self, key: str, task: str, ctx: RunContext) -> AgentResult:
        """The sub-run under ``key`` whose delegating call runs again after a crash:
        recovered if it was running (its interrupted calls settled by their intents),
        its result as checkpointed if it had suspended or ended, started afresh if it
        never saved a step or ended by raising (its failure was the call's outcome, and
        a failed call runs again from the start)."""
        checkpointer = _checkpointer(ctx)
        state, version = await _load(checkpointer, key, ctx.correlation_id)
        # A checkpoint for another task is an earlier call's that reused this call id.
        if (
            state is None
            or state.agent != self.name
            or self._task_of(state) != task
            or state.status == "error"
        ):
            return await self._start_at(key, task, ctx)
        if state.status == "running":
            return await self._recover(ctx.correlation_id, ctx, key=key)
        run = AgentRun(self, ctx, state, key=key, version=version, checkpointer=checkpointer)
        if state.status == "complete":
            final = next(m.content for m in reversed(state.messages) if m.role == "assistant")
            run.output = final if self.output_spec is None else self.output_spec.parse(final)
        return run.result()

    async def _start(
        self,
        task: str,
        ctx: RunContext,
        sink: EventSink | None,
        opening: Opening | None = None,
        *,
        key: str | None = None,
    ) -> AgentResult:
        opening = opening or Opening()
        checkpointer = _checkpointer(ctx)
        # A delegated run's key names the call that starts it: starting that call
        # again starts the sub-run afresh (after a crash, _continue_at continues it).
        fresh = key is not None
        key = key or self._key(ctx)
        existing, version = await _load(checkpointer, key, ctx.correlation_id)
        if not fresh and existing is not None and existing.status not in TERMINAL:
            raise RunNotResumable(
                ctx.correlation_id,
                f"agent {self.name!r} already has a {existing.status} run under this run id; "
                + (
                    "resume it with agent.resume(...)"
                    if existing.status == "suspended"
                    else "continue it with agent.recover(...)"
                )
                + " or start the new run on a fresh context",
            )
        extra_system = await self._recall(task, ctx)
        prior, session_version = await opening.history_for(self.history, ctx, checkpointer)
        state = RunState(
            run_id=ctx.correlation_id,
            agent=self.name,
            status="running",
            messages=(*prior, Message(role="user", content=task)),
            settings=opening.settings,
            session=opening.session,
            history_len=len(prior),
            session_version=session_version,
            session_rows=opening.session is not None,
        )
        run = AgentRun(
            self, ctx, state, key=key, version=version, checkpointer=checkpointer, sink=sink
        )
        run.extra_system = extra_system
        try:
            await run.save()  # the claim: a compare-and-set over what was loaded
        except RunTakenOver:
            raise RunNotResumable(
                ctx.correlation_id,
                f"another worker started agent {self.name!r} under this run id at the same "
                "moment, and got there first; start the new run on a fresh context",
            ) from None
        await join_session(run)
        return await self._advance(run)

    async def _advance(self, run: AgentRun) -> AgentResult:
        _ADVANCING.add(run.key)
        try:
            return await self._advance_claimed(run)
        finally:
            _ADVANCING.discard(run.key)

    async def _advance_claimed(self, run: AgentRun) -> AgentResult:
        ctx = run.ctx
        if ctx.tracer is None:
            return await self._advance_untraced(run)
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": self.name,
            "gen_ai.request.model": self.model,
            "agentkit.run_id": ctx.correlation_id,
        }
        with open_span(ctx.tracer, f"invoke_agent {self.name}", attributes) as span:
            result = await self._advance_untraced(run)
            span.set_attribute("gen_ai.usage.input_tokens", result.usage.input_tokens)
            span.set_attribute("gen_ai.usage.output_tokens", result.usage.output_tokens)
            span.set_attribute("gen_ai.usage.cache_read.input_tokens",
                               result.usage.cache_read_tokens)
            span.set_attribute("gen_ai.usage.cache_creation.input_tokens",
                               result.usage.cache_write_tokens)
            span.set_attribute("agentkit.stop_reason", result.stop_reason)
            set_cost(span, result.usage)
            return result

    async def _advance_untraced(self, run: AgentRun) -> AgentResult:
        try:
            await self.cognition.advance(run)
        except RunTakenOver:
            raise  # the run is another worker's now: write nothing more
        except RunError as exc:
            await run.stop(exc.stop_reason, exc)  # type: ignore[arg-type]
        except OutputCoercionError as exc:
            # Final, not transient: end the checkpoint too, or the run id stays "running"
            # and a new run on it is refused with advice to resume.
            await run.stop("error", exc)
            raise
        result = run.result()
        if run.session is not None and run.status == "complete":
            await commit_turn(run, result)
        return result

    async def _claim(
        self, run_id: str, ctx: RunContext, *, want: str, key: str | None = None,
        unappended: bool = False,
    ) -> tuple[RunState, int, str]:
        """The run's checkpoint, when it is ``want``; with ``unappended``, a completed
        session run is taken too (its turn may not be in the session yet)."""
        checkpointer = _checkpointer(ctx)
        key = key or f"{run_id}:{self.name}"
        state, version = await _load(checkpointer, key, run_id)
        if state is None:
            raise RunNotResumable(
                run_id,
                f"agent {self.name!r} has no checkpoint for this run"
                + missing_checkpoint_hint(checkpointer),
            )
        if state.status != want and not (
            unappended and state.status == "complete" and state.session is not None
        ):
            raise RunNotResumable(run_id, f"it is {state.status}, not {want}")
        return state, version, key

    async def resume(
        self,
        run_id: str,
        decisions: Mapping[str, Any],
        ctx: RunContext,
        *,
        session: str | None = None,
        settings: ModelSettings | None = None,
    ) -> AgentResult:
        """Continue a suspended run with a human's decisions, per pending call id:
        ``"approve"``, ``"reject"`` (the model is told), a dict of edited arguments
        (validated like any model call), or ``{"answer": "..."}`` for ``ask_human``.
        A pending call with no decision is rejected, except that a sub-run given no
        decision at all stays suspended (with the runs above it).

        A call waiting deep inside a sub-agent has a path id, ``"c1/s3"``; its decision
        goes to the sub-run that owns it, which continues, and its answer becomes the
        result of ``c1``. Raises ``ValueError`` for an unknown id, listing the pending
        ones.

        A run started with ``session=`` appends its turn to that session when it
        completes (``session=`` here, if given, must name the same session);
        ``settings=`` overrides the model settings from here on.

        Raises :class:`RunNotResumable` when the run is not suspended, or when another
        worker resumed it first.
        """
        return await self._resume(run_id, decisions, ctx, None, session, settings)

    async def _resume(
        self,
        run_id: str,
        decisions: Mapping[str, Any],
        ctx: RunContext,
        sink: EventSink | None,
        session: str | None = None,
        settings: ModelSettings | None = None,
        *,
        key: str | None = None,
    ) -> AgentResult:
        state, version, key = await self._claim(run_id, ctx, want="suspended", key=key)
        state = continued(state, session, settings)
        waiting = suspension(run_id, self.name, state.open_calls, state.pending, state.nested)
        checked = route_decisions(
            validate_decisions(run_id, waiting.kinds, decisions), state.nested
        )
        ctx = ctx if ctx.correlation_id == run_id else ctx.for_run(run_id)
        state = await rejoined(state, self.history, ctx)
        run = AgentRun(
            self, ctx, state, key=key, version=version, checkpointer=_checkpointer(ctx),
            sink=sink,
        )
        run.extra_system = await self._recall(self._task_of(state), ctx)
        run.decisions = freeze(checked)
        run.status = "running"
        try:
            await run.save()
        except RunTakenOver:
            raise RunNotResumable(run_id, "another worker resumed it first") from None
        return await self._advance(run)

    async def recover(
        self,
        run_id: str,
        ctx: RunContext,
        *,
        session: str | None = None,
        settings: ModelSettings | None = None,
    ) -> AgentResult:
        """Continue a run whose worker died, from its last checkpoint.

        Finished tool calls are not run again, and a side-effecting call the crash
        interrupted is settled by its intent (see :mod:`agentkit.agents.intents`).
        Raises :class:`RunNotResumable` before running any step when the run is not
        running, when its worker is still alive on this machine, or when another worker
        took it over first. A worker on another machine cannot be checked: taking the
        run over bumps its checkpoint version, so if that worker was alive after all,
        its next save raises :class:`RunTakenOver` and it stops: one writer per run.
        ``session=`` and ``settings=`` as for :meth:`resume`.

        A delegating call the crash interrupted that may run again (declared
        idempotent, or not side-effecting) continues its sub-run from the sub-run's
        checkpoint; one answered as "outcome unknown" ends its sub-run.
        """
        return await self._recover(run_id, ctx, session, settings)

    async def _recover(
        self,
        run_id: str,
        ctx: RunContext,
        session: str | None = None,
        settings: ModelSettings | None = None,
        *,
        key: str | None = None,
    ) -> AgentResult:
        state, version, key = await self._claim(
            run_id, ctx, want="running", key=key, unappended=True
        )
        state = continued(state, session, settings)
        if state.status == "complete":
            return await append_left_turn(self, state, key, version, ctx, _checkpointer(ctx))
        if state.owner and owner_alive(state.owner) and (
            state.owner != this_owner() or key in _ADVANCING
        ):
            raise RunNotResumable(
                run_id,
                f"its worker ({_describe(state.owner)}) is still running it; recover only "
                "takes over a run whose worker died",
            )
        ctx = ctx if ctx.correlation_id == run_id else ctx.for_run(run_id)
        state = await rejoined(state, self.history, ctx)
        run = AgentRun(
            self, ctx, state, key=key, version=version, checkpointer=_checkpointer(ctx)
        )
        run.interrupted = frozenset(c.id for c in run.open_calls if c.id not in run.answered)
        run.extra_system = await self._recall(self._task_of(state), ctx)
        try:
            await run.save()
        except RunTakenOver:
            raise RunNotResumable(run_id, "another worker took it over first") from None
        return await self._advance(run)

    def __repr__(self) -> str:
        return f"Agent(name={self.name!r}, model={self.model!r}, cognition={self.cognition!r})"


async def _events(
    start: Callable[[EventSink], Awaitable[AgentResult]],
) -> AsyncIterator[AgentEvent]:
    """Drive ``start`` in a task, yielding the events it emits, then its FinalEvent."""
    queue: asyncio.Queue[AgentEvent | None] = asyncio.Queue()

    async def drive() -> AgentResult:
        try:
            return await start(queue.put_nowait)
        finally:
            queue.put_nowait(None)

    task = asyncio.ensure_future(drive())
    try:
        while (event := await queue.get()) is not None:
            yield event
        yield FinalEvent(await task)
    finally:
        if not task.done():
            task.cancel()
