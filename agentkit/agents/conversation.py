"""How a run joins a conversation: the history it starts from, and the turn it appends.

A run with ``session=`` reads the session's turn rows once, when it starts, and keeps
the version it read in its checkpoint, but not the history itself: a resumed or
recovered run reads the rows up to that version again (:func:`rejoined`). When it
completes, :func:`commit_turn` appends the messages after that history as one
compare-and-set over that version (see :mod:`agentkit.state.sessions`).

A worker can die between a run's final checkpoint and that append. The run's key is in
the session's open log for the row it would write (:func:`join_session`), so the next
run of the session finds the completed checkpoint and appends its turn before reading
on (:func:`settled_session`); ``recover`` of that run appends it too. Either way the
turn is appended once: the row is a compare-and-set, and appending the same turn again
is a no-op.

A run with ``history=`` starts from the caller's messages and stores nothing; its
checkpoints carry them. Either way the agent's :class:`HistoryPolicy` trims what the
model is sent, or its :class:`Summarize` replaces the older turns by a summary.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Sequence

from agentkit.agents.history import HistoryPolicy
from agentkit.agents.result import AgentResult
from agentkit.agents.run import AgentRun
from agentkit.agents.run_state import RunState
from agentkit.agents.summarize import Summarize
from agentkit.core.contracts.ports import Checkpointer
from agentkit.core.contracts.state_errors import CheckpointCorrupt, SessionBusy
from agentkit.core.contracts.types import Message, ModelSettings
from agentkit.core.runtime.context import RunContext
from agentkit.state.sessions import SessionRecord, append_turn, load_session, open_log

__all__ = [
    "Opening",
    "commit_turn",
    "continued",
    "join_session",
    "rejoined",
    "settled_session",
    "shaped",
]

_NO_SETTINGS = ModelSettings()


class Opening:
    """What a new run starts from: a session or the caller's history, and settings.

    Checked on construction, before the run touches a store.
    """

    __slots__ = ("history", "session", "settings")

    def __init__(
        self,
        session: str | None = None,
        history: Sequence[Message] | None = None,
        settings: ModelSettings | None = None,
    ) -> None:
        if session is not None and history is not None:
            raise ValueError(
                "pass session= (history kept in ctx.store) or history= (history you keep), "
                "not both"
            )
        if session is not None and (not isinstance(session, str) or not session):
            raise ValueError(f"session= must be a non-empty string id, got {session!r}")
        prior: tuple[Message, ...] = ()
        if history is not None:
            if isinstance(history, str | bytes) or not isinstance(history, Sequence):
                raise TypeError(
                    f"history= takes a sequence of Message (e.g. result.messages), "
                    f"got {type(history).__name__}"
                )
            prior = tuple(history)
            wrong = [i for i, m in enumerate(prior) if not isinstance(m, Message)]
            if wrong:
                raise TypeError(
                    f"history= takes a sequence of Message; item(s) {wrong} are not "
                    f"(the first is a {type(prior[wrong[0]]).__name__})"
                )
        if settings is not None and not isinstance(settings, ModelSettings):
            raise TypeError(f"settings= takes a ModelSettings, got {settings!r}")
        self.session = session
        self.history = prior
        self.settings = settings

    async def history_for(
        self, policy: HistoryPolicy | Summarize | None, ctx: RunContext,
        checkpointer: Checkpointer,
    ) -> tuple[tuple[Message, ...], int]:
        """The history the run starts from (shaped by ``policy``), and the session's
        version as read: the run's one read of its session."""
        version = 0
        if self.session is not None:
            record, version = await settled_session(ctx, checkpointer, self.session)
            prior = record.messages
        else:
            prior = self.history
        return await shaped(policy, prior, ctx, self.session), version


async def shaped(
    policy: HistoryPolicy | Summarize | None,
    history: tuple[Message, ...],
    ctx: RunContext,
    session: str | None,
) -> tuple[Message, ...]:
    """``history`` as ``policy`` has the model see it: trimmed, or its older turns
    summarised (the summaries kept in the session, when there is one)."""
    if isinstance(policy, Summarize):
        return await policy.compact(history, ctx, session=session)
    return trimmed(policy, history)


