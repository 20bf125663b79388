"""The effects of the agent workflow: each model call and each tool call of a run is an
activity, scheduled here; a checkpoint is the workflow's own state. Workflow code:
everything here must be deterministic (the activities do the I/O).
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from temporalio import workflow
from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, ApplicationError

from agentkit.agents.effects import execute_tool_call
from agentkit.agents.guarding import GuardrailCheck
from agentkit.agents.outcomes import Answered, Stopped, ToolJob, ToolOutcome, Unknown
from agentkit.agents.run_state import RunState
from agentkit.core.contracts.errors import ProviderError
from agentkit.core.contracts.ports import Context
from agentkit.core.contracts.traits import traits_of
from agentkit.core.contracts.types import ChatRequest, LLMResult, Message
from agentkit.core.guardrails.running import GuardrailTrip
from agentkit.core.runtime.context import RunContext
from agentkit.integrations.temporal._values import (
    RunOptions,
    call_fields,
    error_from,
    job_fields,
    outcome_from,
    pack_bytes_within,
    unpack,
)

if TYPE_CHECKING:
    from agentkit.agents.agent import Agent
    from agentkit.tools.registry import ToolRegistry

__all__ = [
    "GUARDRAIL_ACTIVITY",
    "MODEL_ACTIVITY",
    "RECALL_ACTIVITY",
    "TOOL_ACTIVITY",
    "NoModel",
    "TemporalEffects",
    "activity",
    "retry_policy",
    "tools_of",
]

MODEL_ACTIVITY = "agentkit.model_call"
TOOL_ACTIVITY = "agentkit.tool_call"
GUARDRAIL_ACTIVITY = "agentkit.guardrail_check"
RECALL_ACTIVITY = "agentkit.recall"
_SAME: Any = object()
"""A tool activity's verdict that left the result as the answer holds it."""


class _ContinueAsNew(BaseException):
    """Raised inside the loop to leave it for a fresh workflow run. A BaseException, so
    the loop's error handling (which stops runs on RunError) lets it through."""


class NoModel:
    """The workflow's context has no model: every model call is an activity."""

    async def chat(self, request: ChatRequest, ctx: Context) -> LLMResult:
        raise RuntimeError("a workflow never calls a model directly")

    def stream(self, request: ChatRequest, ctx: Context) -> Any:
        raise RuntimeError("a workflow never calls a model directly")


def retry_policy(attempts: int) -> RetryPolicy:
    """How an activity of the run is retried: ``attempts`` at most, backing off."""
    return RetryPolicy(
        initial_interval=timedelta(seconds=1),
        backoff_coefficient=2.0,
        maximum_interval=timedelta(seconds=30),
        maximum_attempts=attempts,
    )


