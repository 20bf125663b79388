"""TemporalAgents: start, resume and read agent runs that run on Temporal workers."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from temporalio.client import (
    Client,
    WorkflowExecutionStatus,
    WorkflowFailureError,
    WorkflowHandle,
    WorkflowUpdateFailedError,
)
from temporalio.exceptions import ApplicationError, WorkflowAlreadyStartedError
from temporalio.service import RPCError

from agentkit.agents.conversation import Opening
from agentkit.agents.decisions import checked
from agentkit.agents.result import AgentResult, Suspended
from agentkit.agents.run_state import RunState
from agentkit.agents.task import Task, task_message
from agentkit.core.contracts.errors import RunNotResumable
from agentkit.core.contracts.ports import Store
from agentkit.core.contracts.settings import ModelSettings
from agentkit.core.contracts.state_errors import SessionBusy
from agentkit.core.contracts.types import Autonomy, Message, Scope
from agentkit.core.runtime.context import new_run_id
from agentkit.integrations.temporal._values import (
    PayloadTooLarge,
    RunOptions,
    invalid_decision,
    pack,
    pack_within,
    result_from,
    result_of,
    unpack,
)
from agentkit.integrations.temporal.looks import SuspensionLooks
from agentkit.integrations.temporal.payloads import INLINE_BYTES, with_stored_payloads
from agentkit.integrations.temporal.workflow import (
    CONTINUED,
    DECIDE_UPDATE,
    OUTCOME_UPDATE,
    PENDING_QUERY,
    RESUME_UPDATE,
    STATE_QUERY,
    SUSPENDED_MEMO,
    WORKFLOW,
)
from agentkit.state.media_refs import by_reference, by_value

__all__ = ["TemporalAgents"]

_ATTEMPTS = 20  # an update is retried past continue-as-new, never forever
_FIRST_LOOK = 0.2
_LONGEST_LOOK = 2.0
"""Seconds between looks at a running run's memo for a suspension: how late a
suspension may be noticed (runs that end sooner are never looked at)."""


class TemporalAgents:
    """The client side of agents hosted by :class:`AgentWorker` on ``task_queue``.

    A run's id is its workflow id. :meth:`run` and :meth:`resume` return when the run
    completes or suspends; a suspended run waits (for days if need be) until
    :meth:`resume` gives it the decisions for its :meth:`pending` calls.

    ``store`` is the workers' store: a run's start, result or pending calls over
    128 KiB cross Temporal by key and are written and read there, and so are the bytes
    of the media in a task. Without it, a start that large is refused with
    :class:`PayloadTooLarge`, and such a result with
    :class:`~agentkit.state.blobs.BlobMissing`.
    """

    def __init__(
        self,
        client: Client,
        *,
        task_queue: str,
        options: RunOptions | None = None,
        store: Store | None = None,
    ) -> None:
        if not task_queue or not isinstance(task_queue, str):
            raise ValueError(f"task_queue must be a non-empty string, got {task_queue!r}")
        self.client = with_stored_payloads(client, store)
        self.store = store
        self.task_queue = task_queue
        self.options = options if options is not None else RunOptions()
        self._looks = SuspensionLooks(self.client, SUSPENDED_MEMO)

    async def run(
        self,
        agent_name: str,
        task: Task,
        *,
        run_id: str | None = None,
        scope: Scope | None = None,
        autonomy: Autonomy | str = "auto",
        session: str | None = None,
        settings: ModelSettings | None = None,
    ) -> AgentResult:
        """Start a run and wait until it completes or suspends."""
        started = await self.start(
            agent_name, task, run_id=run_id, scope=scope, autonomy=autonomy, session=session,
            settings=settings,
        )
        return await self.result(started)

    async def start(
        self,
        agent_name: str,
        task: Task,
        *,
        run_id: str | None = None,
        scope: Scope | None = None,
        autonomy: Autonomy | str = "auto",
        session: str | None = None,
        settings: ModelSettings | None = None,
    ) -> str:
        """Start a run; returns its run id at once.

        ``task`` is text, or text and media parts, as for ``agent.run``; with a store,
        the bytes of each media part are stored there once (the workers read them back
        for each model call) and the run's history holds their keys. ``settings``
        override the agent's own, field by field, for this run.
        """
        # Clear errors for a malformed session, settings or task, before starting.
        Opening(session, None, settings)
        opening = task_message(task)
        try:
            tier = Autonomy(autonomy).value
        except ValueError:
            accepted = [a.value for a in Autonomy]
            raise ValueError(f"unknown autonomy {autonomy!r}; expected one of {accepted}") from None
        run_id = run_id or new_run_id()
        start: dict[str, Any] = {
            "agent": agent_name,
            "task": await self._task(opening),
            "scope": scope if scope is not None else Scope(org_id=0, domain_id=0),
            "autonomy": tier,
            "options": self.options,
            "session": session,
        }
        if settings is not None:
            start["settings"] = settings  # left out otherwise: the start of earlier runs
        payload = pack_within(
            start, self.options.max_payload_bytes, run_id, "the run's start (task and options)",
        )
        if self.store is None and len(payload) > INLINE_BYTES:
            # Its result holds the task too, and this client could not read it back.
            raise PayloadTooLarge(
                run_id, "the run's start (task and options)", len(payload), INLINE_BYTES,
                "inline, from a client without a store; give TemporalAgents(..., store=...) "
                "the store the workers use, or shorten it",
            )
        try:
            await self.client.start_workflow(
                WORKFLOW, payload, id=run_id, task_queue=self.task_queue
            )
        except WorkflowAlreadyStartedError:
            raise RunNotResumable(
                run_id, "a run with this id already exists; start the new run with another id"
            ) from None
        return run_id

    async def _task(self, opening: Message) -> str | Message:
        """What the start carries of the task: its text, or, with media, the whole user
        message, each media part's bytes stored by reference when there is a store (a
        workflow's state, and so every model call's input, then holds keys, not bytes).
        A worker of before media would refuse the message rather than drop the media."""
        if not opening.attachments:
            return opening.content
        if self.store is None:
            return opening
        stored: Message = await by_reference(self.store, opening)
        return stored

    async def _whole(self, result: AgentResult) -> AgentResult:
        """``result`` with the media its messages hold by reference read back."""
        if self.store is None:
            return result
        whole: AgentResult = await by_value(self.store, result)
        return whole

    async def result(self, run_id: str) -> AgentResult:
        """The run's result once it completes or suspends (waiting until then).

        It waits for the run's close event (one long poll, which writes nothing to the
        history), looking between waits of 0.2 s, doubling to 2 s, at the run's memo
        for a suspension (a describe, also writing nothing). A run that completes
        without waiting for a person thus has the same events whenever this is called
        (an update would add a workflow task, or two, depending on when it landed);
        once the run has suspended, its result so far is asked for by update.
        """
        return await self._result_after(run_id, None)

    async def _result_after(self, run_id: str, left: int | None) -> AgentResult:
        """:meth:`result`, once the run has left suspension ``left`` (its memo counts
        past it): a run decided at ``left`` that then completes is waited for by its
        close alone."""
        handle = self.client.get_workflow_handle(run_id, result_type=str)
        # One wait for the close event the whole time: a new wait would ask the server
        # to read the run's history again.
        final = asyncio.ensure_future(self._final(handle))
        try:
            wait = _FIRST_LOOK
            while True:
                done, _ = await asyncio.wait((final,), timeout=wait)
                if done:
                    return await self._whole(final.result())
                at = await self._looks.memo(run_id)
                if at is not None and (left is None or not isinstance(at, int) or at > left):
                    # It waits for a person (or did, and was resumed since): the update
                    # answers when it is next at rest.
                    return await self._whole(result_of(
                        await self._update(run_id, OUTCOME_UPDATE, None)))
                wait = min(2 * wait, _LONGEST_LOOK)
        finally:
            if final.done() and not final.cancelled():
                final.exception()  # seen here, or raised above: never left unretrieved
            final.cancel()

    async def resume(self, run_id: str, decisions: Mapping[str, Any]) -> AgentResult:
        """Give a suspended run the human's decisions, per pending call id (as for
        ``agent.resume``); returns when it next completes or suspends.

        Raises :class:`RunNotResumable` when the run does not wait for a decision, and
        :class:`InvalidDecision` (a ``ValueError``, the same text as ``agent.resume``'s)
        for decisions that do not fit its pending calls (nothing changes).

        A run that took the decisions and then continues as new (past
        ``continue_as_new_after`` model calls) answers the update as it does so, with
        the suspension the decisions answered; the run is then followed as after
        :meth:`hand`, to the same result.
        """
        answer = await self._update(run_id, RESUME_UPDATE, pack(dict(decisions)))
        if isinstance(answer, Mapping) and CONTINUED in answer:
            return await self._result_after(run_id, answer[CONTINUED])
        return await self._whole(result_of(answer))

    async def hand(
        self, run_id: str, decisions: Mapping[str, Any], *, at: int | None = None
    ) -> Callable[[], Awaitable[AgentResult]]:
        """Give a suspended run the human's decisions and return as soon as the run
        took them (refusing them as :meth:`resume` does); calling what this returns
        waits for the run's next result. A server answers the person at once this
        way, and follows the run in the background.

        With ``at`` (the run's :meth:`suspension` the decisions answer), the run takes
        them only at that suspension, so of two deciders of one suspension at most
        one reaches the run, even if the other comes after the run has moved on and
        waits again for calls of the same ids: the other gets :class:`RunNotResumable`.
        """
        handle = self.client.get_workflow_handle(run_id, result_type=str)
        args: list[Any] = [pack(dict(decisions))] if at is None else [pack(dict(decisions)), at]
        try:
            # The update ends as the run takes the decisions (or refuses them).
            await handle.execute_update(DECIDE_UPDATE, args=args)
        except WorkflowUpdateFailedError as exc:
            _refused(run_id, exc.cause)
            raise
        except RPCError:
            raise RunNotResumable(run_id, "it is not waiting for a decision") from None
        return lambda: self._result_after(run_id, at)

    async def check(self, run_id: str, decisions: Mapping[str, Any]) -> None:
        """Raise what :meth:`resume` would for ``decisions`` (:class:`RunNotResumable`
        when the run does not wait for a decision, :class:`InvalidDecision` for
        decisions that do not fit its pending calls), changing nothing."""
        pending = await self.pending(run_id)
        if pending is None:
            raise RunNotResumable(run_id, "it is not waiting for a decision")
        checked(run_id, pending.kinds, decisions)

    async def suspension(self, run_id: str) -> int | None:
        """Which suspension the run is at: the count of results it had settled when it
        last suspended (1 at its first), from its memo; None for a run that never
        suspended (or began before the count was kept)."""
        at = await self._looks.described(run_id)
        return at if isinstance(at, int) and not isinstance(at, bool) else None

    async def pending(self, run_id: str) -> Suspended | None:
        """What waits for a person: the run's :class:`Suspended` record, or None."""
        handle = self.client.get_workflow_handle(run_id)
        text = await handle.query(PENDING_QUERY, result_type=str)
        value = unpack(text, "pending")
        return value if isinstance(value, Suspended) else None

    async def state(self, run_id: str) -> RunState | None:
        """The run's latest state (its transcript, steps, pending calls), as an
        in-process run's last checkpoint holds it, asked of its workflow by a query
        (which adds nothing to the run's history; a closed run's is answered by a
        worker replaying it); None before the run's first workflow task.

        Raises what Temporal's client does for a workflow that cannot answer (no such
        workflow, no worker, a worker of before this query)."""
        handle = self.client.get_workflow_handle(run_id)
        value = unpack(await handle.query(STATE_QUERY, result_type=str), "state")
        if not isinstance(value, RunState):
            return None
        if self.store is None:
            return value
        whole: RunState = await by_value(self.store, value)
        return whole

    async def _update(self, run_id: str, name: str, arg: str | None) -> Any:
        """The update's answer, unpacked (a result, or a resume's ``continued``), or the
        run's final result when it ended meanwhile."""
        handle = self.client.get_workflow_handle(run_id, result_type=str)
        args = [] if arg is None else [arg]
        for _ in range(_ATTEMPTS):
            try:
                text = await handle.execute_update(name, args=args, result_type=str)
                return unpack(text, "result")
            except WorkflowUpdateFailedError as exc:
                _refused(run_id, exc.cause)
                if not await self._still_running(handle):
                    return await self._final(handle)
            except RPCError:
                # The workflow run the update reached has ended (continued as new, or
                # finished): look again.
                if not await self._still_running(handle):
                    if name == RESUME_UPDATE:
                        raise RunNotResumable(run_id, "it is not waiting for a decision") from None
                    return await self._final(handle)
        raise RuntimeError(f"run {run_id!r}: no answer after {_ATTEMPTS} attempts")

    @staticmethod
    async def _still_running(handle: WorkflowHandle[Any, str]) -> bool:
        described = await handle.describe()
        return described.status in (
            WorkflowExecutionStatus.RUNNING,
            WorkflowExecutionStatus.CONTINUED_AS_NEW,
        )

    @staticmethod
    async def _final(handle: WorkflowHandle[Any, str]) -> AgentResult:
        try:
            return result_from(await handle.result())
        except WorkflowFailureError as exc:
            _raise_busy(exc.cause)
            raise


def _refused(run_id: str, cause: BaseException | None) -> None:
    """Raise the error a refused update stands for: :class:`RunNotResumable`,
    :class:`InvalidDecision` or :class:`SessionBusy`, if it is one of them."""
    if isinstance(cause, ApplicationError) and cause.type == "RunNotResumable":
        raise RunNotResumable(run_id, cause.message) from None
    if isinstance(cause, ApplicationError) and cause.type == "InvalidDecision":
        raise invalid_decision(unpack(cause.details[0], "decision error")) from None
    _raise_busy(cause)


def _raise_busy(cause: BaseException | None) -> None:
    """Raise the :class:`SessionBusy` a run's failure stands for, if it does."""
    if isinstance(cause, ApplicationError) and cause.type == "SessionBusy":
        session, scope, run_id, result = cause.details
        raise SessionBusy(session, scope, run_id, result_from(result)) from None
