"""Nested suspension: a sub-run that waits for a person suspends every run above it.

An agent used through ``as_tool`` (or as a Workflow step) runs as a *delegated* run.
While a run executes a tool call it names itself and the call (the
:class:`~agentkit.core.runtime.current_call.CurrentCall` of the task), so the sub-run
the call starts gets a checkpoint key derived from them. When that sub-run suspends,
:func:`run_delegated` raises :class:`SubRunSuspended` carrying a
:class:`~agentkit.agents.run_state.SubRun` (its key and its ``Suspended``); the tool
chain hands it up as a waiting outcome (not a failure), and the call's outcome is
:class:`~agentkit.agents.outcomes.Parked`. The run above records the sub-run in its
checkpoint (the call is pending as ``"nested"``) and, once the turn's other calls are
answered, suspends too. The top-level
``Suspended`` lists every waiting call at any depth under its path of call ids,
``"c1/s3"``.

On resume, a decision for ``"c1/s3"`` goes to call ``c1`` as ``{"s3": decision}``; the
run executes ``c1`` again through its tool chain, and :func:`run_delegated` resumes the
recorded sub-run with those decisions instead of starting a new one. Its answer becomes
the result of ``c1``. A sub-run that gets no decision stays suspended, and so does the
run above it.

A sub-run's checkpoint key is its caller's key and the call id, ``"<run key>/c1"``, so
after a crash the run above finds it again: a delegating call that runs again on
``recover`` continues its sub-run from that checkpoint (which settles the sub-run's own
interrupted calls by their intents) instead of starting it afresh, and a delegating
call answered as "outcome unknown" ends its sub-run with :func:`abandon_sub_run`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import suppress
from contextvars import Token
from dataclasses import replace
from typing import Any, Protocol

from agentkit.agents.intents import intent_key
from agentkit.agents.result import Suspended
from agentkit.agents.run_state import RunState, SubRun
from agentkit.core.contracts.errors import CheckpointCorrupt, VersionConflict, WaitsForPerson
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.ports import Checkpointer, Store
from agentkit.core.contracts.types import ToolCall
from agentkit.core.runtime.context import RunContext
from agentkit.core.runtime.current_call import CurrentCall, current_call

__all__ = [
    "Delegable",
    "SubRunSuspended",
    "abandon_sub_run",
    "calling",
    "left_call",
    "refuse_path_id",
    "run_delegated",
    "sub_run_key",
    "suspension",
]

_NOTHING: Mapping[str, Any] = FrozenDict()

_REASONS = (
    ("unknown_outcome", "outcome_unknown"),
    ("input", "awaiting_input"),
    ("elicitation", "awaiting_input"),
    ("approval", "awaiting_approval"),
)


def refuse_path_id(call: ToolCall) -> str | None:
    """Why ``call`` may not run under its id, or None: a model's call id holding "/"
    would be read as the path of a call inside a sub-run (``"c1/s3"``), so a decision
    meant for one would reach the other."""
    if "/" not in call.id:
        return None
    return (
        f"The call to {call.name!r} did not run: its call id {call.id!r} holds '/', which "
        "is reserved for the paths of calls made inside delegated runs ('c1/s3'). Call the "
        "tool again under an id without '/'."
    )


class SubRunSuspended(WaitsForPerson):
    """A delegated run suspended for a person; the run whose call started it suspends
    too. Raised by the tool body that delegated; the tool chain passes it up as a
    :class:`~agentkit.core.contracts.types.Waiting` outcome."""

    def __init__(self, sub: SubRun) -> None:
        self.sub = sub
        paths = [c.id for c in sub.suspended.pending]
        kinds = [f"{p} ({sub.suspended.kinds.get(p, 'approval')})" for p in paths]
        self.waiting = f"sub-run {sub.agent}: {', '.join(kinds)}"
        super().__init__(
            f"the delegated run of {sub.agent!r} suspended waiting for a person on "
            f"{paths}; the run that delegated to it suspends until they are decided"
        )


class Delegable(Protocol):
    """A runnable that can start or continue a run under a given checkpoint key."""

    name: str

    async def _start_at(self, key: str, task: str, ctx: RunContext) -> Any: ...

    async def _resume_at(self, key: str, decisions: Mapping[str, Any], ctx: RunContext) -> Any: ...


def sub_run_key(run_key: str, call_id: str) -> str:
    """The checkpoint key of the sub-run that call ``call_id`` of the run under
    ``run_key`` starts (one call starts at most one)."""
    return f"{run_key}/{call_id}"


def calling(
    run_key: str,
    call_id: str,
    wake: SubRun | None = None,
    decisions: Any = None,
    *,
    model: str = "",
    answers: Mapping[str, Any] = _NOTHING,
    again: bool = False,
) -> Token[CurrentCall | None]:
    """Mark the current task as executing ``call_id`` of the run under ``run_key``
    (and, on resume, which sub-run to continue with which decisions). ``again``: the
    call was interrupted by a crash and runs again, so a sub-run it had started
    continues from its checkpoint."""
    sub_decisions = decisions if wake is not None and isinstance(decisions, Mapping) else _NOTHING
    return current_call.set(CurrentCall(
        call_id, model, answers, run_key=run_key, wake=wake, decisions=sub_decisions,
        again=again,
    ))


def left_call(token: Token[CurrentCall | None]) -> None:
    """Undo :func:`calling` once the call has returned."""
    current_call.reset(token)


async def run_delegated(runnable: Delegable, task: str, ctx: RunContext) -> Any:
    """Run (or, on resume, continue) ``runnable`` as the sub-run of the call being
    executed; raises :class:`SubRunSuspended` when it suspends.

    Outside a run's tool call (a tool body called directly) it is a plain ``run``.
    """
    caller = current_call.get()
    if caller is None or not caller.run_key:
        return await runnable.run(task, ctx)  # type: ignore[attr-defined]
    # One call starts one sub-run: a further delegation made by the same tool body
    # (not through a run's tool call) must not take the same key.
    current_call.set(CurrentCall(caller.call_id, caller.model, caller.answers))
    wake = caller.wake
    if not isinstance(wake, SubRun):
        key = sub_run_key(caller.run_key, caller.call_id)
        proceed = getattr(runnable, "_continue_at", None) if caller.again else None
        if callable(proceed):
            result = await proceed(key, task, ctx)
        else:
            result = await runnable._start_at(key, task, ctx)
    else:
        key = wake.key
        result = await runnable._resume_at(key, caller.decisions, ctx)
    if getattr(result, "stop_reason", None) == "suspended":
        suspended = result.evals["suspended"]
        raise SubRunSuspended(SubRun(key, runnable.name, suspended))
    return result


def suspension(
    run_id: str,
    name: str,
    calls: Sequence[ToolCall],
    pending: Mapping[str, str],
    nested: Mapping[str, SubRun],
    questions: Mapping[str, Any] = FrozenDict(),
) -> Suspended:
    """The ``Suspended`` of a run named ``name``: its own waiting ``calls``, and for each
    call waiting on a sub-run, that sub-run's waiting calls under ``"<call id>/..."``.
    ``questions`` are the run's own calls' questions asked mid-call, by call id."""
    waiting: list[ToolCall] = []
    kinds: dict[str, str] = {}
    agents: dict[str, tuple[str, ...]] = {}
    asked: dict[str, Any] = {}
    for call in calls:
        kind = pending.get(call.id)
        if kind is None:
            continue
        sub = nested.get(call.id) if kind == "nested" else None
        if sub is None:
            waiting.append(call)
            kinds[call.id] = kind
            agents[call.id] = (name,)
            if call.id in questions:
                asked[call.id] = questions[call.id]
            continue
        inner = sub.suspended
        default_kind = next((k for k, r in _REASONS if r == inner.reason), "approval")
        for sub_call in inner.pending:
            path = f"{call.id}/{sub_call.id}"
            waiting.append(ToolCall(path, sub_call.name, sub_call.arguments))
            kinds[path] = inner.kinds.get(sub_call.id, default_kind)
            agents[path] = (name, *inner.agents.get(sub_call.id, (sub.agent,)))
            if sub_call.id in inner.questions:
                asked[path] = inner.questions[sub_call.id]
    present = set(kinds.values())
    reason = next((r for k, r in _REASONS if k in present), "awaiting_approval")
    return Suspended(
        run_id,
        tuple(waiting),
        reason=reason,  # type: ignore[arg-type]
        questions=FrozenDict(asked),
        kinds=FrozenDict(kinds),
        agents=FrozenDict(agents),
    )


async def abandon_sub_run(checkpointer: Checkpointer, store: Store, key: str) -> None:
    """End the sub-run under ``key`` that a crash interrupted and that will never
    continue (its delegating call was answered as "outcome unknown"): its checkpoint
    becomes ``error`` and the intents of its unanswered calls, at every depth, are
    dropped, so nothing is left that looks like a live run. A sub-run that is not
    ``running`` (or not an agent run) is left as it is."""
    try:
        state, version = await checkpointer.load(key)
    except CheckpointCorrupt:
        return  # nothing of it can be read, so nothing of it can continue either
    if not isinstance(state, RunState) or state.status != "running":
        return
    answered = {m.tool_call_id for m in state.answered}
    for call in state.open_calls:
        if call.id not in answered:
            await store.delete(intent_key(key, call.id))
            await abandon_sub_run(checkpointer, store, sub_run_key(key, call.id))
    # A conflict means another worker took it over after all: it is that worker's to end.
    with suppress(VersionConflict):
        await checkpointer.save(key, replace(state, status="error"), expected_version=version)
