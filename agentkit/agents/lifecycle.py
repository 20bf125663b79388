"""The run lifecycle: open, claim, resume, recover and advance an agent run.

Every engine goes through these functions: ``Agent`` (in-process), the delegated runs
of :mod:`agentkit.agents.nested`, and the Temporal workflow, which builds its run with
:func:`fresh_state`, hands it its own effects and calls :func:`decide` and
:func:`advance` like the others; ``Workflow`` loads and claims its own checkpoints with
:func:`load_checkpoint` and :func:`claim_checkpoint`. A run is *claimed* by its first save: a
compare-and-set over the checkpoint version it loaded, so of two workers that open,
resume or recover the same run at once, one goes on and the other is refused with
:class:`~agentkit.core.contracts.errors.RunNotResumable`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from agentkit.agents.conversation import (
    Opening,
    commit_turn,
    continued,
    join_session,
    rejoined,
    trimmed,
)
from agentkit.agents.decisions import checked, routed
from agentkit.agents.effects import Effects, InProcessEffects
from agentkit.agents.recall import memory_prompt, recall
from agentkit.agents.result import AgentResult
from agentkit.agents.run import AgentRun, EventSink, RunAgent
from agentkit.agents.run_state import TERMINAL, RunState
from agentkit.agents.saves import claims_blind, save_registered
from agentkit.agents.summarize import Summarize
from agentkit.agents.task import Task, task_message
from agentkit.core.contracts.errors import (
    OutputCoercionError,
    RunError,
    RunNotResumable,
    RunTakenOver,
)
from agentkit.core.contracts.ports import Checkpointer
from agentkit.core.contracts.state_errors import CheckpointCorrupt, VersionConflict
from agentkit.core.contracts.types import Message, ModelSettings
from agentkit.core.runtime.context import RunContext, new_run_id
from agentkit.core.runtime.spans import open_span, set_cost
from agentkit.state.checkpoints.store_checkpointer import (
    checkpointer_for,
    missing_checkpoint_hint,
)
from agentkit.state.owners import owner_alive, this_owner

if TYPE_CHECKING:
    from agentkit.state.memory.source import MemorySource

__all__ = [
    "Cognition",
    "LifecycleAgent",
    "advance",
    "claim_checkpoint",
    "continue_at",
    "decide",
    "fresh_state",
    "hosted_run",
    "load_checkpoint",
    "memory_prompt",
    "open_run",
    "recover",
    "resume_run",
]

T = TypeVar("T")

_ADVANCING: set[str] = set()
"""Checkpoint keys of the runs this process is advancing now: a run whose checkpoint names
this process as its owner is only free to recover when it is not among them."""


class Cognition(Protocol):
    """How an agent gets from a task to an answer: drives an :class:`AgentRun`."""

    async def advance(self, run: AgentRun) -> None:
        """Continue ``run`` until it completes, suspends or stops."""
        ...


class LifecycleAgent(RunAgent, Protocol):
    """What the lifecycle reads of an agent, beyond what its runs read."""

    @property
    def cognition(self) -> Cognition: ...
    @property
    def memory(self) -> MemorySource | None: ...
    @property
    def memory_k(self) -> int: ...


async def load_checkpoint(
    checkpointer: Checkpointer, key: str, run_id: str, kind: type[T], what: str
) -> tuple[T | None, int]:
    """The checkpoint under ``key`` and its version; a corrupt one, or one that is not
    a ``kind`` (``what`` names it), raises :class:`CheckpointCorrupt` naming the run."""
    try:
        state, version = await checkpointer.load(key)
    except CheckpointCorrupt as exc:
        raise exc.for_run(run_id) from None
    if state is not None and not isinstance(state, kind):
        raise CheckpointCorrupt(
            key, f"expected {what}, found a {type(state).__name__}", run_id=run_id
        )
    return state, version


async def claim_checkpoint(
    checkpointer: Checkpointer, key: str, state: Any, version: int, run_id: str, refusal: str
) -> int:
    """Claim a run by saving ``state`` over the ``version`` it was loaded at (a
    compare-and-set); :class:`RunNotResumable` with ``refusal`` when another worker
    wrote first. Returns the new version."""
    try:
        return await checkpointer.save(key, state, expected_version=version)
    except VersionConflict:
        raise RunNotResumable(run_id, refusal) from None


_A_RUN = "an agent run's state"
_NO_TASK = Message(role="user", content="")


def fresh_state(
    run_id: str,
    agent: str,
    task: Task | Message,
    prior: Sequence[Message] = (),
    *,
    settings: ModelSettings | None = None,
    session: str | None = None,
    session_version: int = 0,
    session_rows: bool = False,
) -> RunState:
    """The first checkpoint of a run of ``agent`` on ``task`` (:mod:`agentkit.agents.task`,
    or the user message made of it), after ``prior`` history (``session_rows``: the
    session keeps the history, so checkpoints leave it out)."""
    asked = task if isinstance(task, Message) else task_message(task)
    return RunState(
        run_id=run_id,
        agent=agent,
        status="running",
        messages=(*prior, asked),
        settings=settings,
        session=session,
        history_len=len(prior),
        session_version=session_version,
        session_rows=session_rows,
    )


def _top_key(agent: LifecycleAgent, ctx: RunContext) -> str:
    # Nested runs (an agent called as a tool) may run several times, even at once,
    # inside one outer run, so each gets its own checkpoint; only top-level runs
    # are resumable by run id.
    if ctx.depth == 0:
        return f"{ctx.correlation_id}:{agent.name}"
    return f"{ctx.correlation_id}:{agent.name}:d{ctx.depth}:{new_run_id()}"


def _task_of(state: RunState) -> Message:
    turn = state.messages[state.history_len :]
    return next((m for m in turn if m.role == "user"), _NO_TASK)


def _run(
    agent: LifecycleAgent,
    ctx: RunContext,
    state: RunState,
    key: str,
    version: int,
    checkpointer: Checkpointer,
    sink: EventSink | None,
) -> AgentRun:
    registry = getattr(agent.cognition, "tools", None)
    effects = InProcessEffects(ctx, checkpointer, key, registry, sink)
    return AgentRun(agent, ctx, state, key=key, version=version, effects=effects, sink=sink)


def hosted_run(
    agent: LifecycleAgent, ctx: RunContext, state: RunState, effects: Effects
) -> AgentRun:
    """A top-level run of ``agent`` from ``state`` on an engine's own ``effects`` (the
    engine keeps the checkpoint: Temporal's event history)."""
    return AgentRun(agent, ctx, state, key=f"{state.run_id}:{agent.name}", version=0,
                    effects=effects)


