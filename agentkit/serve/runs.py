"""ServedRuns: the runs a server drives, for every route module of the app to call.

Starting, deciding, cancelling, listing and streaming a run go through here: what is
the same on every engine (who may do what, the run registry, the audit of decisions,
the event logs) is done here, and the rest by the engine (:mod:`agentkit.serve.engine`:
in-process through the lifecycle, or on Temporal workers). A route module (the JSON
API, an AG-UI endpoint) parses a request, calls one method and renders what it returns
or raises (a :class:`ServeError` carries its HTTP status).

Each run keeps a log of its events here, numbered from 1, so a client can replay a
run's events and continue from the last one it saw; the logs are this process's (a run
recovered after a restart starts a new log).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import Any, TypeVar

from agentkit.agents.conversation import Opening
from agentkit.agents.events import AgentEvent
from agentkit.agents.run_state import TERMINAL, RunState
from agentkit.core.contracts.errors import InvalidDecision, RunNotResumable
from agentkit.core.contracts.run_totals import RunSummary
from agentkit.core.contracts.runs import RecordedDecision, RunFilter, RunPage, RunQuery, RunRecord
from agentkit.core.contracts.types import Scope
from agentkit.core.runtime.context import RunContext, new_run_id
from agentkit.core.stores.run_totals import summarize_runs
from agentkit.serve.access import Principal
from agentkit.serve.decision_audit import audit_cancel, audit_decisions
from agentkit.serve.edits import edit_problems
from agentkit.serve.engine import Engine, ServeError, StartRequest
from agentkit.serve.inprocess import InProcessEngine
from agentkit.serve.wire import event_data, inbox_kind
from agentkit.state.traces import RunTrace

__all__ = ["EventLog", "ServeError", "ServedRuns", "StartRequest"]

_Filter = TypeVar("_Filter", bound=RunFilter)

KEPT_LOGS = 1000
"""How many runs' event logs a server keeps in memory; a run whose log was dropped
streams one event saying where it stands."""


class EventLog:
    """A run's events, numbered from 1, that readers replay and then follow."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self._changed = asyncio.Event()
        self.dropped = False
        """Set when this process stops following the run (it is another's to advance)."""

    def add(self, event: AgentEvent) -> None:
        self.add_data(event_data(event))

    def add_data(self, data: dict[str, Any]) -> None:
        self.events.append(data)
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def drop(self) -> None:
        """No more events come here: readers waiting for them stop waiting."""
        self.dropped = True
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    async def after(self, last: int) -> AsyncIterator[tuple[int, dict[str, Any]]]:
        """The events after number ``last``, as they come, up to the next final event
        (or until the log is dropped)."""
        at = max(last, 0)
        while True:
            while at < len(self.events):
                data = self.events[at]
                at += 1
                yield at, data
                if data["kind"] == "final":
                    return
            if self.dropped:
                return
            await self._changed.wait()


def _visible(query: _Filter, principal: Principal) -> _Filter:
    """``query`` narrowed to the scopes ``principal`` may see."""
    if principal.scopes is None:
        return query
    allowed = principal.scopes if query.scopes is None else tuple(
        s for s in query.scopes if s in principal.scopes
    )
    return dataclasses.replace(query, scopes=allowed)


def _decision_log(run_id: str) -> str:
    return f"agentkit:decisions:{run_id}"


