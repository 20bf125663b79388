"""The agent workflow: the same cognition and AgentRun as in-process, with Temporal
effects (each model call and each tool call an activity; the workflow's own state is
the checkpoint; a suspended run waits on an update for the human's decisions).

Workflow code must be deterministic: everything here runs the loop's decisions only,
and every effect goes through :class:`~agentkit.integrations.temporal.effects.TemporalEffects`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from temporalio import workflow
from temporalio.exceptions import ApplicationError, FailureError

from agentkit.agents import lifecycle
from agentkit.agents.decisions import checked
from agentkit.agents.result import AgentResult
from agentkit.agents.run import AgentRun
from agentkit.agents.run_state import RunState
from agentkit.core.contracts.errors import InvalidDecision, RunError
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.types import (
    Message,
    Scope,
)
from agentkit.core.runtime.context import RunContext
from agentkit.core.runtime.invoker import Invoker
from agentkit.integrations.temporal._values import (
    RemoteError,
    RunOptions,
    decision_fields,
    pack,
    pack_bytes,
    result_to,
    unpack,
)
from agentkit.integrations.temporal.effects import (
    GUARDRAIL_ACTIVITY,
    MODEL_ACTIVITY,
    RECALL_ACTIVITY,
    TOOL_ACTIVITY,
    NoModel,
    TemporalEffects,
    _ContinueAsNew,
    activity,
    tools_of,
)
from agentkit.integrations.temporal.history import ModelByActivity, start_history
from agentkit.state.stores.memory import InMemoryStore

_NO_ANSWERS: Mapping[str, Any] = FrozenDict()

if TYPE_CHECKING:
    from agentkit.agents.agent import Agent

__all__ = [
    "GUARDRAIL_ACTIVITY",
    "MODEL_ACTIVITY",
    "RECALL_ACTIVITY",
    "TOOL_ACTIVITY",
    "WORKFLOW",
    "AgentWorkflow",
    "TemporalEffects",
    "host",
    "hosted",
    "tools_of",
]

WORKFLOW = "agentkit.agent_run"
SESSION_LOAD_ACTIVITY = "agentkit.session_load"
SESSION_COMMIT_ACTIVITY = "agentkit.session_commit"
OUTCOME_UPDATE = "agentkit.outcome"
RESUME_UPDATE = "agentkit.resume"
DECIDE_UPDATE = "agentkit.decide"
PENDING_QUERY = "agentkit.pending"
STATE_QUERY = "agentkit.state"
SUSPENDED_MEMO = "agentkit.suspended"
"""The memo (and patch id) a run upserts each time it suspends: the count of results
it has settled so far."""
RESUME_CONTINUED = "agentkit.resume_continued"
"""The patch id of answering a resume update before the run continues as new (its
handler would otherwise be left unfinished, and its caller refused)."""
CONTINUED = "continued"
"""The key of a resume update's answer when the run took the decisions and continued as
new before its next result: the suspension the decisions answered."""

# The agents each task queue's worker hosts, and the latest hosted under each name (for
# a Replayer, whose workflows run outside any task queue). This module is passed through
# the workflow sandbox (not re-imported per workflow), so workflows see the live agents.
_HOSTED: dict[str, dict[str, Agent]] = {}
_LATEST: dict[str, Agent] = {}


def host(task_queue: str, agents: Mapping[str, Agent]) -> None:
    """Make ``agents`` the ones the workflows of ``task_queue`` run."""
    _HOSTED[task_queue] = dict(agents)
    _LATEST.update(agents)


def hosted(task_queue: str, name: str) -> Agent:
    """The agent named ``name`` on ``task_queue`` (else the latest hosted by that name)."""
    agents = _HOSTED.get(task_queue) or _LATEST
    if name not in agents:
        raise ApplicationError(
            f"no agent named {name!r} is hosted on task queue {task_queue!r}; "
            f"hosted agents: {sorted(agents)}",
            type="AgentNotHosted",
            non_retryable=True,
        )
    return agents[name]


def _first_state(
    run_id: str, agent: str, start: Mapping[str, Any], prior: tuple[Message, ...], version: int
) -> RunState:
    """The run's first state from its start: ``task`` is the text, or the whole user
    message when it has media (held by reference: the model activity reads the bytes
    back); ``settings``, when given, override the agent's. Starts of earlier versions
    have a text task and no settings, and give the state they always gave."""
    task = start["task"]
    opening = task if isinstance(task, Message) else None
    state = lifecycle.fresh_state(
        run_id, agent, task if opening is None else opening.content, prior,
        settings=start.get("settings"), session_version=version,
    )
    if opening is None:
        return state
    return replace(state, messages=(*state.messages[:-1], opening))


async def _opened(agent: Agent, start: Mapping[str, Any], session: str | None, scope: Scope,
                  effects: TemporalEffects) -> RunState:
    """The run's first state: its session read once, in the worker's store, and shaped
    by the agent's history policy (a summary's model calls and stored summaries by
    activity). A failure here fails the workflow, as ``agent.run`` raises it."""
    run_id = effects.ctx.correlation_id
    prior: tuple[Message, ...] = ()
    version = 0
    if session is not None:
        try:
            prior, version = await AgentWorkflow._load_session(scope, session, effects.options)
            prior = await start_history(agent, prior, session, scope, run_id, effects)
        except FailureError:
            raise
        except Exception as exc:
            kind, why = ((exc.type_name, exc.message) if isinstance(exc, RemoteError)
                         else (type(exc).__name__, str(exc)))
            raise ApplicationError(f"{kind}: {why}", type=kind, non_retryable=True) from exc
    # The state names no session: the workflow appends the turn by activity, never
    # from workflow code; ``start`` carries the session id.
    return _first_state(run_id, agent.name, start, prior, version)


@workflow.defn(name=WORKFLOW, sandboxed=True)
class AgentWorkflow:
    """One agent run. Input: the agent, task, scope, autonomy, options (and, after
    continue-as-new, the run's state)."""

    def __init__(self) -> None:
        self._run: AgentRun | None = None
        self._result: AgentResult | None = None
        self._settled = 0
        self._decisions: Mapping[str, Any] | None = None
        self._waiting = False
        self._failure: ApplicationError | None = None
        self._resuming = 0
        """Resume updates whose decisions the run took, still waiting for its result."""
        self._continuing = False
        self._effects: TemporalEffects | None = None

    @workflow.run
    async def run(self, payload: str) -> str:
        start = unpack(payload, "start")
        info = workflow.info()
        # Counted across continue-as-new, so a decision's suspension is never reused.
        self._settled = start.get("settled", 0)
        agent = hosted(info.task_queue, start["agent"])
        scope: Scope = start["scope"]
        options: RunOptions = start["options"]
        ctx = RunContext(
            llm=NoModel(),
            store=InMemoryStore(),
            invoker=Invoker(),
            scope=scope,
            correlation_id=info.workflow_id,
            autonomy=start["autonomy"],
        )
        effects = TemporalEffects(agent, ctx, options)
        # A model call made through the context (a Summarize's) is an activity too.
        ctx.llm = ModelByActivity(effects)
        calls, nanos = start.get("spent", (0, 0))
        effects.spent = (calls, nanos)
        session: str | None = start.get("session")
        state: RunState | None = start.get("state")
        if state is None:
            state = await _opened(agent, start, session, scope, effects)
        effects.last = state
        self._effects = effects
        if effects.live is not None:
            effects.live = int(start.get("live", 1))
            effects.published.update(start.get("published", ()))
        run = lifecycle.hosted_run(agent, ctx, state, effects)
        self._run = run
        try:
            if agent.memory is not None:
                # Recalled when the run starts (carried across continue-as-new).
                run.extra_system = start["recalled"] if "recalled" in start else (
                    await effects.recall(run.messages[run.history_len].content))
            while True:
                if run.status == "suspended":
                    result = run.result()
                else:
                    result = await lifecycle.advance(agent, run)
                if session is not None and result.stop_reason == "complete":
                    self._failure = await self._commit_turn(run, scope, session, options,
                                                            result)
                self._result = result
                self._settled += 1
                if self._failure is not None:
                    # Waiting clients get the failure from their update, then the
                    # workflow fails with it.
                    await workflow.wait_condition(workflow.all_handlers_finished)
                    raise self._failure
                if result.stop_reason != "suspended":
                    await workflow.wait_condition(workflow.all_handlers_finished)
                    return result_to(result)
                self._waiting = True
                if workflow.patched(SUSPENDED_MEMO):
                    # The one sign of a suspension in the history, for a client that
                    # waits by reading it (TemporalAgents.result) rather than by an
                    # update, which would add events to every run. Histories recorded
                    # before it replay without it.
                    workflow.upsert_memo({SUSPENDED_MEMO: self._settled})
                await workflow.wait_condition(lambda: self._decisions is not None)
                decisions, self._decisions = self._decisions, None
                self._waiting = False
                assert decisions is not None
                lifecycle.decide(run, decisions)
                if agent.memory is not None:
                    # Recalled again, as agent.resume does in-process.
                    run.extra_system = await effects.recall(
                        run.messages[run.history_len].content)
        except _ContinueAsNew:
            pass
        except (FailureError, RunError):
            raise
        except Exception as exc:
            # A bug or a final error (e.g. the answer never fit the output type): fail
            # the workflow with it rather than retrying the workflow task forever.
            raise ApplicationError(
                f"{type(exc).__name__}: {exc}", type=type(exc).__name__, non_retryable=True
            ) from exc
        carried = dict(start)
        if effects.live is not None:
            carried["live"] = effects.live
            carried["published"] = effects.published_last_turn()
        if agent.memory is not None:
            carried["recalled"] = run.extra_system
        carried["state"] = effects.last
        carried["spent"] = effects.spent
        carried["settled"] = self._settled
        if self._resuming and workflow.patched(RESUME_CONTINUED):
            # A resume's caller waits for the run's next result, which the next
            # workflow run will give: answer it now (it follows the run), since an
            # update left unfinished at continue-as-new is lost, and asked again
            # of a run that waits for nothing. Histories recorded before replay
            # without it.
            self._continuing = True
            await workflow.wait_condition(lambda: self._resuming == 0)
        workflow.continue_as_new(pack(carried))

    @staticmethod
    async def _load_session(
        scope: Scope, session: str, options: RunOptions
    ) -> tuple[tuple[Message, ...], int]:
        text = await activity(SESSION_LOAD_ACTIVITY,
                              pack_bytes({"scope": scope, "session": session}),
                              options, summary=f"session {session}", heartbeat=False)
        answer = unpack(text, "session")
        return tuple(answer["messages"]), int(answer["version"])

    @staticmethod
    async def _commit_turn(
        run: AgentRun, scope: Scope, session: str, options: RunOptions, result: AgentResult
    ) -> ApplicationError | None:
        """Append the completed turn over the version read at start (compare-and-set,
        in the worker's store); the ``SessionBusy`` failure (the run's result in its
        details) when another turn was appended meanwhile, else None."""
        text = await activity(
            SESSION_COMMIT_ACTIVITY,
            pack_bytes({"scope": scope, "session": session, "version": run.session_version,
                        "messages": run.messages[run.history_len:], "turn": run.key,
                        "run_id": run.run_id}),
            options, summary=f"session {session}", heartbeat=False,
        )
        answer = unpack(text, "session commit")
        if "busy" not in answer:
            return None
        return ApplicationError(
                answer["busy"], session, scope.key(), run.run_id, result_to(result),
                type="SessionBusy", non_retryable=True,
            )

    # A waiting client is abandoned at continue-as-new; it asks the next run again.
    @workflow.update(
        name=OUTCOME_UPDATE, unfinished_policy=workflow.HandlerUnfinishedPolicy.ABANDON
    )
    async def outcome(self) -> str:
        """Wait until the run suspends or ends; its result so far."""
        await workflow.wait_condition(self._at_rest)
        return self._answer()

    @workflow.update(name=RESUME_UPDATE)
    async def resume(self, decisions: str, at: int | None = None) -> str:
        """Hand the human's decisions to the suspended run (at suspension ``at``, when
        given: see :meth:`_checked`); its next result, or, when the run continues as
        new before it, ``{"continued": n}`` (``n`` the suspension decided), for the
        caller to follow the run as :meth:`TemporalAgents.hand`'s caller does."""
        settled = self._settled
        self._decisions = self._checked(decisions, at)
        self._resuming += 1
        try:
            await workflow.wait_condition(
                lambda: self._settled > settled or self._continuing)
        finally:
            self._resuming -= 1
        if self._settled > settled:
            return self._answer()
        # Taken, and the run continues as new before its next result.
        return pack({CONTINUED: settled})

    @workflow.update(name=DECIDE_UPDATE)
    def decide(self, decisions: str, at: int | None = None) -> None:
        """Hand the human's decisions to the suspended run and return at once: a
        refusal (see :meth:`_checked`) is the update's, so the caller knows which
        decider of a suspension the run took."""
        self._decisions = self._checked(decisions, at)

    @decide.validator
    def _validate_decide(self, decisions: str, at: int | None = None) -> None:
        self._checked(decisions, at)

    def _answer(self) -> str:
        if self._failure is not None:
            raise self._failure
        assert self._result is not None
        return result_to(self._result)

    @resume.validator
    def _validate_resume(self, decisions: str, at: int | None = None) -> None:
        self._checked(decisions, at)

    def _checked(self, decisions: str, at: int | None) -> Mapping[str, Any]:
        """The decisions, checked; refused unless the run waits, no decision reached it
        yet and, given ``at``, it waits at that suspension (the count of results
        settled), so a late decider never decides a later suspension."""
        run = self._run
        if run is None or not self._waiting or self._decisions is not None:
            raise ApplicationError(
                "the run is not waiting for a decision", type="RunNotResumable"
            )
        if at is not None and at != self._settled:
            raise ApplicationError(
                f"another decision (or a cancel) was accepted first: the run has left "
                f"suspension {at} (it waits at suspension {self._settled})",
                type="RunNotResumable",
            )
        given = unpack(decisions, "decisions")
        try:
            return checked(run.run_id, run.suspended().kinds, given)
        except InvalidDecision as exc:
            # The client rebuilds the same error from its fields (same text everywhere).
            raise ApplicationError(
                str(exc), pack(decision_fields(exc)), type="InvalidDecision"
            ) from None

    @workflow.query(name=PENDING_QUERY)
    def pending(self) -> str:
        """The calls waiting for a person (a Suspended), or None."""
        run = self._run
        if run is None or not self._waiting:
            return pack(None)
        return pack(run.suspended())

    @workflow.query(name=STATE_QUERY)
    def state(self) -> str:
        """The run's latest snapshot (a RunState: its transcript, steps, pending calls),
        the one an in-process run's last checkpoint holds; None before the run opened."""
        effects = self._effects
        return pack(None if effects is None else effects.last)

    def _at_rest(self) -> bool:
        """The run waits for a person, or has ended."""
        result = self._result
        return self._waiting or (result is not None and result.stop_reason != "suspended")