def activity(name: str, payload: bytes, options: RunOptions, *, summary: str,
             closes: float | None = None, attempts: int | None = None,
             heartbeat: bool = True) -> Awaitable[str | bytes]:
    """Schedule the run's activity ``name`` with ``payload`` (workflow code): it closes
    after ``closes`` seconds (the options' model timeout by default), is tried
    ``attempts`` times (the options' ``max_attempts`` by default), and heartbeats
    unless it is a short read or write of the store (``heartbeat=False``).

    Its result is the store format's bytes (a ``binary/plain`` payload), or, in a
    history recorded before activities answered in bytes, its text (``json/plain``):
    no result type is given, so each decodes as it was stored, for :func:`unpack`."""
    return workflow.execute_activity(
        name,
        payload,
        start_to_close_timeout=timedelta(
            seconds=options.model_timeout if closes is None else closes),
        heartbeat_timeout=(timedelta(seconds=options.heartbeat_timeout) if heartbeat
                           else None),
        retry_policy=retry_policy(options.max_attempts if attempts is None else attempts),
        summary=summary,
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
        self.live: int | None = 1 if options.live_events else None
        """The number of the run's next batch of live events, as far as its activities
        said (:mod:`agentkit.integrations.temporal.live`); None when not published."""
        self.published: set[str] = set()
        """The calls whose results a tool activity published (the next model call's
        activity publishes the others of its turn)."""
        self.verdicts: dict[str, tuple[Any, GuardrailTrip | None]] = {}
        """The result guardrails' verdicts that tool activities gave with their answers
        (the rewrite, or :data:`_SAME`, and the trip), by call id, until asked for."""

    def _charge(self, answer: Mapping[str, Any]) -> None:
        calls, nanos = answer.get("spent", (0, 0))
        self.spent = (self.spent[0] + calls, self.spent[1] + nanos)
        if self.live is not None:
            self.live = max(self.live, int(answer.get("live", 0)))

    def published_last_turn(self) -> list[str]:
        """The published calls among the last turn's, carried into the next workflow
        run at continue-as-new (which comes right before a model call)."""
        return [i for i in _last_answers(self.last.messages if self.last else ())
                if i in self.published]

    def _live_fields(self, fields: dict[str, Any], request: ChatRequest | None) -> None:
        """Ask an activity for the run's live events: where its batches start, and for
        a model call, its step and the results the workflow answered itself since the
        last one (a rejected or unknown call), which that activity publishes first."""
        if self.live is None:
            return
        fields["live"] = self.live
        if request is None:
            return
        fields["step"] = (self.last.steps if self.last is not None else 0) + 1
        announce = [i for i in _last_answers(request.messages) if i not in self.published]
        if announce:
            fields["announce"] = announce

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
        steps = self.last.steps if self.last is not None else 0
        return await self._model(request, f"the input of model call {steps + 1}", live=True)

    async def call_beside(self, request: ChatRequest) -> LLMResult:
        """A model call the run makes beside its steps (a summary of its history): an
        activity like the run's own, publishing no live events (an in-process run
        streams none for it) and never continued as new."""
        return await self._model(request, f"the input of a call to model {request.model!r}",
                                 live=False)

    def _run_fields(self) -> dict[str, Any]:
        """What every activity of the run is told of it: the agent, the run, its scope,
        autonomy and spent budget (each only where it is not the default)."""
        ctx = self.ctx
        return call_fields(self.agent.name, ctx.correlation_id, ctx.correlation_id,
                           ctx.scope, ctx.autonomy.value, self.spent,
                           self.options.max_payload_bytes)

    async def _model(self, request: ChatRequest, what: str, *, live: bool) -> LLMResult:
        self.made += 1
        ctx = self.ctx
        options = self.options
        # Checked here, in workflow code: a command Temporal refuses fails the workflow
        # task, which is retried for ever; a run that stops answers.
        fields = self._run_fields()
        fields["request"] = request
        if live:
            self._live_fields(fields, request)
        payload = pack_bytes_within(fields, options.max_payload_bytes, ctx.correlation_id, what)
        text = await activity(MODEL_ACTIVITY, payload, options,
                              summary=f"model {request.model}")
        answer = unpack(text, "model answer")
        self._charge(answer)
        if "stop" in answer:
            raise error_from(answer["stop"])
        if "refused" in answer:
            # Too long for the model's window: the run may summarise and ask again.
            raise ProviderError(**answer["refused"], transient=False, kind="context_length")
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
        fields = job_fields(self.agent.name, replace(job, spent=self.spent),
                            options.max_payload_bytes, self.ctx.correlation_id)
        self._live_fields(fields, None)
        payload = pack_bytes_within(
            fields, options.max_payload_bytes, job.run_id,
            f"the input of tool call {call.id!r} ({call.name!r})",
        )
        try:
            text = await activity(TOOL_ACTIVITY, payload, options,
                                  summary=f"tool {call.name}", closes=closes,
                                  attempts=1 if once else None)
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
        _raise_broken(answer)
        if "checked" in answer:
            self.verdicts[call.id] = (answer.get("rewrite", _SAME), answer.get("trip"))
        if "live" in answer:
            self.published.add(call.id)
        if "stop" in answer:
            return Stopped(error_from(answer["stop"]))
        return outcome_from(answer)


    async def check_guardrails(self, check: GuardrailCheck) -> tuple[Any, GuardrailTrip | None]:
        """The guardrails' verdict on ``check``: a tool result's from the tool activity
        that answered it, else from a guardrail activity (the checks are user code)."""
        if check.at == "result" and check.call is not None and check.call.id in self.verdicts:
            rewrite, trip = self.verdicts.pop(check.call.id)
            return (check.value if rewrite is _SAME else rewrite), trip
        ctx = self.ctx
        options = self.options
        fields = self._run_fields()
        fields["check"] = check
        self._live_fields(fields, None)
        payload = pack_bytes_within(fields, options.max_payload_bytes, ctx.correlation_id,
                              f"the value the guardrails of the {check.where} check")
        text = await activity(GUARDRAIL_ACTIVITY, payload, options,
                              summary=f"guardrails {check.where}")
        answer = unpack(text, "guardrail verdict")
        self._charge(answer)
        _raise_broken(answer)
        if "stop" in answer:
            raise error_from(answer["stop"])
        return answer.get("value", check.value), answer.get("trip")


    async def recall(self, task: str) -> str:
        """What the agent's memory adds to the system prompt for ``task`` (the query is
        I/O: an activity). A refusal that would stop the run fails it, as it fails
        ``agent.run`` and ``agent.resume`` in-process."""
        ctx = self.ctx
        options = self.options
        fields = self._run_fields()
        fields["task"] = task
        payload = pack_bytes_within(fields, options.max_payload_bytes, ctx.correlation_id,
                              "the task its memory is queried with")
        text = await activity(RECALL_ACTIVITY, payload, options, summary="recall")
        answer = unpack(text, "recall")
        self._charge(answer)
        if "stop" in answer:
            _raise_broken({"broken": answer["stop"]})
        recalled: str = answer["recalled"]
        return recalled


def tools_of(agent: Agent) -> ToolRegistry:
    """The agent's tool registry (an empty one for a cognition without tools)."""
    from agentkit.tools.registry import ToolRegistry

    registry = getattr(agent.cognition, "tools", None)
    return registry if isinstance(registry, ToolRegistry) else ToolRegistry()


def _raise_broken(answer: Mapping[str, Any]) -> None:
    """A guardrail raised (user code): the run fails with its error, as ``agent.run``
    raises it in-process."""
    broken = answer.get("broken")
    if broken is not None:
        raise ApplicationError(f"{broken['type']}: {broken['message']}", type=broken["type"],
                               non_retryable=True)


def _last_answers(messages: Sequence[Message]) -> list[str]:
    """The call ids of the tool results after the last assistant message."""
    ids: list[str] = []
    for message in reversed(messages):
        if message.role == "assistant":
            break
        if message.role == "tool" and message.tool_call_id:
            ids.append(message.tool_call_id)
    return ids[::-1]


def _cause(error: BaseException) -> str:
    while error.__cause__ is not None:
        error = error.__cause__
    return str(error) or type(error).__name__