class ServedRuns:
    """The agents a server serves, by name, and the runs it drives."""

    def __init__(self, agents: Sequence[Any], context: Callable[[], RunContext],
                 engine: Engine | None = None) -> None:
        if not callable(context):
            raise TypeError(
                "create_app(context=...) takes a zero-argument callable returning the base "
                f"RunContext (e.g. lambda: make_ctx(llm)), got {context!r}"
            )
        self.engine: Engine = engine if engine is not None else InProcessEngine()
        self.agents: dict[str, Any] = {}
        for agent in agents:
            self.engine.check(agent)
            if agent.name in self.agents:
                raise ValueError(f"two served agents are named {agent.name!r}; rename one")
            self.agents[agent.name] = agent
        if not self.agents:
            raise ValueError("create_app(agents=...) needs at least one Agent to serve")
        base = context()
        if not isinstance(base, RunContext):
            raise TypeError(
                f"create_app(context=...) must return a RunContext (e.g. make_ctx(llm)), "
                f"got {type(base).__name__}"
            )
        self.base = base
        self.store = base.store
        self._logs: OrderedDict[str, EventLog] = OrderedDict()
        self.engine.bind(self)

    # -- lookups ------------------------------------------------------------------------

    def agent(self, name: str) -> Any:
        """The served agent ``name``; 404 naming the agents served."""
        found = self.agents.get(name)
        if found is None:
            raise ServeError(404, "unknown_agent", f"no agent named {name!r} is served here; "
                             f"agents served: {sorted(self.agents)}")
        return found

    async def record(self, run_id: str, principal: Principal) -> RunRecord:
        """The run's record; 404 when there is none or it is another scope's."""
        record = await self.store.get_run(run_id)
        if record is None or not principal.sees(record.scope):
            raise ServeError(404, "unknown_run", f"no run {run_id!r} is known here")
        return record

    async def decisions(self, run_id: str) -> tuple[RecordedDecision, ...]:
        """Who decided what on the run, oldest first."""
        return tuple(await self.store.list(_decision_log(run_id)))

    async def runs(self, query: RunQuery, principal: Principal) -> RunPage:
        """A page of the runs ``principal`` may see."""
        return await self.store.list_runs(_visible(query, principal))

    async def summary(self, query: RunFilter, principal: Principal) -> RunSummary:
        """The sums of the runs ``principal`` may see that ``query`` matches (one
        aggregate on the stores agentkit ships; paged from the listing on others)."""
        return await summarize_runs(self.store, _visible(query, principal))

    async def inbox(
        self, principal: Principal, *, agent: str | None, kind: str | None, limit: int,
        cursor: str | None,
    ) -> tuple[list[tuple[RunRecord, Any]], str | None]:
        """The calls that wait for a person across runs, a page of suspended runs at a time."""
        page = await self.runs(
            RunQuery(status="suspended", agent=agent, limit=limit, cursor=cursor), principal
        )
        found = [
            (record, call) for record in page.records for call in record.pending
            if kind is None or inbox_kind(call.kind) == kind
        ]
        return found, page.next_cursor

    async def trace(self, run_id: str, principal: Principal) -> RunTrace:
        """The run's spans so far (empty for a run this server never traced)."""
        await self.record(run_id, principal)
        return await self.engine.trace(run_id)

    def session_scope(self, principal: Principal) -> Scope:
        """The scope whose sessions ``principal`` may read (the context's); 404 for a
        principal of other scopes."""
        scope = self.base.scope
        if not principal.sees(scope.key()):
            raise ServeError(404, "unknown_session", "no sessions are known here")
        return scope

    async def state(self, run_id: str, principal: Principal) -> RunState | None:
        """The run's latest state (its transcript, steps, usage), from its engine (a
        checkpoint in the store in process, the workflow on Temporal); None for a run
        without one, or not an agent's run."""
        return await self.engine.state(await self.record(run_id, principal))

    # -- running ------------------------------------------------------------------------

    def event_log(self, run_id: str, *, fresh: bool = False) -> EventLog:
        """The run's event log (a new one with ``fresh``), where its engine adds its
        events; the logs of the :data:`KEPT_LOGS` runs used last are kept, older ones
        dropped."""
        log = None if fresh else self._logs.get(run_id)
        if log is None:
            log = self._logs[run_id] = EventLog()
        self._logs.move_to_end(run_id)
        while len(self._logs) > KEPT_LOGS:
            self._logs.popitem(last=False)
        return log

    def drop_log(self, run_id: str) -> None:
        """Forget the run's event log (the run is not this server's to follow); its
        readers are told where the run stands."""
        log = self._logs.pop(run_id, None)
        if log is not None:
            log.drop()

    async def start(self, request: StartRequest, principal: Principal) -> tuple[RunRecord, bool]:
        """Start a run on the engine: ``(record, started)``; a run id already
        registered returns that run, not started again."""
        agent = self.agent(request.agent)
        run_id = request.run_id or new_run_id()
        existing = await self._existing(run_id, agent, principal)
        if existing is not None:
            return existing, False
        try:
            Opening(request.session, None, request.settings)
        except (TypeError, ValueError) as error:
            raise ServeError(400, "bad_request", str(error)) from None
        try:
            await self.engine.start(agent, request, run_id)
        except RunNotResumable:
            # Another start with this run id claimed it first: that run is the one.
            existing = await self._existing(run_id, agent, principal)
            if existing is None:
                raise
            return existing, False
        return await self.record(run_id, principal), True

    async def _existing(
        self, run_id: str, agent: Any, principal: Principal
    ) -> RunRecord | None:
        record = await self.store.get_run(run_id)
        if record is None:
            return None
        if record.agent != agent.name or not principal.sees(record.scope):
            raise ServeError(409, "run_id_taken", f"run id {run_id!r} is taken by another "
                             "run; choose another run_id, or leave it out")
        return record

    async def wait(self, run_id: str, principal: Principal) -> RunRecord:
        """The run's record once this process stops advancing it."""
        await self.engine.wait(run_id)
        return await self.record(run_id, principal)

    def _acting(self, record: RunRecord, principal: Principal, what: str) -> Any:
        """The served agent of ``record``, once ``principal`` may ``what`` it."""
        if not principal.can_decide:
            raise ServeError(403, "forbidden", f"principal {principal.name!r} may not "
                             f"{what} runs; run {record.run_id!r} is unchanged")
        agent = self.agents.get(record.agent)
        if agent is None:
            raise ServeError(409, "agent_not_served", f"run {record.run_id!r} is a run of "
                             f"agent {record.agent!r}, which this server does not serve")
        return agent

    async def decide(
        self, run_id: str, decisions: Any, principal: Principal
    ) -> RunRecord:
        """Resume the suspended run with a person's decisions (the form ``Agent.resume``
        takes); 422 for decisions the run cannot take, 409 when another decision was
        accepted first, or the run was cancelled."""
        record = await self.record(run_id, principal)
        if not principal.can_decide:
            raise ServeError(403, "forbidden", f"principal {principal.name!r} may not decide "
                             f"for runs; run {run_id!r} is unchanged")
        if not isinstance(decisions, Mapping) or not all(isinstance(k, str) for k in decisions):
            raise ServeError(400, "bad_request", 'the body\'s "decisions" must be an object '
                             'from pending call id to decision, e.g. {"c1": "approve"}')
        agent = self._acting(record, principal, "decide for")
        problems = edit_problems(self.agents, record, decisions)
        if problems:
            call_id, found = next(iter(problems.items()))
            raise ServeError(422, "invalid_arguments", f"run {run_id!r}: the edited "
                             f"arguments of call {call_id!r} do not fit the tool's schema: "
                             f"{'; '.join(found)}; nothing ran and the run still waits",
                             problems=problems)
        try:
            await self.engine.decide(agent, record, decisions)
        except InvalidDecision as error:
            raise ServeError(422, "invalid_decision", str(error),
                             pending=dict(error.pending), accepted=dict(error.accepted)) from None
        except RunNotResumable as error:
            raise ServeError(409, "not_resumable", str(error)) from None
        now = time.time()
        for call_id, decision in decisions.items():
            await self.store.append(_decision_log(run_id), RecordedDecision(
                call_id=call_id, decision=decision, by=principal.name, at=now))
        await audit_decisions(self.base, record, decisions, principal.name, now)
        return await self.record(run_id, principal)

    async def cancel(self, run_id: str, principal: Principal) -> RunRecord:
        """Cancel a run: one advancing stops at its next safe point (``cancelling``;
        its events end with a final event whose stop reason is ``cancelled``), one
        waiting for a person ends at once (``cancelled``; its calls leave the inbox)."""
        record = await self.record(run_id, principal)
        agent = self._acting(record, principal, "cancel")
        try:
            await self.engine.cancel(agent, record, f"cancelled by {principal.name}")
        except RunNotResumable as error:
            raise ServeError(409, "not_cancellable", f"run {run_id!r} cannot be cancelled: "
                             f"{error.reason}") from None
        await audit_cancel(self.base, record, principal.name, time.time())
        return await self.record(run_id, principal)

    async def events(
        self, run_id: str, principal: Principal, last: int
    ) -> AsyncIterator[tuple[int, dict[str, Any]]]:
        """The run's events after number ``last``, then live, up to the next final event."""
        record = await self.record(run_id, principal)
        log = self._logs.get(run_id)
        if log is None:
            return _settled(record)
        return self._follow(run_id, log, last)

    async def _follow(
        self, run_id: str, log: EventLog, last: int
    ) -> AsyncIterator[tuple[int, dict[str, Any]]]:
        async for item in log.after(last):
            yield item
            if item[1]["kind"] == "final":
                return
        # The log was dropped under its readers (say, a recovery this server tried found
        # the run alive on another): they end on where the run stands, not wait for ever.
        record = await self.store.get_run(run_id)
        if record is not None:
            yield len(log.events) + 1, settled_data(record)

    def last_event(self, run_id: str) -> int:
        """The number of the run's last event in this process's log (0 when it keeps
        none): a face that decides for a suspended run streams what comes after it."""
        log = self._logs.get(run_id)
        return 0 if log is None else len(log.events)

    async def recover_all(self) -> int:
        """Connect the engine and take over the runs left by a server that stopped."""
        return await self.engine.startup()

    async def close(self) -> None:
        """Stop advancing runs: each keeps its last checkpoint for the next start."""
        await self.engine.close()


def settled_data(record: RunRecord) -> dict[str, Any]:
    """Where a run stands, as the event a process that does not follow it can give."""
    if record.status in TERMINAL or record.status == "suspended":
        return {"kind": "final", "stop_reason": record.stop_reason or record.status,
                "output": record.output, "status": record.status}
    return {"kind": "status", "status": record.status}


async def _settled(record: RunRecord) -> AsyncIterator[tuple[int, dict[str, Any]]]:
    """The one event of a run this process holds no log for: where it stands."""
    yield 1, settled_data(record)
