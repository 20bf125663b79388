"""InProcessEngine: the runs a server starts advance as tasks on its event loop,
through the lifecycle (:mod:`agentkit.agents.lifecycle`), as ``Agent.run`` does; served
workflows through :mod:`agentkit.serve.workflows`. Their checkpoints are in the store,
and a server that stops leaves each at its last one for the next to recover.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from typing import Any

from agentkit.agents import lifecycle
from agentkit.agents.agent import Agent
from agentkit.agents.cancelling import cancel_suspended
from agentkit.agents.conversation import Opening
from agentkit.agents.events import FinalEvent
from agentkit.agents.result import AgentResult
from agentkit.agents.run import AgentRun
from agentkit.agents.run_state import RunState
from agentkit.agents.workflow import Workflow
from agentkit.core.contracts.errors import RunNotResumable
from agentkit.core.contracts.runs import RunQuery, RunRecord
from agentkit.core.contracts.state_errors import CheckpointCorrupt
from agentkit.core.policies.budget import run_budget
from agentkit.core.runtime.context import CancelToken, RunContext
from agentkit.serve.engine import Host, StartRequest
from agentkit.serve.workflows import (
    cancel_workflow,
    decide_workflow,
    recover_workflow,
    start_workflow,
)
from agentkit.state.checkpoints.store_checkpointer import checkpointer_for
from agentkit.state.traces import RunTrace, TraceRecorder, load_trace, save_trace

__all__ = ["InProcessEngine"]

_log = logging.getLogger("agentkit.serve")


class InProcessEngine:
    """Runs as tasks on this process's event loop; their checkpoints are in the store,
    and a server that stops leaves each at its last one for the next to recover."""

    name = "in-process"

    def __init__(self) -> None:
        self._tasks: dict[str, asyncio.Task[AgentResult | None]] = {}
        self._cancels: dict[str, CancelToken] = {}
        # The recorders of the runs this server advances now: their spans so far are
        # the trace a reader sees while the run runs (the store has it once it stops).
        self._recorders: dict[str, TraceRecorder] = {}
        self._runs: Host | None = None

    def bind(self, runs: Host) -> None:
        self._runs = runs

    @property
    def runs(self) -> Host:
        assert self._runs is not None, "bind() first"
        return self._runs

    def check(self, agent: Any) -> None:
        if not isinstance(agent, Agent | Workflow):
            raise TypeError(f"create_app(agents=...) takes Agent and Workflow objects, "
                            f"got {agent!r}")

    def _context(
        self, run_id: str, earlier: RunTrace | None = None
    ) -> tuple[RunContext, TraceRecorder]:
        base = self.runs.base
        recorder = TraceRecorder(run_id, earlier=earlier)
        ctx = base.for_run(
            run_id, budget=run_budget(base.budget), cancel=CancelToken(), depth=0,
            tracer=recorder,
        )
        return ctx, recorder

    def _drive(self, run_id: str, work: Callable[[], Any], recorder: TraceRecorder,
               cancel: CancelToken) -> None:
        log = self.runs.event_log(run_id)
        store = self.runs.store
        self._recorders[run_id] = recorder

        async def drive() -> AgentResult | None:
            try:
                result: AgentResult | None = await work()
            except Exception as error:  # the run's own failure: its record says so
                _log.warning("run %r failed: %s", run_id, error, exc_info=True)
                # Readers of its events learn it ended, rather than wait for ever.
                log.add_data({"kind": "final", "stop_reason": "error", "output": None,
                              "error": f"{type(error).__name__}: {error}"})
                return None
            finally:
                with contextlib.suppress(Exception):
                    await save_trace(store, recorder.trace())
                if self._recorders.get(run_id) is recorder:
                    del self._recorders[run_id]
            if result is None:  # not this server's to advance: it keeps no log of it
                self.runs.drop_log(run_id)
                return None
            log.add(FinalEvent(result))
            return result

        self._track(run_id, drive, cancel)

    def _track(self, run_id: str, work: Callable[[], Any], cancel: CancelToken) -> None:
        self._cancels[run_id] = cancel
        task = asyncio.get_running_loop().create_task(work(), name=f"agentkit run {run_id}")
        self._tasks[run_id] = task
        task.add_done_callback(lambda _: self._forget(run_id, task))

    def context_for(self, run_id: str) -> RunContext:
        """A context of the run's own (id, budget, cancel token), for a served workflow."""
        return self._context(run_id)[0]

    def drive_task(self, run_id: str, work: Callable[[], Any], ctx: RunContext) -> None:
        """Run ``work()`` in a task this engine waits on, cancels and stops; a failure
        ends the run's events with a final ``error`` event."""
        log = self.runs.event_log(run_id)

        async def drive() -> None:
            try:
                await work()
            except Exception as error:
                _log.warning("run %r failed: %s", run_id, error, exc_info=True)
                log.add_data({"kind": "final", "stop_reason": "error", "output": None,
                              "error": f"{type(error).__name__}: {error}"})

        self._track(run_id, drive, ctx.cancel)

    def _forget(self, run_id: str, task: asyncio.Task[Any]) -> None:
        if self._tasks.get(run_id) is task:
            del self._tasks[run_id]
            self._cancels.pop(run_id, None)

    def _advance(self, agent: Agent, run: AgentRun, recorder: TraceRecorder) -> None:
        self._drive(run.run_id, lambda: lifecycle.advance(agent, run), recorder, run.ctx.cancel)

    async def start(self, agent: Any, request: StartRequest, run_id: str) -> None:
        if isinstance(agent, Workflow):
            await start_workflow(self, agent, request, run_id)
            return
        opening = Opening(request.session, None, request.settings)
        ctx, recorder = self._context(run_id)
        sink = self.runs.event_log(run_id, fresh=True).add
        run = await lifecycle.open_run(agent, request.task, ctx, sink=sink, opening=opening)
        self._advance(agent, run, recorder)

    async def decide(self, agent: Any, record: RunRecord, decisions: Mapping[str, Any]) -> None:
        run_id = record.run_id
        if isinstance(agent, Workflow):
            await decide_workflow(self, agent, record, decisions)
            return
        ctx, recorder = self._context(run_id, await load_trace(self.runs.store, run_id))
        run = await lifecycle.resume_run(agent, run_id, decisions, ctx,
                                         sink=self.runs.event_log(run_id).add)
        self._advance(agent, run, recorder)

    async def cancel(self, agent: Any, record: RunRecord, reason: str) -> str:
        run_id = record.run_id
        token, task = self._cancels.get(run_id), self._tasks.get(run_id)
        if token is not None and task is not None:
            token.cancel(reason)
            return "cancelling"
        if record.status == "running":
            raise RunNotResumable(run_id, "it is running, but not on this server; cancel "
                                  "it on the server that advances it")
        if record.status != "suspended":
            raise RunNotResumable(run_id, f"it is {record.status}; only a running or "
                                  "suspended run can be cancelled")
        # A run waiting for a person has no task to stop: its checkpoint is claimed
        # (as a decision would claim it) and ends cancelled.
        if isinstance(agent, Workflow):
            await cancel_workflow(self, agent, record)
            return "cancelled"
        result = await cancel_suspended(agent, run_id, self._context(run_id)[0],
                                                  reason)
        self.runs.event_log(run_id).add(FinalEvent(result))
        return "cancelled"

    async def wait(self, run_id: str) -> None:
        task = self._tasks.get(run_id)
        if task is not None:
            await asyncio.shield(task)

    async def trace(self, run_id: str) -> RunTrace:
        live = self._recorders.get(run_id)
        if live is not None:
            return live.trace()
        return await load_trace(self.runs.store, run_id) or RunTrace(run_id=run_id)

    async def state(self, record: RunRecord) -> RunState | None:
        """The run's last checkpoint in the store, through the lifecycle's loader."""
        run_id = record.run_id
        try:
            state, _ = await lifecycle.load_checkpoint(
                checkpointer_for(self.runs.base), f"{run_id}:{record.agent}", run_id,
                RunState, "an agent run's state",
            )
        except CheckpointCorrupt:  # a workflow's checkpoint, say: it has no transcript
            return None
        return state

    async def startup(self) -> int:
        """Take over the runs of served agents left running by a server that died."""
        runs = self.runs
        taken = 0
        cursor: str | None = None
        while True:
            page = await runs.store.list_runs(RunQuery(status="running", cursor=cursor,
                                                       limit=500))
            for record in page.records:
                agent = runs.agents.get(record.agent)
                if agent is None or record.run_id in self._tasks:
                    continue
                if isinstance(agent, Workflow):
                    recover_workflow(self, agent, record)
                    taken += 1
                    continue
                earlier = await load_trace(runs.store, record.run_id)
                ctx, recorder = self._context(record.run_id, earlier)
                runs.event_log(record.run_id, fresh=True)
                self._drive(record.run_id, _recovering(agent, record.run_id, ctx),
                            recorder, ctx.cancel)
                taken += 1
            cursor = page.next_cursor
            if cursor is None:
                return taken

    async def close(self) -> None:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _recovering(agent: Agent, run_id: str, ctx: RunContext) -> Callable[[], Any]:
    async def work() -> AgentResult | None:
        try:
            result: AgentResult = await lifecycle.recover(agent, run_id, ctx)
        except RunNotResumable as error:  # its worker is alive, or another took it
            _log.info("run %r not recovered here: %s", run_id, error)
            return None
        return result
    return work
