"""Values that cross the Temporal boundary, as agentkit's store JSON, so frozen types
round-trip exactly as they do through a checkpoint.

Activity inputs and results cross as that JSON's bytes (:func:`pack_bytes`), which
Temporal's default converter stores as they are (``binary/plain``); the workflow's
start, result, updates, queries and memo cross as the JSON text (:func:`pack`), which
it stores JSON-encoded again (``json/plain``). :func:`unpack` reads either, so histories
recorded when activity payloads were text replay unchanged."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentkit.agents.guarding import GuardrailCheck
from agentkit.agents.outcomes import Answered, ToolJob, ToolOutcome
from agentkit.agents.result import AgentResult
from agentkit.core.contracts.errors import InvalidDecision, RunError
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.types import ChatRequest, Scope, ToolCall
from agentkit.state.codec import dumps, loads, register

__all__ = [
    "DEFAULT_LIMIT",
    "DEFAULT_SCOPE",
    "PayloadTooLarge",
    "RemoteError",
    "RunOptions",
    "answer_fields",
    "call_context",
    "call_fields",
    "decision_fields",
    "invalid_decision",
    "job_fields",
    "job_from",
    "outcome_fields",
    "outcome_from",
    "pack",
    "pack_bytes",
    "pack_bytes_within",
    "pack_within",
    "result_from",
    "result_of",
    "result_to",
    "unpack",
]

register(ChatRequest, tag="agentkit.ChatRequest")
register(GuardrailCheck, tag="agentkit.temporal.GuardrailCheck")


@dataclass(frozen=True, slots=True)
class RunOptions:
    """How a run's activities are scheduled; chosen by the client that starts the run."""

    heartbeat_timeout: float = 30.0
    """Seconds without a heartbeat after which a model or tool call's worker is taken
    for dead (workers heartbeat every third of this)."""
    model_timeout: float = 600.0
    """Seconds one model call attempt may take."""
    tool_timeout: float = 3600.0
    """Seconds one tool call attempt may take (it heartbeats all along)."""
    max_attempts: int = 5
    """Attempts of a model call or a retryable tool call (one for side-effecting tools
    that are not idempotent)."""
    continue_as_new_after: int = 50
    """Model calls per workflow history; past it the run continues as new."""
    max_payload_bytes: int = 64 * 1024 * 1024
    """Largest value (in agentkit's store format) a run passes through Temporal: a
    model or tool call's input or answer, the run's start. Values past 128 KiB are
    stored by key in the workers' store; past this, the run refuses them."""
    live_events: bool = False
    """Have the run's activities publish its live events (steps, text and reasoning
    deltas, tool calls and results) to the workers' store as they happen, for a follower
    such as ``agentkit serve`` (whose runs set it); the model is then streamed. Off, a
    run pays nothing for it (:mod:`agentkit.integrations.temporal.live`)."""

    def __post_init__(self) -> None:
        for name in ("heartbeat_timeout", "model_timeout", "tool_timeout"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or value <= 0:
                raise ValueError(f"RunOptions.{name} must be a positive number of seconds, "
                                 f"got {value!r}")
        if not isinstance(self.live_events, bool):
            raise TypeError(f"RunOptions.live_events must be True or False, got "
                            f"{self.live_events!r}")
        for name in ("max_attempts", "continue_as_new_after", "max_payload_bytes"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"RunOptions.{name} must be an int of at least 1, got {value!r}")


register(RunOptions, tag="agentkit.temporal.RunOptions")


class RemoteError(RunError):
    """An error that stopped a run on Temporal, rebuilt on the client side: the
    original's type name and message, and the run's ``stop_reason``."""

    def __init__(self, type_name: str, message: str, stop_reason: str = "error") -> None:
        self.type_name = type_name
        self.message = message
        self.stop_reason = stop_reason
        super().__init__(f"{type_name}: {message}")


_RAISE_LIMIT = "(RunOptions.max_payload_bytes); shorten it, or raise the limit"


class PayloadTooLarge(RunError, ValueError):
    """A value a run would pass through Temporal is over
    :attr:`RunOptions.max_payload_bytes` (or, from a client without a store, over what
    stays inline); nothing was scheduled with it. ``what`` names the value, ``size`` and
    ``limit`` are bytes, ``advice`` ends the message."""

    def __init__(
        self, run_id: str, what: str, size: int, limit: int, advice: str = _RAISE_LIMIT
    ) -> None:
        self.run_id = run_id
        self.what = what
        self.size = size
        self.limit = limit
        self.advice = advice
        super().__init__(
            f"run {run_id!r}: {what} is {size:,} bytes, over the {limit:,}-byte limit on one "
            f"value passed through Temporal {advice}"
        )


def pack(value: Any) -> str:
    """``value`` as a payload string (the workflow's start and result, updates)."""
    return dumps(value)


def pack_within(value: Any, limit: int, run_id: str, what: str) -> str:
    """``value`` as a payload string of at most ``limit`` bytes, else
    :class:`PayloadTooLarge` (the store format is ASCII: a character is a byte)."""
    text = dumps(value)
    if len(text) > limit:
        raise PayloadTooLarge(run_id, what, len(text), limit)
    return text


def pack_bytes(value: Any) -> bytes:
    """``value`` as an activity's input or result: the store format's bytes (ASCII
    JSON), which Temporal keeps as they are rather than escaping them in a JSON string."""
    return dumps(value).encode("ascii")


def pack_bytes_within(value: Any, limit: int, run_id: str, what: str) -> bytes:
    """:func:`pack_bytes` of at most ``limit`` bytes, else :class:`PayloadTooLarge`."""
    return pack_within(value, limit, run_id, what).encode("ascii")


def unpack(data: str | bytes, what: str) -> Any:
    """A payload back to its value, whether it crossed as text (the workflow's start,
    and every activity payload of histories recorded before they crossed as bytes) or
    as bytes; ``what`` names it in a decoding error."""
    return loads(data, key=f"temporal:{what}")


def error_fields(error: BaseException) -> dict[str, str]:
    """An error as plain fields (exceptions are not storable values)."""
    if isinstance(error, RemoteError):
        return {"type": error.type_name, "message": error.message,
                "stop_reason": str(error.stop_reason)}
    return {
        "type": type(error).__name__,
        "message": str(error),
        "stop_reason": str(getattr(error, "stop_reason", "error")),
    }


def error_from(fields: Mapping[str, str]) -> RemoteError:
    """The :class:`RemoteError` for fields made by :func:`error_fields`."""
    return RemoteError(fields["type"], fields["message"], fields.get("stop_reason", "error"))


def result_to(result: AgentResult) -> str:
    """An :class:`AgentResult` as a payload (its ``evals["error"]`` as plain fields)."""
    evals = dict(result.evals)
    error = evals.pop("error", None)
    if isinstance(error, BaseException):
        evals["error"] = error_fields(error)
    return pack(_replace_evals(result, evals))


def result_from(text: str) -> AgentResult:
    """The :class:`AgentResult` a payload made by :func:`result_to` holds."""
    return result_of(unpack(text, "result"))


def result_of(result: Any) -> AgentResult:
    """The :class:`AgentResult` an unpacked :func:`result_to` payload holds."""
    if not isinstance(result, AgentResult):
        raise TypeError(f"expected an AgentResult payload, got a {type(result).__name__}")
    evals = dict(result.evals)
    error = evals.get("error")
    if isinstance(error, Mapping):
        evals["error"] = error_from(error)
        return _replace_evals(result, evals)
    return result


def _replace_evals(result: AgentResult, evals: dict[str, Any]) -> AgentResult:
    return dataclasses.replace(result, evals=FrozenDict(evals))


def decision_fields(error: InvalidDecision) -> dict[str, Any]:
    """An :class:`InvalidDecision` as plain fields, to cross to the client."""
    return {
        "run_id": error.run_id, "pending": error.pending, "unknown": list(error.unknown),
        "invalid": error.invalid, "accepted": error.accepted, "waits": error.waits,
        "workflow": error.workflow,
    }


def invalid_decision(fields: Mapping[str, Any]) -> InvalidDecision:
    """The :class:`InvalidDecision` for fields made by :func:`decision_fields`."""
    return InvalidDecision(
        fields["run_id"], pending=fields["pending"], unknown=fields["unknown"],
        invalid=fields["invalid"], accepted=fields["accepted"], waits=fields["waits"],
        workflow=fields["workflow"],
    )


DEFAULT_SCOPE = Scope(org_id=0, domain_id=0)
"""The scope of a run started without one."""
DEFAULT_LIMIT = RunOptions().max_payload_bytes
"""The limit for jobs that do not name theirs."""
_NOTHING_SPENT = (0, 0)


def call_fields(
    agent: str, run_id: str, workflow_id: str, scope: Scope, autonomy: str,
    spent: tuple[int, int], limit: int,
) -> dict[str, Any]:
    """What every model and tool activity of a run is told about the run, leaving out
    what the activity knows without being told (its workflow's id is the run's id) and
    what is at its default, so each call's input is the call, not the run's settings
    again: :func:`call_context` reads them back, defaults included (so the inputs of
    runs that sent every field read the same)."""
    fields: dict[str, Any] = {"agent": agent}
    if run_id != workflow_id:
        fields["run_id"] = run_id
    if scope != DEFAULT_SCOPE:
        fields["scope"] = scope
    if autonomy != "auto":
        fields["autonomy"] = autonomy
    if spent != _NOTHING_SPENT:
        fields["spent"] = spent
    if limit != DEFAULT_LIMIT:
        fields["limit"] = limit
    return fields


def call_context(
    fields: Mapping[str, Any], workflow_id: str
) -> tuple[str, Scope, str, tuple[int, int], int]:
    """The run id, scope, autonomy, budget ledger and payload limit that
    :func:`call_fields` describes."""
    calls, nanos = fields.get("spent", _NOTHING_SPENT)
    return (fields.get("run_id", workflow_id), fields.get("scope", DEFAULT_SCOPE),
            str(fields.get("autonomy", "auto")), (calls, nanos),
            fields.get("limit", DEFAULT_LIMIT))


def answer_fields(fields: dict[str, Any], spent: tuple[int, int]) -> dict[str, Any]:
    """An activity's answer with what it spent, unless nothing."""
    if spent != _NOTHING_SPENT:
        fields["spent"] = spent
    return fields


def job_fields(agent: str, job: ToolJob, limit: int, workflow_id: str) -> dict[str, Any]:
    """A tool job as the tool activity's input: the call, and the arguments to run it
    with only where a person edited them; what only a call that waited for a person
    needs is added when it is set."""
    fields = call_fields(agent, job.run_id, workflow_id, job.scope, str(job.autonomy),
                         job.spent, limit)
    fields["call"] = job.call
    if job.arguments != job.call.arguments:
        fields["arguments"] = job.arguments
    if job.answers:
        fields["answers"] = job.answers
    if job.wake is not None:
        fields["wake"] = job.wake
        fields["decisions"] = job.decisions
    if job.note:
        fields["note"] = job.note
    if job.timeout is not None:
        fields["timeout"] = job.timeout
    return fields


def job_from(fields: Mapping[str, Any], model: str, workflow_id: str) -> ToolJob:
    """The :class:`ToolJob` that :func:`job_fields` describes."""
    run_id, scope, autonomy, spent, _ = call_context(fields, workflow_id)
    call: ToolCall = fields["call"]
    return ToolJob(
        run_id, f"{run_id}:{fields['agent']}", scope, autonomy, call,
        fields.get("arguments", call.arguments), model,
        fields.get("answers", FrozenDict()), fields.get("wake"),
        fields.get("decisions", FrozenDict()), note=fields.get("note", ""),
        spent=spent, timeout=fields.get("timeout"),
    )


def outcome_fields(outcome: ToolOutcome) -> dict[str, Any]:
    """A tool outcome as the tool activity's answer: an answer's content, and its
    error flag and attachments when it has them."""
    if isinstance(outcome, Answered):
        fields: dict[str, Any] = {"content": outcome.content}
        if outcome.is_error:
            fields["is_error"] = True
        if outcome.attachments:
            fields["attachments"] = outcome.attachments
        return fields
    return {outcome.kind: outcome}


def outcome_from(fields: Mapping[str, Any]) -> ToolOutcome:
    """The outcome :func:`outcome_fields` describes."""
    for kind in ("asked", "parked", "unknown"):
        if kind in fields:
            outcome: ToolOutcome = fields[kind]
            return outcome
    return Answered(fields["content"], fields.get("is_error", False),
                    tuple(fields.get("attachments", ())))
