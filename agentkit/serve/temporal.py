"""TemporalEngine: the runs a server starts execute as Temporal workflows on the
workers of a task queue (``agentkit temporal worker``); the server is their client.

A run's events are the in-process engine's: besides the ones its results show (below),
its activities publish its live events (steps, text and reasoning deltas, tool calls
and results) to the store the server shares with the workers, and the server merges
the two (:mod:`agentkit.serve.temporal_live`).

The API is the one the in-process engine serves. What differs is who holds what: the
workflow's history is the run's durable state (a server that stops loses nothing, and
another follows the runs it followed), and the server writes the run registry's
records from each result the workflow reports, since the workflow writes nothing of its
own to the store. One server follows each running run (:mod:`agentkit.serve.followers`):
the one that started it or handed it a decision; every ``sweep`` seconds, each server
takes over the running runs whose follower stopped (at once) or died (once its
heartbeat is ``follow_lease`` old). A follower that Temporal refuses for a moment
(UNAVAILABLE and the like) tries again, waiting 0.5 s doubling to 30 s. A run's events
are the ones its results show (tool calls, tool results, interrupts, the final event);
its trace is built from the workflow's history (one span per model or tool activity).
Served :class:`~agentkit.agents.workflow.Workflow` objects run in the server's process,
on an :class:`~agentkit.serve.inprocess.InProcessEngine` of the engine's own.

Decisions are checked by the shared decision module, in the workflow's update
validator; two deciders at once are kept to one winner by a claim in the store, keyed
by the suspension the record shows, which a cancel of the suspended run takes too
(:mod:`agentkit.serve.claims`: a claim left by a server that died before handing its
decision over is taken over once its lease ran out), and by the workflow, which takes
one decision per suspension.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
import socket
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.client import (
    Client,
    WorkflowFailureError,
    WorkflowQueryFailedError,
    WorkflowQueryRejectedError,
)
from temporalio.exceptions import ApplicationError, CancelledError
from temporalio.service import RPCError

from agentkit.agents.agent import Agent
from agentkit.agents.events import (
    AgentEvent,
    FinalEvent,
    InterruptEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from agentkit.agents.registry import result_record
from agentkit.agents.result import AgentResult
from agentkit.agents.run_state import RunState
from agentkit.agents.workflow import Workflow
from agentkit.core.contracts.errors import InvalidDecision, RunNotResumable
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.runs import RunQuery, RunRecord
from agentkit.integrations.temporal import RunOptions, TemporalAgents
from agentkit.serve.claims import CLAIM_LEASE, DecisionClaims
from agentkit.serve.engine import Host, ServeError, StartRequest
from agentkit.serve.followers import FOLLOW_LEASE, FOLLOW_SWEEP, Followers, patiently, seconds
from agentkit.serve.inprocess import InProcessEngine
from agentkit.serve.temporal_live import LiveEvents
from agentkit.serve.workflows import recover_workflow
from agentkit.state.traces import RunTrace, TraceSpan

__all__ = ["TemporalEngine"]

_log = logging.getLogger("agentkit.serve")


class TemporalEngine:
    """``create_app(agents, context=..., engine=TemporalEngine("localhost:7233",
    task_queue="agents"))``: runs execute on the workers of ``task_queue``.

    ``client`` is a connected Temporal :class:`~temporalio.client.Client` or the
    address to connect to when the server starts (in ``namespace``). The workers must
    host the served agents and share the server's store (the context's): sessions,
    large payloads and the registry live there. ``claim_lease`` is how many seconds a
    decision's claim is its server's alone (:mod:`agentkit.serve.claims`).
    ``follow_lease``: seconds a server that stopped beating holds the runs it follows;
    ``sweep``: seconds between its looks for runs that nobody follows (see
    :mod:`agentkit.serve.followers`).
    """

    name = "temporal"

    def __init__(self, client: Client | str, *, task_queue: str, namespace: str = "default",
                 options: RunOptions | None = None, claim_lease: float = CLAIM_LEASE,
                 follow_lease: float = FOLLOW_LEASE, sweep: float = FOLLOW_SWEEP) -> None:
        if not task_queue or not isinstance(task_queue, str):
            raise ValueError(f"TemporalEngine(task_queue=...) must be a non-empty string, "
                             f"got {task_queue!r}")
        if not isinstance(client, Client | str) or client == "":
            raise TypeError("TemporalEngine(client) takes a connected temporalio Client or "
                            f"an address such as 'localhost:7233', got {client!r}")
        self.client: Client | None = client if isinstance(client, Client) else None
        """The Temporal client (connected at startup when given an address)."""
        self.address: str | None = client if isinstance(client, str) else None
        self.task_queue = task_queue
        self.namespace = namespace
        self.options = options
        self._agents: TemporalAgents | None = None
        self._runs: Host | None = None
        self._live: dict[str, LiveEvents] = {}
        self._watching: dict[str, asyncio.Task[None]] = {}
        self._seen: dict[str, int] = {}
        self._lease = claim_lease
        self._claims: DecisionClaims | None = None
        self._follow_lease = seconds("follow_lease", follow_lease)
        self._sweep_every = seconds("sweep", sweep)
        self._followers: Followers | None = None
        self._given_up: set[str] = set()
        """Runs this server found cannot be followed: not taken again by its sweeps."""
        self._local = InProcessEngine()
        """Where served Workflows run: in this process, as on the in-process engine."""

    def bind(self, runs: Host) -> None:
        self._runs = runs
        self._local.bind(runs)
        owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._claims = DecisionClaims(runs.store, owner=owner, lease=self._lease,
                                      still_waiting=self._still_waiting)
        self._followers = Followers(runs.store, owner=owner, lease=self._follow_lease,
                                    sweep=self._sweep_every)

    @property
    def followers(self) -> Followers:
        assert self._followers is not None, "bind() first"
        return self._followers

    @property
    def claims(self) -> DecisionClaims:
        assert self._claims is not None, "bind() first"
        return self._claims

    @property
    def runs(self) -> Host:
        assert self._runs is not None, "bind() first"
        return self._runs

    @property
    def agents(self) -> TemporalAgents:
        if self._agents is None:
            raise RuntimeError("the Temporal engine is not connected: the app's lifespan "
                               "connects it (run the app under an ASGI server with lifespan)")
        return self._agents

    def check(self, agent: Any) -> None:
        if not isinstance(agent, Agent | Workflow):
            raise TypeError(
                "create_app(..., engine=TemporalEngine(...)) serves Agent objects (run on "
                "the workers of its task queue, which must host them) and Workflow objects "
                f"(run in this server's process), got {agent!r}"
            )

    # -- the registry, from results ----------------------------------------------------

    async def _put(self, record: RunRecord) -> None:
        await self.runs.store.put_run(record)

    def _record(self, record: RunRecord, result: AgentResult) -> RunRecord:
        return result_record(result, agent=record.agent, scope=record.scope,
                             session=record.session)

    def _events(self, result: AgentResult) -> list[AgentEvent]:
        """The events ``result`` shows that the run's log has not had yet."""
        seen = self._seen.get(result.run_id, 0)
        self._seen[result.run_id] = len(result.messages)
        events: list[AgentEvent] = []
        for message in result.messages[seen:]:
            if message.role == "assistant":
                events.extend(ToolCallEvent(call) for call in message.tool_calls)
            elif message.role == "tool":
                events.append(ToolResultEvent(message.tool_call_id or "", message.name or "",
                                              message.content, message.is_error))
        if result.suspended is not None:
            events.append(InterruptEvent(result.suspended))
        events.append(FinalEvent(result))
        return events

    def _follow(self, record: RunRecord, next_result: Callable[[], Awaitable[AgentResult]],
                version: int) -> None:
        """Write the run's record and events when it next suspends or ends, as its
        follower at ``version`` of its follow key (:mod:`agentkit.serve.followers`)."""
        run_id = record.run_id
        log = self.runs.event_log(run_id)
        # Followed from the first batch by a server that did not follow the run yet:
        # its log of the run is new.
        live = self._live.get(run_id) or self._live.setdefault(
            run_id, LiveEvents(self.runs.store, run_id))
        live.follow(log)

        def drop() -> None:
            live.stop()
            self._live.pop(run_id, None)
            self._seen.pop(run_id, None)
            self.runs.drop_log(run_id)

        async def follow() -> None:
            try:
                # Asked again past a transient error: each call waits anew.
                result = await patiently(run_id, next_result)
            except asyncio.CancelledError:
                live.stop()
                raise  # the server stops; another follows the run
            except WorkflowFailureError as error:
                await live.settle()
                if not await self._failed(record, error.cause, version):
                    drop()
                return
            except Exception as error:
                _log.warning("run %r: could not follow it: %s", run_id, error, exc_info=True)
                self._given_up.add(run_id)
                drop()
                return
            await live.settle()  # what happened before the result, first
            if await self.followers.write(version, self._record(record, result)) is None:
                _log.info("run %r: another server follows it now", run_id)
                drop()
                return
            for event in self._events(result):
                live.add(log, event)
            if result.stop_reason != "suspended":
                self._seen.pop(run_id, None)  # it has no more events
                self._live.pop(run_id, None)

        task = asyncio.get_running_loop().create_task(follow(), name=f"agentkit run {run_id}")
        self._watching[run_id] = task
        task.add_done_callback(lambda _: self._forget(run_id, task))

    async def _failed(self, record: RunRecord, cause: BaseException | None,
                      version: int | None = None) -> bool:
        """Record the end of a run whose workflow was cancelled or failed (as its
        follower at ``version``, if given: False when another follows it now)."""
        cancelled = isinstance(cause, CancelledError)
        status = "cancelled" if cancelled else "error"
        # The workflow fails with an ApplicationError whose message names the error.
        why = None if cancelled else (
            cause.message if isinstance(cause, ApplicationError) else f"{cause}")
        ended = RunRecord(
            run_id=record.run_id, agent=record.agent, status=status, scope=record.scope,
            created=record.created, updated=_now(), session=record.session,
            stop_reason=status, usage=record.usage, cost_usd=record.cost_usd, error=why)
        if version is None:
            await self._put(ended)
        elif await self.followers.write(version, ended) is None:
            return False
        self._live.pop(record.run_id, None)
        self.runs.event_log(record.run_id).add_data(
            {"kind": "final", "stop_reason": status, "output": None,
             **({"error": why} if why else {})})
        return True

    def _forget(self, run_id: str, task: asyncio.Task[None]) -> None:
        if self._watching.get(run_id) is task:
            del self._watching[run_id]

    # -- the engine ----------------------------------------------------------------------

    async def startup(self) -> int:
        """Connect, and follow the runs the registry says are running that no server
        that is up follows (their workflows went on meanwhile); from then on, beat and
        look for such runs every ``sweep`` seconds."""
        if self._agents is None:
            if self.client is None:
                assert self.address is not None
                self.client = await Client.connect(self.address, namespace=self.namespace)
            # The server follows each run's live events (steps, deltas) as they happen.
            options = dataclasses.replace(self.options or RunOptions(), live_events=True)
            self._agents = TemporalAgents(self.client, task_queue=self.task_queue,
                                          options=options, store=self.runs.store)
        await self.followers.beat()  # before it takes any run: it is up
        taken = await self._adopt(recover=True)
        self.followers.start(lambda: self._adopt(recover=False))
        return taken

    async def _adopt(self, *, recover: bool) -> int:
        """Follow each running run in the registry that nobody who is up follows; with
        ``recover`` (at startup), recover the runs of served Workflows too. How many."""
        taken, cursor = 0, None
        while True:
            page = await self.runs.store.list_runs(RunQuery(status="running", cursor=cursor,
                                                            limit=500))
            runs = []
            for record in page.records:
                served = self.runs.agents.get(record.agent)
                if isinstance(served, Workflow):
                    if recover:
                        recover_workflow(self._local, served, record)
                        taken += 1
                elif (served is not None and record.run_id not in self._watching
                      and record.run_id not in self._given_up):
                    runs.append(record)
            for record, held in await self.followers.orphans(runs):
                version = await self.followers.take_over(record, held)
                if version is None or record.run_id in self._watching:
                    continue
                self.runs.event_log(record.run_id, fresh=True)
                self._follow(record, _outcome(self.agents, record.run_id), version)
                taken += 1
            cursor = page.next_cursor
            if cursor is None:
                return taken

    async def start(self, agent: Any, request: StartRequest, run_id: str) -> None:
        if isinstance(agent, Workflow):
            await self._local.start(agent, request, run_id)
            return
        base = self.runs.base
        now = _now()
        record = RunRecord(run_id=run_id, agent=agent.name, status="running",
                           scope=base.scope.key(), created=now, updated=now,
                           session=request.session)
        try:
            await self.agents.start(agent.name, request.task, run_id=run_id,
                                    scope=base.scope, autonomy=base.autonomy,
                                    session=request.session, settings=request.settings)
        except RunNotResumable:
            if await self.runs.store.get_run(run_id) is not None:
                raise  # a start of this server's that got there first: that run is the one
            raise ServeError(409, "run_id_taken", f"run id {run_id!r} is taken by a "
                             "Temporal workflow this server did not start; choose another "
                             "run_id, or leave it out") from None
        # Registered once the workflow is the server's: a run id taken by a workflow
        # started elsewhere must not get a record. Followed before it is registered,
        # so no sweep takes it for a run nobody follows.
        version = await self.followers.take(run_id)
        await self._put(record)
        self.runs.event_log(run_id, fresh=True)
        self._seen[run_id] = 0
        self._follow(record, _outcome(self.agents, run_id), version)

    async def _still_waiting(self, run_id: str, at: int | None) -> bool:
        """The run's workflow waits for a decision, at suspension ``at`` if given."""
        try:
            if await self.agents.pending(run_id) is None:
                return False
            return at is None or await self.agents.suspension(run_id) == at
        except (RPCError, WorkflowQueryFailedError, WorkflowQueryRejectedError):
            return False  # no such workflow (any more), or one that cannot be asked

    async def decide(self, agent: Any, record: RunRecord, decisions: Mapping[str, Any]) -> None:
        if isinstance(agent, Workflow):
            await self._local.decide(agent, record, decisions)
            return
        run_id = record.run_id
        if record.status != "suspended":
            raise RunNotResumable(run_id, f"it is {record.status}, not suspended")
        # Checked before the claim, so a refused decision leaves the run to the next.
        await self.agents.check(run_id, decisions)
        at = await self.agents.suspension(run_id)
        claim = await self.claims.take(record, "decision", at)
        running = RunRecord(run_id=run_id, agent=record.agent, status="running",
                            scope=record.scope, created=record.created, updated=_now(),
                            session=record.session, usage=record.usage,
                            cost_usd=record.cost_usd)
        # Registered before the decision is handed over: a server that dies now or
        # just after leaves a running record, which the next server follows (to this
        # suspension again if the decision never arrived), not a suspended one that
        # nobody follows while its workflow goes on.
        version = await self.followers.take(run_id)
        await self._put(running)
        try:
            next_result = await self.agents.hand(run_id, decisions, at=at)
        except (RunNotResumable, InvalidDecision):
            await self._put(record)  # refused: the run waits as it did
            await self.claims.release(record, claim)
            raise
        except Exception:
            self._follow(running, _outcome(self.agents, run_id), version)  # it may have arrived
            raise
        self._follow(running, next_result, version)

    async def cancel(self, agent: Any, record: RunRecord, reason: str) -> str:
        if isinstance(agent, Workflow):
            return await self._local.cancel(agent, record, reason)
        run_id = record.run_id
        if record.status not in ("running", "suspended"):
            raise RunNotResumable(run_id, f"it is {record.status}; only a running or "
                                  "suspended run can be cancelled")
        if record.status == "suspended":
            await self.claims.take(record, reason, await self.agents.suspension(run_id))
        handle = self.agents.client.get_workflow_handle(run_id)
        await handle.cancel()
        if record.status == "running":
            return "cancelling"  # its follower writes the cancelled record
        # A suspended workflow ends at once: wait for that, not for its outcome (which
        # a suspended run would answer before the cancel reached it).
        try:
            await handle.result()
        except WorkflowFailureError as error:
            await self._failed(record, error.cause)
        return "cancelled"

    async def wait(self, run_id: str) -> None:
        await self._local.wait(run_id)
        task = self._watching.get(run_id)
        if task is not None:
            await asyncio.shield(task)

    async def trace(self, run_id: str) -> RunTrace:
        """One span per model or tool activity of the run's workflow, from its history
        (a served Workflow's run: its spans, as on the in-process engine)."""
        record = await self.runs.store.get_run(run_id)
        if record is not None and isinstance(self.runs.agents.get(record.agent), Workflow):
            return await self._local.trace(run_id)
        handle = self.agents.client.get_workflow_handle(run_id)
        spans: dict[int, TraceSpan] = {}
        try:
            async for event in handle.fetch_history_events():
                at = event.event_time.ToMicroseconds() / 1e6
                if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
                    scheduled = event.activity_task_scheduled_event_attributes
                    name = _summary(event) or scheduled.activity_type.name
                    spans[event.event_id] = TraceSpan(
                        span_id=event.event_id, parent_id=None, name=name, start=at,
                        attributes=FrozenDict({"temporal.activity": scheduled.activity_type.name}))
                    continue
                ended = _ended(event)
                if ended is not None and ended[0] in spans:
                    span = spans[ended[0]]
                    spans[ended[0]] = TraceSpan(
                        span_id=span.span_id, parent_id=None, name=span.name, start=span.start,
                        duration=at - span.start, attributes=span.attributes, error=ended[1])
        except RPCError:
            return RunTrace(run_id=run_id)
        return RunTrace(run_id=run_id, spans=tuple(spans.values()))

    async def state(self, record: RunRecord) -> RunState | None:
        """The run's latest state, asked of its workflow (a served Workflow's run: its
        checkpoint, as on the in-process engine); None when the workflow cannot say
        (gone, no worker to answer, or a worker of before the query)."""
        if isinstance(self.runs.agents.get(record.agent), Workflow):
            return await self._local.state(record)
        try:
            return await self.agents.state(record.run_id)
        except (RPCError, WorkflowQueryFailedError, WorkflowQueryRejectedError) as error:
            _log.info("run %r: its workflow told no state: %s", record.run_id, error)
            return None

    async def close(self) -> None:
        await self._local.close()
        if self._followers is not None:
            await self._followers.stop()  # first: no sweep follows a run from now on
        tasks = list(self._watching.values())
        for task in tasks:
            task.cancel()
        for live in self._live.values():
            live.stop()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._followers is not None:
            await self._followers.leave()  # its runs are the next sweep's of another


def _outcome(agents: TemporalAgents, run_id: str) -> Callable[[], Awaitable[AgentResult]]:
    return lambda: agents.result(run_id)


def _now() -> float:
    return time.time()


def _summary(event: Any) -> str | None:
    payload = event.user_metadata.summary
    if not payload.data:
        return None
    try:
        text = json.loads(payload.data)
    except ValueError:
        return None
    return text if isinstance(text, str) else None


def _ended(event: Any) -> tuple[int, str | None] | None:
    """``(scheduled event id, error)`` of an event that ends an activity, else None."""
    kind = event.event_type
    if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
        return event.activity_task_completed_event_attributes.scheduled_event_id, None
    if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED:
        failed = event.activity_task_failed_event_attributes
        return failed.scheduled_event_id, failed.failure.message or "failed"
    if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
        return event.activity_task_timed_out_event_attributes.scheduled_event_id, "timed out"
    if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED:
        return event.activity_task_canceled_event_attributes.scheduled_event_id, "cancelled"
    return None
