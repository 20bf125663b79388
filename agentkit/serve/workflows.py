"""Served :class:`~agentkit.agents.workflow.Workflow` runs on the in-process engine.

A workflow keeps its own checkpoint (``Workflow.run``, ``resume``, ``recover``); the
engine drives those in tasks as it drives agent runs, and writes the run registry's
records from each :class:`WorkflowResult` (a workflow writes none of its own). A
decision is answered once the workflow claimed its checkpoint: the claim is seen
through the run's checkpointer, so the decision module's refusals (422) and a lost
claim (409) reach the person, and the rest runs in the background. A cancel stops a
running workflow through its token, before its next step, or ends a suspended one with
the same compare-and-set a decision's claim makes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from agentkit.agents.cancelling import cancel_suspended_workflow
from agentkit.agents.events import InterruptEvent
from agentkit.agents.registry import result_record
from agentkit.agents.workflow import Workflow, WorkflowResult
from agentkit.core.contracts.errors import InvalidDecision, RunNotResumable
from agentkit.core.contracts.ports import Checkpointer
from agentkit.core.contracts.runs import RunRecord
from agentkit.core.runtime.context import RunContext
from agentkit.serve.engine import Driver, ServeError, StartRequest
from agentkit.serve.wire import jsonable, usage_data
from agentkit.state.checkpoints.store_checkpointer import checkpointer_for

__all__ = ["cancel_workflow", "decide_workflow", "recover_workflow", "start_workflow"]


class _Claiming:
    """The run's checkpointer, telling when the run's first save (its claim) is done."""

    def __init__(self, inner: Checkpointer, on_claim: Callable[[], Awaitable[None]]) -> None:
        self.inner = inner
        self.on_claim = on_claim
        self.claimed = asyncio.Event()

    async def load(self, key: str) -> tuple[Any, int]:
        return await self.inner.load(key)

    async def save(self, key: str, state: Any, *, expected_version: int) -> int:
        version = await self.inner.save(key, state, expected_version=expected_version)
        if not self.claimed.is_set():
            # Written while the workflow waits on its claim: its own end is written
            # after this, never before.
            await self.on_claim()
            self.claimed.set()
        return version


async def _ended(engine: Driver, record: RunRecord, result: WorkflowResult) -> None:
    """Write the record and events of a workflow's ``result``."""
    runs = engine.runs
    output = jsonable(result.terminal_outputs) if result.stop_reason == "complete" else None
    await runs.store.put_run(result_record(result, agent=record.agent, scope=record.scope,
                                           session=record.session, output=output))
    log = runs.event_log(record.run_id)
    if result.suspended is not None:
        log.add(InterruptEvent(result.suspended))
    log.add_data({"kind": "final", "stop_reason": result.stop_reason, "output": output,
                  "usage": usage_data(result.usage)})


def _follow(engine: Driver, record: RunRecord,
            work: Callable[[RunContext], Any], ctx: RunContext) -> None:
    """Drive ``work(ctx)`` in a task; write the record and events of its result."""

    async def followed() -> None:
        result: WorkflowResult | None = await work(ctx)
        if result is not None:
            await _ended(engine, record, result)

    engine.drive_task(record.run_id, followed, ctx)


def _running(record: RunRecord) -> RunRecord:
    return RunRecord(run_id=record.run_id, agent=record.agent, status="running",
                     scope=record.scope, created=record.created, updated=time.time(),
                     session=record.session, usage=record.usage, cost_usd=record.cost_usd)


async def start_workflow(engine: Driver, workflow: Workflow, request: StartRequest,
                         run_id: str) -> None:
    """Register the run and run the workflow in the background."""
    if request.session is not None or request.settings is not None:
        raise ServeError(400, "bad_request", f"{workflow.name!r} is a Workflow: a workflow "
                         'run takes "input" only (no "session" or "settings")')
    task = request.task
    if not isinstance(task, str):
        raise ServeError(400, "bad_request", f"{workflow.name!r} is a Workflow, whose task "
                         'is text: give "input" as text, not media parts')
    ctx = engine.context_for(run_id)
    now = time.time()
    record = RunRecord(run_id=run_id, agent=workflow.name, status="running",
                       scope=ctx.scope.key(), created=now, updated=now)
    await engine.runs.store.put_run(record)
    engine.runs.event_log(run_id, fresh=True)
    _follow(engine, record, lambda c: workflow.run(task, c), ctx)


async def decide_workflow(engine: Driver, workflow: Workflow, record: RunRecord,
                          decisions: Mapping[str, Any]) -> None:
    """Resume the suspended workflow; return once it claimed its checkpoint."""
    ctx = engine.context_for(record.run_id)
    async def running() -> None:
        await engine.runs.store.put_run(_running(record))

    claiming = _Claiming(checkpointer_for(ctx), running)
    ctx.checkpointer = claiming
    refused: asyncio.Future[BaseException] = asyncio.get_running_loop().create_future()

    async def resumed(c: RunContext) -> WorkflowResult | None:
        try:
            return await workflow.resume(record.run_id, decisions, c)
        except (InvalidDecision, RunNotResumable) as error:
            if claiming.claimed.is_set():
                raise
            refused.set_result(error)  # before the claim: the person is told, not the log
            return None

    _follow(engine, record, resumed, ctx)
    claimed: asyncio.Future[Any] = asyncio.ensure_future(claiming.claimed.wait())
    try:
        await asyncio.wait((claimed, refused), return_when=asyncio.FIRST_COMPLETED)
    finally:
        claimed.cancel()
    if refused.done():
        raise refused.result()


async def cancel_workflow(engine: Driver, workflow: Workflow, record: RunRecord) -> None:
    """End the suspended workflow run as cancelled (a running one is cancelled through
    its token, as an agent's is); :class:`RunNotResumable` when a decision won."""
    result = await cancel_suspended_workflow(workflow, record.run_id,
                                             engine.context_for(record.run_id))
    await _ended(engine, record, result)


def recover_workflow(engine: Driver, workflow: Workflow, record: RunRecord) -> None:
    """Continue a workflow left running by a server that stopped."""
    async def recovered(c: RunContext) -> WorkflowResult | None:
        try:
            return await workflow.recover(record.run_id, c)
        except RunNotResumable:
            return None
    engine.runs.event_log(record.run_id, fresh=True)
    _follow(engine, record, recovered, engine.context_for(record.run_id))