async def _claim(run: AgentRun, refusal: str) -> None:
    try:
        await save_registered(run, claim=True)  # a compare-and-set, with the run's record
    except RunTakenOver:
        raise RunNotResumable(run.run_id, refusal) from None
    # Advancing from the claim on: a face that drives the run in a task of its own
    # (agentkit.serve) would leave a gap in which this process could take it as orphaned.
    _ADVANCING.add(run.key)


def check_models(agent: Any, ctx: RunContext) -> None:
    """With several providers on the context (a ``ModelRouter``), a model spec the context
    cannot serve, ``agent``'s or one of an agent it delegates to through ``as_tool``,
    fails here, before anything is saved or sent, rather than reaching the model as a
    failed tool call."""
    route = getattr(ctx.llm, "llm_for_model", None)
    if route is None:
        return
    for model in _models(agent):
        route(model, ctx)


def _models(agent: Any) -> list[str]:
    """The model specs of ``agent`` and of every agent it delegates to through
    ``as_tool``, each once, in the order they are found."""
    found: list[str] = []
    seen: set[int] = set()
    todo: list[Any] = [agent]
    while todo:
        current = todo.pop(0)
        if id(current) in seen:
            continue
        seen.add(id(current))
        model = getattr(current, "model", None)
        if isinstance(model, str) and model not in found:
            found.append(model)
        tools = getattr(getattr(current, "cognition", None), "tools", None) or ()
        todo.extend(d for t in tools if (d := getattr(t, "delegate", None)) is not None)
    return found


async def _unfinished(
    agent: LifecycleAgent, ctx: RunContext, checkpointer: Checkpointer, key: str, fresh: bool
) -> int:
    """The version of the checkpoint a new run goes over; refused while another run of
    ``agent`` under this run id is not finished (unless the run starts ``fresh``)."""
    run_id = ctx.correlation_id
    existing, version = await load_checkpoint(checkpointer, key, run_id, RunState, _A_RUN)
    if not fresh and existing is not None and existing.status not in TERMINAL:
        how = "resume it with agent.resume(...)" if existing.status == "suspended" else (
            "continue it with agent.recover(...)")
        raise RunNotResumable(run_id, f"agent {agent.name!r} already has a {existing.status} "
                              f"run under this run id; {how} or start the new run on a fresh "
                              "context")
    return version


