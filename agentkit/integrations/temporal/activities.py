"""The activities: one model call or one tool call of a run, in a worker, through the
worker's full middleware chains on a RunContext for that run."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from temporalio import activity
from temporalio.exceptions import ApplicationError

from agentkit.agents.effects import execute_tool_call, streamed_call
from agentkit.agents.events import GuardrailEvent, StepEvent, ToolCallEvent, ToolResultEvent
from agentkit.agents.guarding import GuardrailCheck, guardrails_at, verdict
from agentkit.agents.outcomes import Answered, Stopped, ToolJob, ToolOutcome
from agentkit.agents.recall import recall
from agentkit.core.contracts.errors import ProviderError, RunError
from agentkit.core.contracts.ports import BudgetLedger
from agentkit.core.contracts.state_errors import SessionBusy, VersionConflict
from agentkit.core.contracts.types import Autonomy, ChatRequest, LLMResult, Message, Scope
from agentkit.core.policies.budget import Budget, run_budget
from agentkit.core.runtime.context import CancelToken, RunContext
from agentkit.core.runtime.spans import TRACE_SEED, open_span
from agentkit.integrations.temporal._values import (
    PayloadTooLarge,
    answer_fields,
    call_context,
    error_fields,
    job_from,
    outcome_fields,
    pack_bytes,
    pack_bytes_within,
    unpack,
)
from agentkit.integrations.temporal.history import SUMMARIES_ACTIVITY, SUMMARY_KEYS
from agentkit.integrations.temporal.live import LivePublisher
from agentkit.integrations.temporal.workflow import (
    GUARDRAIL_ACTIVITY,
    MODEL_ACTIVITY,
    RECALL_ACTIVITY,
    SESSION_COMMIT_ACTIVITY,
    SESSION_LOAD_ACTIVITY,
    TOOL_ACTIVITY,
    tools_of,
)
from agentkit.state.media_refs import by_reference, by_value
from agentkit.state.sessions import append_turn, load_session

if TYPE_CHECKING:
    from agentkit.agents.agent import Agent
    from agentkit.tools.registry import ToolRegistry

__all__ = ["AgentActivities", "run_budget", "run_context"]

T = TypeVar("T")


def _spent_since(budget: BudgetLedger | None, spent: tuple[int, int]) -> tuple[int, int]:
    """What ``budget`` (made by :func:`run_budget` from ``spent``) admitted and charged."""
    if not isinstance(budget, Budget):
        return (0, 0)
    return (budget.calls - spent[0], budget._spent - spent[1])


def run_context(
    base: RunContext,
    run_id: str,
    scope: Scope,
    autonomy: Autonomy | str,
    spent: tuple[int, int] = (0, 0),
) -> RunContext:
    """``base``'s services and policy, acting for run ``run_id`` in ``scope``, with
    the run's own budget (``base``'s ceilings, from the run's ``spent``)."""
    # A run of its own: it must not share the worker's cancel token or depth.
    return base.for_run(
        run_id, scope=scope, autonomy=autonomy, budget=run_budget(base.budget, spent),
        cancel=CancelToken(), depth=0,
    )


def _workflow_id() -> str:
    """The id of the workflow that scheduled this activity: the run's id, which a job
    leaves out when it is that."""
    return activity.info().workflow_id or ""


async def _in_span(ctx: RunContext, what: str, work: Awaitable[T]) -> T:
    """Await ``work`` (heartbeating) inside an activity span that carries the run's id,
    so the chain's spans of every activity of one run can be found together, whichever
    worker ran them."""
    info = activity.info()
    attributes = {
        "agentkit.run_id": ctx.correlation_id,
        TRACE_SEED: ctx.correlation_id,
        "temporal.workflow_id": info.workflow_id,
        "temporal.activity_id": info.activity_id,
        "temporal.attempt": info.attempt,
    }
    with open_span(ctx.tracer, f"temporal.activity {what}", attributes):
        return await _heartbeating(work)


