"""The agent workflow: the same cognition and AgentRun as in-process, with Temporal
effects (each model call and each tool call an activity; the workflow's own state is
the checkpoint; a suspended run waits on an update for the human's decisions).

Workflow code must be deterministic: everything here runs the loop's decisions only,
and every effect goes through :class:`TemporalEffects`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError, FailureError

from agentkit.agents import lifecycle
from agentkit.agents.decisions import checked
from agentkit.agents.effects import execute_tool_call
from agentkit.agents.history import HistoryPolicy
from agentkit.agents.outcomes import Answered, Stopped, ToolJob, ToolOutcome, Unknown
from agentkit.agents.result import AgentResult
from agentkit.agents.run import AgentRun
from agentkit.agents.run_state import RunState
from agentkit.core.contracts.errors import InvalidDecision, RunError
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.ports import Context
from agentkit.core.contracts.traits import traits_of
from agentkit.core.contracts.types import (
    ChatRequest,
    LLMResult,
    Message,
    Scope,
)
from agentkit.core.runtime.context import RunContext
from agentkit.core.runtime.invoker import Invoker
from agentkit.integrations.temporal._values import (
    RunOptions,
    call_fields,
    decision_fields,
    error_from,
    job_fields,
    outcome_from,
    pack,
    pack_within,
    result_to,
    unpack,
)
from agentkit.state.stores.memory import InMemoryStore

_NO_ANSWERS: Mapping[str, Any] = FrozenDict()

if TYPE_CHECKING:
    from agentkit.agents.agent import Agent
    from agentkit.tools.registry import ToolRegistry

__all__ = ["WORKFLOW", "AgentWorkflow", "TemporalEffects", "host", "hosted"]

WORKFLOW = "agentkit.agent_run"
MODEL_ACTIVITY = "agentkit.model_call"
TOOL_ACTIVITY = "agentkit.tool_call"
SESSION_LOAD_ACTIVITY = "agentkit.session_load"
SESSION_COMMIT_ACTIVITY = "agentkit.session_commit"
OUTCOME_UPDATE = "agentkit.outcome"
RESUME_UPDATE = "agentkit.resume"
DECIDE_UPDATE = "agentkit.decide"
PENDING_QUERY = "agentkit.pending"
SUSPENDED_MEMO = "agentkit.suspended"
"""The memo (and patch id) a run upserts each time it suspends: the count of results
it has settled so far."""

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


class _NoModel:
    """The workflow's context has no model: every model call is an activity."""

    async def chat(self, request: ChatRequest, ctx: Context) -> LLMResult:
        raise RuntimeError("a workflow never calls a model directly")

    def stream(self, request: ChatRequest, ctx: Context) -> Any:
        raise RuntimeError("a workflow never calls a model directly")


def _retry(attempts: int) -> RetryPolicy:
    return RetryPolicy(
        initial_interval=timedelta(seconds=1),
        backoff_coefficient=2.0,
        maximum_interval=timedelta(seconds=30),
        maximum_attempts=attempts,
    )


class TemporalEffects:
    """The run's effects as Temporal activities; checkpoints are the workflow's state."""

    def __init__(self, agent: Agent, ctx: RunContext, options: RunOptions) -> None:
        self.agent = agent
        self.ctx = ctx
        self.options = options
        self.made = 0
        """Model calls made in this workflow run (its history is bounded by them)."""
        self.last: RunState | None = None
        """The run's latest snapshot, carried into the next run at continue-as-new."""
        self.spent: tuple[int, int] = (0, 0)
        """The run's budget ledger: metered calls admitted and nano-dollars charged by
        its activities so far (each activity's budget starts from it)."""

    def _charge(self, answer: Mapping[str, Any]) -> None:
        calls, nanos = answer.get("spent", (0, 0))
        self.spent = (self.spent[0] + calls, self.spent[1] + nanos)

    async def save(self, snapshot: RunState, version: int) -> int:
        # Temporal's event history is the run's durable state: nothing to write.
        self.last = snapshot
        return version

    async def forget(self, job: ToolJob, answer: Message) -> None:
        return None  # Temporal keeps no intents: a call's activity runs once or is unknown

    async def call_model(self, request: ChatRequest) -> LLMResult:
        if self.made >= self.options.continue_as_new_after:
            # Keep the history bounded: carry the run's state into a fresh workflow run.
            raise _ContinueAsNew
        self.made += 1
        ctx = self.ctx
        options = self.options
        steps = self.last.steps if self.last is not None else 0
        # Checked here, in workflow code: a command Temporal refuses fails the workflow
        # task, which is retried for ever; a run that stops answers.
        fields = call_fields(self.agent.name, ctx.correlation_id, ctx.correlation_id,
                             ctx.scope, ctx.autonomy.value, self.spent,
                             options.max_payload_bytes)
        fields["request"] = request
        payload = pack_within(
            fields, options.max_payload_bytes, ctx.correlation_id,
            f"the input of model call {steps + 1}",
        )
        text = await workflow.execute_activity(
            MODEL_ACTIVITY,
            payload,
            result_type=str,
            start_to_close_timeout=timedelta(seconds=options.model_timeout),
            heartbeat_timeout=timedelta(seconds=options.heartbeat_timeout),
            retry_policy=_retry(options.max_attempts),
            summary=f"model {request.model}",
        )
        answer = unpack(text, "model answer")
        self._charge(answer)
        if "stop" in answer:
            raise error_from(answer["stop"])
        result: LLMResult = answer["result"]
        return result

    async def call_tool(self, job: ToolJob) -> ToolOutcome:
        registry = tools_of(self.agent)
        call = job.call
        if call.name not in registry:
            # Unknown tools are answered without a worker: nothing runs.
            return await execute_tool_call(self.ctx, job, registry)
        tool = registry.get(call.name)
        once = traits_of(tool).side_effecting and not traits_of(tool).idempotent
        options = self.options
        # A tool's own limit is enforced inside the activity (a clean ToolTimeout); the
        # activity's start-to-close follows it, a heartbeat timeout later, so a worker
        # that dies or hangs past the limit is given up on too, never after RunOptions'.
        limit = traits_of(tool).timeout or job.timeout
        closes = options.tool_timeout if limit is None else min(
            options.tool_timeout, limit + options.heartbeat_timeout)
        payload = pack_within(
            job_fields(self.agent.name, replace(job, spent=self.spent),
                       options.max_payload_bytes, self.ctx.correlation_id),
            options.max_payload_bytes, job.run_id,
            f"the input of tool call {call.id!r} ({call.name!r})",
        )
        try:
            text = await workflow.execute_activity(
                TOOL_ACTIVITY,
                payload,
                result_type=str,
                start_to_close_timeout=timedelta(seconds=closes),
                heartbeat_timeout=timedelta(seconds=options.heartbeat_timeout),
                retry_policy=_retry(1 if once else options.max_attempts),
                summary=f"tool {call.name}",
            )
        except ActivityError as exc:
            if once:
                # The one attempt of a call that changes the world ended without a
                # result (its worker died or timed out): it may or may not have acted.
                return Unknown(f"{call.name!r} is not declared idempotent, so it is not retried")
            return Answered(
                f"The call to {call.name!r} failed {options.max_attempts} time(s) without a "
                f"result (the worker running it stopped or timed out: {_cause(exc)}).",
                True,
            )
        answer = unpack(text, "tool answer")
        self._charge(answer)
        if "stop" in answer:
            return Stopped(error_from(answer["stop"]))
        return outcome_from(answer)


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