async def open_run(
    agent: LifecycleAgent,
    task: Task,
    ctx: RunContext,
    *,
    sink: EventSink | None = None,
    opening: Opening | None = None,
    key: str | None = None,
) -> AgentRun:
    """Open and claim a new run of ``agent`` on ``task``; ``key`` names a delegated
    run's checkpoint (starting that call again, after a crash, starts it afresh)."""
    opening = opening or Opening()
    asked = task_message(task)  # a bad part is refused before anything is read or sent
    if key is None:
        check_models(agent, ctx)
    checkpointer = checkpointer_for(ctx)
    fresh = key is not None
    key = key or _top_key(agent, ctx)
    blind = claims_blind(agent, opening)
    policy = agent.history
    if blind and not isinstance(policy, Summarize):  # (never a Summarize when blind)
        # Nothing to read before the claim: no memory to recall, no session to read or
        # join, a history that is only trimmed; done in place, without four coroutines.
        version, extra_system, session_version = 0, "", 0
        prior = trimmed(policy, opening.history)
    else:
        version = 0 if blind else await _unfinished(agent, ctx, checkpointer, key, fresh)
        extra_system = await recall(agent, asked.content, ctx)
        prior, session_version = await opening.history_for(policy, ctx, checkpointer)
    state = fresh_state(
        ctx.correlation_id, agent.name, asked, prior, settings=opening.settings,
        session=opening.session, session_version=session_version,
        session_rows=opening.session is not None,
    )
    run = _run(agent, ctx, state, key, version, checkpointer, sink)
    run.extra_system = extra_system
    if not blind:  # a blind run has no session to join
        await join_session(run)  # before the claim: a join that fails leaves nothing claimed
    refusal = (f"another worker started agent {agent.name!r} under this run id at the same "
               "moment, and got there first; start the new run on a fresh context")
    try:
        await _claim(run, refusal)
    except RunNotResumable:
        if not blind:
            raise
        # Claimed at version 0 unread, and a checkpoint is there: judge it, claim over it.
        run.version = await _unfinished(agent, ctx, checkpointer, key, fresh)
        await _claim(run, refusal)
    return run


async def _loaded(
    agent: LifecycleAgent, run_id: str, ctx: RunContext, want: str, key: str | None,
    session: str | None, settings: ModelSettings | None, *, unappended: bool = False,
) -> tuple[RunState, int, str, Checkpointer]:
    """The run's checkpoint, when it is ``want``; with ``unappended``, a completed
    session run is taken too (its turn may not be in the session yet)."""
    checkpointer = checkpointer_for(ctx)
    key = key or f"{run_id}:{agent.name}"
    state, version = await load_checkpoint(checkpointer, key, run_id, RunState, _A_RUN)
    if state is None:
        raise RunNotResumable(
            run_id,
            f"agent {agent.name!r} has no checkpoint for this run"
            + missing_checkpoint_hint(checkpointer),
        )
    if state.status != want and not (
        unappended and state.status == "complete" and state.session is not None
    ):
        raise RunNotResumable(run_id, f"it is {state.status}, not {want}")
    return continued(state, session, settings), version, key, checkpointer


def decide(run: AgentRun, decisions: Mapping[str, Any]) -> None:
    """Hand a suspended run a person's decisions: checked against what it waits for
    (:class:`~agentkit.core.contracts.errors.InvalidDecision` before anything
    changes), routed to the calls that wait on sub-runs, and the run running again."""
    given = checked(run.run_id, run.suspended().kinds, decisions)
    run.continue_with(routed(given, run.nested))


async def resume_run(
    agent: LifecycleAgent,
    run_id: str,
    decisions: Mapping[str, Any],
    ctx: RunContext,
    *,
    sink: EventSink | None = None,
    session: str | None = None,
    settings: ModelSettings | None = None,
    key: str | None = None,
) -> AgentRun:
    """Claim the suspended run ``run_id`` with a person's ``decisions``."""
    state, version, key, checkpointer = await _loaded(
        agent, run_id, ctx, "suspended", key, session, settings
    )
    ctx = ctx if ctx.correlation_id == run_id else ctx.for_run(run_id)
    state = await rejoined(state, agent.history, ctx)
    run = _run(agent, ctx, state, key, version, checkpointer, sink)
    decide(run, decisions)
    run.extra_system = await recall(agent, _task_of(state).content, ctx)
    await _claim(run, "another worker resumed it first")
    return run


def _describe(owner: str) -> str:
    host, _, rest = owner.partition("|")
    pid = rest.partition("|")[0]
    return "this process" if owner == this_owner() else f"process {pid} on {host}"


async def recover(
    agent: LifecycleAgent,
    run_id: str,
    ctx: RunContext,
    *,
    session: str | None = None,
    settings: ModelSettings | None = None,
    key: str | None = None,
) -> AgentResult:
    """Take over the running run ``run_id`` whose worker died and advance it; a
    completed session run whose worker died before appending its turn appends it."""
    state, version, key, checkpointer = await _loaded(
        agent, run_id, ctx, "running", key, session, settings, unappended=True
    )
    if state.status == "complete":
        return await _append_left_turn(agent, state, key, version, ctx, checkpointer)
    if state.owner and owner_alive(state.owner) and (
        state.owner != this_owner() or key in _ADVANCING
    ):
        raise RunNotResumable(
            run_id,
            f"its worker ({_describe(state.owner)}) is still running it; recover only "
            "takes over a run whose worker died",
        )
    ctx = ctx if ctx.correlation_id == run_id else ctx.for_run(run_id)
    state = await rejoined(state, agent.history, ctx)
    run = _run(agent, ctx, state, key, version, checkpointer, None)
    run.interrupted = frozenset(c.id for c in run.open_calls if c.id not in run.answered)
    run.extra_system = await recall(agent, _task_of(state).content, ctx)
    await _claim(run, "another worker took it over first")
    return await advance(agent, run)