async def _heartbeating(work: Awaitable[T]) -> T:
    """Await ``work`` while telling Temporal this worker is alive, every third of the
    heartbeat timeout, so a dead worker's call is noticed within that timeout."""
    timeout = activity.info().heartbeat_timeout
    if timeout is None:
        return await work
    interval = max(timeout.total_seconds() / 3, 0.05)

    async def beat() -> None:
        # The first beat after one interval, not at once: the activity's start already
        # told Temporal the worker is alive, and most calls end before a beat is due,
        # so they make no heartbeat request at all.
        while True:
            await asyncio.sleep(interval)
            activity.heartbeat()

    beating = asyncio.ensure_future(beat())
    try:
        return await work
    finally:
        beating.cancel()


async def _published_call(ctx: RunContext, request: ChatRequest, job: Mapping[str, Any],
                          live: LivePublisher) -> LLMResult:
    """The model call streamed, its events published as an in-process run emits them:
    the answers the workflow gave itself since the last call (a rejection, an unknown
    tool), the deltas, then the answer's tool calls and its step."""
    announce = set(job.get("announce", ()))
    for message in request.messages:
        if message.role == "tool" and message.tool_call_id in announce:
            live.add(ToolResultEvent(message.tool_call_id or "", message.name or "",
                                     message.content, message.is_error))
    result = await streamed_call(ctx, request, live.add)
    for call in result.tool_calls:
        live.add(ToolCallEvent(call))
    live.add(StepEvent(int(job.get("step", 0)), result.usage,
                       model=result.model or request.model))
    return result


async def _with_live(answer: dict[str, Any], live: LivePublisher | None) -> dict[str, Any]:
    """``answer``, telling the workflow the number after the last batch written."""
    if live is not None:
        answer["live"] = await live.close()
    return answer


async def _checked_result(
    agent: Agent, registry: ToolRegistry, ctx: RunContext, job: ToolJob
) -> tuple[ToolOutcome, dict[str, Any]]:
    """The call's outcome, with its tool guardrails' verdict on an answer (what the
    run checks before the model reads it, checked here so that the answer the workflow
    records is the one the guardrails left): the fields saying so, else none."""
    outcome = await execute_tool_call(ctx, job, registry)
    call = job.call
    if not isinstance(outcome, Answered) or not guardrails_at(agent, registry, "result",
                                                               call.name):
        return outcome, {}
    check = GuardrailCheck("result", outcome.content, f"tool {call.name} result", call)
    try:
        value, trip = await verdict(agent, registry, check, ctx)
    except Exception as error:  # the call ran: say so, never "outcome unknown"
        return replace(outcome, content=""), {"broken": error_fields(error)}
    if trip is not None:
        return replace(outcome, content=""), {"checked": True, "trip": trip}
    if isinstance(value, str):
        return replace(outcome, content=value), {"checked": True}
    # Not a text: the run refuses the rewrite, naming it, as in-process.
    return replace(outcome, content=""), {"checked": True, "rewrite": value}


def _too_large(tool: str, size: int, limit: int) -> str:
    return (
        f"The call to {tool!r} ran once, but its result is {size:,} bytes, over the "
        f"{limit:,}-byte limit on one value passed through Temporal, so it was dropped; "
        "the call is not run again. Ask for a smaller result (a part, a summary, or a "
        "reference to where it is stored)."
    )