def tools_of(agent: Agent) -> ToolRegistry:
    """The agent's tool registry (an empty one for a cognition without tools)."""
    from agentkit.tools.registry import ToolRegistry

    registry = getattr(agent.cognition, "tools", None)
    return registry if isinstance(registry, ToolRegistry) else ToolRegistry()


def _cause(error: BaseException) -> str:
    while error.__cause__ is not None:
        error = error.__cause__
    return str(error) or type(error).__name__


class _ContinueAsNew(BaseException):
    """Raised inside the loop to leave it for a fresh workflow run. A BaseException, so
    the loop's error handling (which stops runs on RunError) lets it through."""


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
            llm=_NoModel(),
            store=InMemoryStore(),
            invoker=Invoker(),
            scope=scope,
            correlation_id=info.workflow_id,
            autonomy=start["autonomy"],
        )
        session: str | None = start.get("session")
        state: RunState | None = start.get("state")
        if state is None:
            prior: tuple[Message, ...] = ()
            version = 0
            if session is not None:
                # The run's one read of its session, in the worker's store.
                prior, version = await self._load_session(scope, session, options)
                if isinstance(agent.history, HistoryPolicy):  # AgentWorker refuses others
                    prior = agent.history.trim(prior)
            # The state names no session: the workflow appends the turn by activity
            # (below), never from workflow code; ``start`` carries the session id.
            state = _first_state(info.workflow_id, agent.name, start, prior, version)
        effects = TemporalEffects(agent, ctx, options)
        calls, nanos = start.get("spent", (0, 0))
        effects.spent = (calls, nanos)
        effects.last = state
        run = lifecycle.hosted_run(agent, ctx, state, effects)
        self._run = run
        try:
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
        carried["state"] = effects.last
        carried["spent"] = effects.spent
        carried["settled"] = self._settled
        workflow.continue_as_new(pack(carried))

    @staticmethod
    async def _load_session(
        scope: Scope, session: str, options: RunOptions
    ) -> tuple[tuple[Message, ...], int]:
        text = await workflow.execute_activity(
            SESSION_LOAD_ACTIVITY,
            pack({"scope": scope, "session": session}),
            result_type=str,
            start_to_close_timeout=timedelta(seconds=options.model_timeout),
            retry_policy=_retry(options.max_attempts),
            summary=f"session {session}",
        )
        answer = unpack(text, "session")
        return tuple(answer["messages"]), int(answer["version"])

    @staticmethod
    async def _commit_turn(
        run: AgentRun, scope: Scope, session: str, options: RunOptions, result: AgentResult
    ) -> ApplicationError | None:
        """Append the completed turn over the version read at start (compare-and-set,
        in the worker's store); the ``SessionBusy`` failure (the run's result in its
        details) when another turn was appended meanwhile, else None."""
        text = await workflow.execute_activity(
            SESSION_COMMIT_ACTIVITY,
            pack({"scope": scope, "session": session, "version": run.session_version,
                  "messages": run.messages[run.history_len:], "turn": run.key,
                  "run_id": run.run_id}),
            result_type=str,
            start_to_close_timeout=timedelta(seconds=options.model_timeout),
            retry_policy=_retry(options.max_attempts),
            summary=f"session {session}",
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
        given: see :meth:`_checked`); its next result."""
        settled = self._settled
        self._decisions = self._checked(decisions, at)
        await workflow.wait_condition(lambda: self._settled > settled)
        return self._answer()

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

    def _at_rest(self) -> bool:
        """The run waits for a person, or has ended."""
        result = self._result
        return self._waiting or (result is not None and result.stop_reason != "suspended")