def _ended(agent: LifecycleAgent, run: AgentRun, state: RunState) -> AgentResult:
    """The result of a run that completed or stopped, from its checkpoint; the answer
    is the final message, parsed as it was when the run completed."""
    if state.status == "complete":
        final = next((m.content for m in reversed(state.messages) if m.role == "assistant"), "")
        spec = agent.output_spec
        run.output = final if spec is None else spec.parse(final)
    return run.result()


async def _append_left_turn(
    agent: LifecycleAgent, state: RunState, key: str, version: int, ctx: RunContext,
    checkpointer: Checkpointer,
) -> AgentResult:
    """The result of a completed session run, once its turn is in the session (its
    worker may have died between the final checkpoint and the append)."""
    ctx = ctx if ctx.correlation_id == state.run_id else ctx.for_run(state.run_id)
    state = await rejoined(state, agent.history, ctx)
    run = _run(agent, ctx, state, key, version, checkpointer, None)
    result = _ended(agent, run, state)
    await commit_turn(run, result)
    return result


async def continue_at(
    agent: LifecycleAgent, key: str, task: Task, ctx: RunContext
) -> AgentResult:
    """The sub-run under ``key`` whose delegating call runs again after a crash:
    recovered if it was running (its interrupted calls settled by their intents), its
    result as checkpointed if it had suspended or ended, started afresh if it never
    saved a step or ended by raising (its failure was the call's outcome, and a failed
    call runs again from the start)."""
    checkpointer = checkpointer_for(ctx)
    state, version = await load_checkpoint(checkpointer, key, ctx.correlation_id, RunState, _A_RUN)
    # A checkpoint for another task is an earlier call's that reused this call id.
    if (
        state is None
        or state.agent != agent.name
        or _task_of(state) != task_message(task)
        or state.status == "error"
    ):
        run = await open_run(agent, task, ctx, key=key)
        return await advance(agent, run)
    if state.status == "running":
        return await recover(agent, ctx.correlation_id, ctx, key=key)
    return _ended(agent, _run(agent, ctx, state, key, version, checkpointer, None), state)


def advance(agent: LifecycleAgent, run: AgentRun) -> Awaitable[AgentResult]:
    """Drive a claimed run with the agent's cognition until it completes, suspends or
    stops; a completed run of a session appends its turn (an awaitable: a frame less)."""
    return _advance(agent, run) if run.ctx.tracer is None else _traced(agent, run)


async def _traced(agent: LifecycleAgent, run: AgentRun) -> AgentResult:
    """:func:`advance` in an ``invoke_agent`` span."""
    attributes = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": agent.name,
        "gen_ai.request.model": agent.model,
        "agentkit.run_id": run.ctx.correlation_id,
    }
    with open_span(run.ctx.tracer, f"invoke_agent {agent.name}", attributes) as span:
        result = await _advance(agent, run)
        usage = result.usage
        span.set_attribute("gen_ai.usage.input_tokens", usage.input_tokens)
        span.set_attribute("gen_ai.usage.output_tokens", usage.output_tokens)
        span.set_attribute("gen_ai.usage.cache_read.input_tokens", usage.cache_read_tokens)
        span.set_attribute("gen_ai.usage.cache_creation.input_tokens", usage.cache_write_tokens)
        span.set_attribute("agentkit.stop_reason", result.stop_reason)
        set_cost(span, usage)
        return result


async def _advance(agent: LifecycleAgent, run: AgentRun) -> AgentResult:
    _ADVANCING.add(run.key)
    try:
        try:
            await agent.cognition.advance(run)
        except RunTakenOver:
            raise  # the run is another worker's now: write nothing more
        except RunError as exc:
            await run.stop(exc.stop_reason, exc)  # type: ignore[arg-type]
        except OutputCoercionError as exc:
            # Final, not transient: end the checkpoint too, or the run id stays "running"
            # and a new run on it is refused with advice to resume.
            await run.stop("error", exc)
            await save_registered(run)
            raise
        result = run.result()
        await save_registered(run, result)  # durable, with its record, before the caller has it
        if run.session is not None and run.status == "complete":
            await commit_turn(run, result)
        return result
    finally:
        _ADVANCING.discard(run.key)