def trimmed(policy: HistoryPolicy | None, history: tuple[Message, ...]) -> tuple[Message, ...]:
    """:func:`shaped` for a policy that only trims (or none): nothing to read or write,
    so no coroutine."""
    return history if policy is None else policy.trim(history)


async def settled_session(
    ctx: RunContext, checkpointer: Checkpointer, session: str
) -> tuple[SessionRecord, int]:
    """The session and its version, after appending any completed turn whose worker
    died before appending it (a turn that read the current version)."""
    while True:
        record, version = await load_session(ctx.store, ctx.scope, session)
        if not await _append_left_turn(ctx, checkpointer, session, version):
            return record, version


async def _append_left_turn(
    ctx: RunContext, checkpointer: Checkpointer, session: str, version: int
) -> bool:
    """Append the turn of a completed run that read ``version`` and whose row is missing;
    True when the session changed (read it again)."""
    for key in await ctx.store.list(open_log(ctx.scope, session, version + 1)):
        try:
            state, _ = await checkpointer.load(key)
        except CheckpointCorrupt:
            continue  # that run cannot be continued either; it must not block the session
        if not (
            isinstance(state, RunState) and state.status == "complete"
            and state.session == session and state.session_rows
            and state.session_version == version
        ):
            continue  # still under way, suspended, stopped, or erased with the session
        with contextlib.suppress(SessionBusy):  # another turn took the row meanwhile
            await append_turn(ctx.store, ctx.scope, session, version=version,
                              messages=state.messages, turn=key, run_id=state.run_id)
        return True
    return False


async def join_session(run: AgentRun) -> None:
    """Put the run in the session's open log for the row it would append, so the next
    run can append its turn if this worker dies between its final checkpoint and the
    append. The lifecycle does it before the run is claimed, so a join that fails leaves
    nothing of the run in the store; a key left by a run then refused at its claim is
    passed over, as the log is only read for completed checkpoints."""
    if run.session is not None and run.session_rows:
        log = open_log(run.ctx.scope, run.session, run.session_version + 1)
        await run.ctx.store.append(log, run.key)


async def rejoined(
    state: RunState, policy: HistoryPolicy | Summarize | None, ctx: RunContext
) -> RunState:
    """A checkpoint of a session run with its history read again from the session, up
    to the version the run read (shaped by ``policy``, as when it started: a summary
    is read back from the session, not written again)."""
    if state.session is None or not state.session_rows:
        return state  # no session, or an older checkpoint that holds its history
    record, _ = await load_session(ctx.store, ctx.scope, state.session,
                                   upto=state.session_version)
    prior = await shaped(policy, record.messages, ctx, state.session)
    return dataclasses.replace(state, messages=(*prior, *state.messages),
                               history_len=len(prior))


async def commit_turn(run: AgentRun, result: AgentResult) -> None:
    """Append a completed run's turn to its session; :class:`SessionBusy` (carrying
    ``result``) when another turn got there first."""
    assert run.session is not None
    await append_turn(
        run.ctx.store,
        run.ctx.scope,
        run.session,
        version=run.session_version,
        messages=run.messages[run.history_len :],
        turn=run.key,
        run_id=run.run_id,
        result=result,
        legacy=not run.session_rows,
    )


def continued(state: RunState, session: str | None, settings: ModelSettings | None) -> RunState:
    """A checkpoint continued by resume/recover, with the caller's settings applied."""
    if session is not None and session != state.session:
        raise ValueError(
            f"run {state.run_id!r} belongs to session {state.session!r}, not {session!r}; "
            "a run's turn goes to the session it started in (omit session= to use it)"
        )
    if settings is None:
        return state
    if not isinstance(settings, ModelSettings):
        raise TypeError(f"settings= takes a ModelSettings, got {settings!r}")
    earlier = state.settings or _NO_SETTINGS
    return dataclasses.replace(state, settings=earlier.merged(settings))
