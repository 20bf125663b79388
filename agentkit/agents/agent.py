"""Agent: a name, a model, a prompt and a cognition; runs, streams, suspends and resumes.

The face of the run lifecycle: every method here opens, resumes or recovers a run with
:mod:`agentkit.agents.lifecycle` and advances it there.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any

from agentkit.agents import lifecycle
from agentkit.agents.cognition.single_call import SingleCallCognition
from agentkit.agents.conversation import Opening
from agentkit.agents.events import AgentEvent, events_of
from agentkit.agents.guarding import guardrails_of
from agentkit.agents.history import HistoryPolicy
from agentkit.agents.lifecycle import Cognition, memory_prompt
from agentkit.agents.nested import run_delegated
from agentkit.agents.output import OutputSpec
from agentkit.agents.result import AgentResult
from agentkit.agents.run import EventSink
from agentkit.agents.summarize import Summarize, agent_history
from agentkit.agents.task import Task
from agentkit.core.contracts.settings import NO_SETTINGS
from agentkit.core.contracts.traits import is_seconds
from agentkit.core.contracts.types import Message, ModelSettings
from agentkit.core.runtime.context import RunContext
from agentkit.state.memory.source import MemorySource, check_memory

__all__ = ["Agent", "Cognition", "memory_prompt"]

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
    ``*_guardrails=`` check the task, answer and tool calls (:mod:`~agentkit.agents.guarding`).
    """

    __slots__ = ("cognition", "description", "guardrails", "history", "max_output_repairs",
                 "memory", "memory_k", "model", "name", "output", "output_spec", "prompt",
                 "settings", "tool_timeout")

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
        input_guardrails: Iterable[Any] = (), output_guardrails: Iterable[Any] = (),
        tool_guardrails: Iterable[Any] = (),
        tools: None = None,
    ) -> None:
        if tools is not None:
            raise TypeError("Agent has no tools= keyword: tools live on the cognition. "
                            "Use Agent(..., cognition=ReActCognition(tools=[...])).")
        if not name or not isinstance(name, str):
            raise ValueError(f"an agent needs a non-empty name, got {name!r}")
        check_memory(memory, memory_k)
        if settings is not None and not isinstance(settings, ModelSettings):
            raise TypeError(f"Agent(settings=...) takes a ModelSettings, got {settings!r}")
        if not is_seconds(tool_timeout):
            raise ValueError("Agent(tool_timeout=...) takes a positive number of seconds "
                             f"or None, got {tool_timeout!r}")
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
        self.settings = settings if settings is not None else NO_SETTINGS
        self.history = agent_history(history, model)
        self.tool_timeout = None if tool_timeout is None else float(tool_timeout)
        self.guardrails = guardrails_of(input_guardrails, output_guardrails, tool_guardrails)

    async def run(
        self,
        task: Task,
        ctx: RunContext,
        *,
        session: str | None = None,
        history: Sequence[Message] | None = None,
        settings: ModelSettings | None = None,
    ) -> AgentResult:
        """Run the agent on ``task`` until it answers, suspends or stops.

        ``task`` is a string, or a sequence of parts (``str``, ``Image``, ``File``,
        ``Audio``): the text parts are the user message, the media its attachments
        (:mod:`agentkit.agents.task`); any other part is a :class:`TypeError`.

        ``session=`` continues the conversation of that id in ``ctx.store`` (for
        ``ctx.scope``); ``history=`` starts from messages the caller keeps instead
        (``result.messages`` of the previous run continues it). ``settings=``
        overrides the agent's model settings for this run.

        Raises :class:`SessionBusy` when the run completed but another run appended a
        turn to the session since this one read it; the result is on the error.
        """
        run = await lifecycle.open_run(self, task, ctx, opening=Opening(session, history, settings))
        return await lifecycle.advance(self, run)

    def stream(
        self,
        task: Task,
        ctx: RunContext,
        *,
        session: str | None = None,
        history: Sequence[Message] | None = None,
        settings: ModelSettings | None = None,
    ) -> AsyncIterator[AgentEvent]:
        """Run the agent on ``task``, yielding typed events as they happen; the last is a
        :class:`FinalEvent` with the :class:`AgentResult`. Keywords as for :meth:`run`."""
        opening = Opening(session, history, settings)
        return events_of(lambda sink: self._start(task, ctx, sink, opening))

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
        return events_of(lambda sink: self._resume(run_id, decisions, ctx, sink, session, settings))

    async def run_delegated(self, task: Task, ctx: RunContext) -> AgentResult:
        """Run as the sub-run of the tool call being executed (``as_tool`` calls this):
        its suspension suspends the run above (see :mod:`agentkit.agents.nested`)."""
        result: AgentResult = await run_delegated(self, task, ctx)
        return result

    async def _start_at(self, key: str, task: Task, ctx: RunContext) -> AgentResult:
        return await self._start(task, ctx, None, key=key)

    async def _resume_at(
        self, key: str, decisions: Mapping[str, Any], ctx: RunContext
    ) -> AgentResult:
        return await self._resume(ctx.correlation_id, decisions, ctx, None, key=key)

    async def _continue_at(self, key: str, task: Task, ctx: RunContext) -> AgentResult:
        return await lifecycle.continue_at(self, key, task, ctx)

    async def _start(
        self, task: Task, ctx: RunContext, sink: EventSink | None,
        opening: Opening | None = None, *, key: str | None = None,
    ) -> AgentResult:
        run = await lifecycle.open_run(self, task, ctx, sink=sink, opening=opening, key=key)
        return await lifecycle.advance(self, run)

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
        result of ``c1``. Raises :class:`InvalidDecision` (a ``ValueError``) for an id
        that is not pending or a decision of a form its call does not accept, naming the
        pending ids and the accepted forms, before anything changes.

        A run started with ``session=`` appends its turn to that session when it
        completes (``session=`` here, if given, must name the same session);
        ``settings=`` overrides the model settings from here on.

        Raises :class:`RunNotResumable` when the run is not suspended, or when another
        worker resumed it first.
        """
        return await self._resume(run_id, decisions, ctx, None, session, settings)

    async def _resume(
        self, run_id: str, decisions: Mapping[str, Any], ctx: RunContext,
        sink: EventSink | None, session: str | None = None,
        settings: ModelSettings | None = None, *, key: str | None = None,
    ) -> AgentResult:
        run = await lifecycle.resume_run(self, run_id, decisions, ctx, sink=sink,
                                         session=session, settings=settings, key=key)
        return await lifecycle.advance(self, run)

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
        return await lifecycle.recover(self, run_id, ctx, session=session, settings=settings)

    def __repr__(self) -> str:
        return f"Agent(name={self.name!r}, model={self.model!r}, cognition={self.cognition!r})"

