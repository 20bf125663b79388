"""Engines: where the runs a server starts execute. :class:`ServedRuns` does everything
that is the same on every engine (who may do what, the run registry, the audit of
decisions, event logs); an engine starts, resumes, cancels and follows runs.

This module holds the seam only: what an engine is asked (:class:`Engine`) and what it
may ask of the runs it serves (:class:`Host`). The engines are
:class:`agentkit.serve.inprocess.InProcessEngine` (the default: runs advance as tasks on
the server's event loop through the lifecycle, as ``Agent.run`` does) and
:class:`agentkit.serve.temporal.TemporalEngine` (Temporal workflows on ``agentkit
temporal worker`` processes).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from agentkit.agents.events import AgentEvent
from agentkit.agents.run_state import RunState
from agentkit.agents.task import Task
from agentkit.core.contracts.ports import Store
from agentkit.core.contracts.runs import RunRecord
from agentkit.core.contracts.types import ModelSettings
from agentkit.core.runtime.context import RunContext
from agentkit.state.traces import RunTrace

__all__ = ["Driver", "Engine", "Host", "Log", "ServeError", "StartRequest"]


class ServeError(Exception):
    """A request the server cannot carry out, with the HTTP status that says why."""

    def __init__(self, status: int, kind: str, message: str, **detail: Any) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message
        self.detail = detail


@dataclass(frozen=True, slots=True, kw_only=True)
class StartRequest:
    """A new run of an agent, as a face asks for it."""

    agent: str
    """The agent's name."""
    task: Task
    """The user's input: text, or text and media parts."""
    session: str | None = None
    """Continue this conversation."""
    settings: ModelSettings | None = None
    """Model settings for this run."""
    run_id: str | None = None
    """The run's id; giving one twice starts one run."""


class Log(Protocol):
    """A run's event log, numbered from 1 (see :class:`agentkit.serve.runs.EventLog`)."""

    def add(self, event: AgentEvent) -> None:
        """Append a typed event."""

    def add_data(self, data: dict[str, Any]) -> None:
        """Append an event's data as it is sent."""


class Host(Protocol):
    """What an engine may ask of the :class:`~agentkit.serve.runs.ServedRuns` it serves."""

    agents: dict[str, Any]
    base: RunContext
    store: Store

    def event_log(self, run_id: str, *, fresh: bool = False) -> Log:
        """The run's event log (a new one with ``fresh``)."""

    def drop_log(self, run_id: str) -> None:
        """Forget the run's event log."""


class Engine(Protocol):
    """What :class:`ServedRuns` asks of the engine that executes its runs.

    Each method gets a run the caller already checked (the agent is served, the
    principal may see and act on the run); refusals are the lifecycle's own errors
    (:class:`InvalidDecision`, :class:`RunNotResumable`), which the caller renders.
    """

    name: str
    """``in-process`` or ``temporal``, as ``GET /healthz`` reports it."""

    def bind(self, runs: Host) -> None:
        """Called once, by the :class:`ServedRuns` that uses this engine."""

    def check(self, agent: Any) -> None:
        """Refuse (TypeError naming what is supported) a served object this engine
        cannot run."""

    async def startup(self) -> int:
        """Connect, and take over the runs left by a server that stopped; how many."""

    async def start(self, agent: Any, request: StartRequest, run_id: str) -> None:
        """Start the run ``run_id``; :class:`RunNotResumable` when another start with
        that run id got there first."""

    async def decide(self, agent: Any, record: RunRecord, decisions: Mapping[str, Any]) -> None:
        """Resume the suspended run with ``decisions``; once this returns, the
        decisions are this run's (a concurrent decision loses)."""

    async def cancel(self, agent: Any, record: RunRecord, reason: str) -> str:
        """Cancel the run: ``cancelling`` (it stops at its next safe point) or
        ``cancelled`` (it stopped); :class:`RunNotResumable` when it cannot be."""

    async def wait(self, run_id: str) -> None:
        """Return once this process stops following the run (it suspended or ended)."""

    async def trace(self, run_id: str) -> RunTrace:
        """The run's spans so far."""

    async def state(self, record: RunRecord) -> RunState | None:
        """The run's latest state (its transcript, steps), as its last checkpoint holds
        it wherever the engine keeps it; None for a run without one, or not an agent's
        run."""

    async def close(self) -> None:
        """Stop following runs; each keeps its durable state for the next start."""


class Driver(Protocol):
    """An engine that drives work in tasks of its own (the in-process one), as the
    served workflows (:mod:`agentkit.serve.workflows`) need it."""

    @property
    def runs(self) -> Host:
        """The runs it serves."""

    def context_for(self, run_id: str) -> RunContext:
        """A context of the run's own."""

    def drive_task(self, run_id: str, work: Callable[[], Any], ctx: RunContext) -> None:
        """Run ``work()`` in a task it waits on, cancels and stops."""