class AgentActivities:
    """The model and tool activities for the agents a worker hosts. Each takes its input
    as the store format's bytes, or as its text when a workflow task of an earlier
    version scheduled it (``json/plain``), and answers in bytes (``binary/plain``)."""

    def __init__(self, agents: Mapping[str, Agent], context: Callable[[], RunContext]) -> None:
        self.agents = dict(agents)
        self.base = context()
        if not isinstance(self.base, RunContext):
            raise TypeError(
                f"AgentWorker(context=...) must return a RunContext (e.g. make_ctx(llm)), "
                f"got {self.base!r}"
            )

    def _agent(self, name: str) -> Agent:
        agent = self.agents.get(name)
        if agent is None:
            raise ApplicationError(
                f"this worker hosts no agent named {name!r}; it hosts {sorted(self.agents)}",
                type="AgentNotHosted",
                non_retryable=True,
            )
        return agent

    @activity.defn(name=MODEL_ACTIVITY)
    async def model_call(self, payload: str | bytes) -> bytes:
        job = unpack(payload, "model call")
        self._agent(job["agent"])
        live = self._publisher(job)
        run_id, scope, autonomy, spent, limit = call_context(job, _workflow_id())
        ctx = run_context(self.base, run_id, scope, autonomy, spent)
        # Media the run holds by reference (its task's) go to the model whole.
        request: ChatRequest = await by_value(self.base.store, job["request"])
        try:
            if live is None:
                result: LLMResult = await _in_span(
                    ctx, f"model_call {request.model}", ctx.invoker.chat(request, ctx)
                )
            else:
                result = await _in_span(ctx, f"model_call {request.model}",
                                        _published_call(ctx, request, job, live))
        except RunError as exc:
            answer = answer_fields({"stop": error_fields(exc)}, _spent_since(ctx.budget, spent))
            return pack_bytes(await _with_live(answer, live))
        except ProviderError as exc:
            if exc.kind != "context_length":
                raise  # retried by Temporal, or final, as any failed attempt
            # Final, and the run's to handle (a Summarize summarises and asks again).
            refused = {"message": str(exc), "provider": exc.provider, "status": exc.status,
                       "request_id": exc.request_id}
            answer = answer_fields({"refused": refused}, _spent_since(ctx.budget, spent))
            return pack_bytes(await _with_live(answer, live))
        finally:
            if live is not None:
                await live.close()  # a failed attempt's deltas too, before its retry's
        used = _spent_since(ctx.budget, spent)
        try:
            answer = await _with_live(answer_fields({"result": result}, used), live)
            return pack_bytes_within(answer, limit, ctx.correlation_id,
                                     f"the answer of a call to model {request.model!r}")
        except PayloadTooLarge as exc:
            # Final, not transient: the same answer would be refused on every attempt.
            stop = answer_fields({"stop": error_fields(exc)}, used)
            return pack_bytes(await _with_live(stop, live))

    def _publisher(self, job: Mapping[str, Any]) -> LivePublisher | None:
        """The attempt's publisher of live events, when the run asked for them."""
        first = job.get("live")
        if first is None:
            return None
        info = activity.info()
        return LivePublisher(self.base.store, call_context(job, _workflow_id())[0], first,
                             f"{info.workflow_run_id}:{info.activity_id}", info.attempt)

    @activity.defn(name=TOOL_ACTIVITY)
    async def tool_call(self, payload: str | bytes) -> bytes:
        """One tool call of a run: its outcome, waiting for a person included (a
        question mid-call, a sub-run that suspended, its checkpoint in this worker's
        store, which a later job with ``wake`` continues)."""
        given = unpack(payload, "tool call")
        agent = self._agent(given["agent"])
        registry = getattr(agent.cognition, "tools", None)
        if registry is None:
            raise ApplicationError(
                f"agent {agent.name!r} has no tools", type="NoTools", non_retryable=True
            )
        workflow_id = _workflow_id()
        job = job_from(given, agent.model, workflow_id)
        ctx = run_context(self.base, job.run_id, job.scope, job.autonomy, job.spent)
        outcome, checked = await _in_span(
            ctx, f"tool_call {job.call.name}", _checked_result(agent, registry, ctx, job)
        )
        spent = _spent_since(ctx.budget, job.spent)
        if isinstance(outcome, Stopped):
            return pack_bytes(answer_fields({"stop": error_fields(outcome.error)}, spent))
        if isinstance(outcome, Answered) and outcome.attachments:
            # By reference, as the task's media: stored once, where every later model
            # call's input would otherwise carry the bytes again.
            held = await by_reference(
                self.base.store, Message("tool", attachments=outcome.attachments))
            outcome = replace(outcome, attachments=held.attachments)
        limit = call_context(given, workflow_id)[4]
        live = self._publisher(given)
        text = pack_bytes(answer_fields({**outcome_fields(outcome), **checked}, spent))
        if len(text) > limit:
            # The call ran: say so, so it is neither retried nor reported as unknown.
            outcome = Answered(_too_large(job.call.name, len(text), limit), True)
            checked = {}
            text = pack_bytes(answer_fields(outcome_fields(outcome), spent))
        if live is None or not isinstance(outcome, Answered) or "broken" in checked:
            return text
        if "trip" in checked:
            live.add(GuardrailEvent(checked["trip"]))  # the model never reads the result
        else:
            live.add(ToolResultEvent(job.call.id, job.call.name, outcome.content,
                                     outcome.is_error))
        answered = answer_fields({**outcome_fields(outcome), **checked}, spent)
        return pack_bytes(await _with_live(answered, live))

    @activity.defn(name=GUARDRAIL_ACTIVITY)
    async def guardrail_check(self, payload: str | bytes) -> bytes:
        """The guardrails of one place of a run on one value: the rewrite or the trip,
        which is recorded in the worker's audit log and span, and published live."""
        job = unpack(payload, "guardrail check")
        agent = self._agent(job["agent"])
        run_id, scope, autonomy, spent, _ = call_context(job, _workflow_id())
        ctx = run_context(self.base, run_id, scope, autonomy, spent)
        check: GuardrailCheck = job["check"]
        live = self._publisher(job)
        answer: dict[str, Any] = {}
        try:
            value, trip = await _in_span(ctx, f"guardrails {check.where}",
                                         verdict(agent, tools_of(agent), check, ctx))
        except RunError as exc:  # a refusal of a guardrail's own call (budget, cancel)
            answer["stop"] = error_fields(exc)
        except Exception as exc:  # user code that failed: the run fails, never retried
            answer["broken"] = error_fields(exc)
        else:
            if trip is not None:
                answer["trip"] = trip
                if live is not None:
                    live.add(GuardrailEvent(trip))
            elif value is not check.value:
                answer["value"] = value
        checked_answer = answer_fields(answer, _spent_since(ctx.budget, spent))
        return pack_bytes(await _with_live(checked_answer, live))

    @activity.defn(name=RECALL_ACTIVITY)
    async def recall(self, payload: str | bytes) -> bytes:
        """A run's recall from its agent's memory, on the worker: the system-prompt
        addition for its task."""
        job = unpack(payload, "recall")
        agent = self._agent(job["agent"])
        run_id, scope, autonomy, spent, _ = call_context(job, _workflow_id())
        ctx = run_context(self.base, run_id, scope, autonomy, spent)
        answer: dict[str, Any] = {}
        try:
            answer["recalled"] = await _in_span(ctx, "recall", recall(agent, job["task"], ctx))
        except RunError as exc:
            answer["stop"] = error_fields(exc)
        return pack_bytes(answer_fields(answer, _spent_since(ctx.budget, spent)))

    @activity.defn(name=SUMMARIES_ACTIVITY)
    async def session_summaries(self, payload: str | bytes) -> bytes:
        """Read the summaries a run's history policy asks for, or keep a new one (a
        compare-and-set), in the worker's store: session summary keys only."""
        job = unpack(payload, "session summaries")
        keys = job["read"] if "read" in job else [job["write"]]
        if not all(isinstance(k, str) and k.startswith(SUMMARY_KEYS) for k in keys):
            raise ApplicationError(f"not session summary keys: {keys!r}",
                                   type="NotSummaryKeys", non_retryable=True)
        store = self.base.store
        if "read" in job:
            return pack_bytes({"values": [list(v) for v in await store.get_versioned_many(keys)]})
        try:
            version = await store.set_versioned(job["write"], job["value"],
                                                expected_version=job["expected"])
        except VersionConflict as exc:
            return pack_bytes({"conflict": exc.actual})
        return pack_bytes({"version": version})

    @activity.defn(name=SESSION_LOAD_ACTIVITY)
    async def session_load(self, payload: str | bytes) -> bytes:
        """A run's one read of its session, in the worker's store."""
        job = unpack(payload, "session load")
        record, version = await load_session(self.base.store, job["scope"], job["session"])
        return pack_bytes({"messages": record.messages, "version": version})

    @activity.defn(name=SESSION_COMMIT_ACTIVITY)
    async def session_commit(self, payload: str | bytes) -> bytes:
        """Append a completed run's turn over the version it read (a retried append of
        the same turn is a no-op); ``busy`` when another turn got there first."""
        job = unpack(payload, "session commit")
        try:
            await append_turn(
                self.base.store, job["scope"], job["session"], version=job["version"],
                messages=job["messages"], turn=job["turn"], run_id=job["run_id"],
            )
        except SessionBusy as exc:
            return pack_bytes({"busy": str(exc)})
        return pack_bytes({"appended": True})

    def all(self) -> list[Callable[..., Any]]:
        """The activity callables to register with a worker."""
        return [self.model_call, self.tool_call, self.guardrail_check, self.session_load,
                self.session_commit, self.session_summaries, self.recall]
