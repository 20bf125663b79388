"""Values that cross the Temporal boundary, as agentkit's store JSON (explicit str
payloads), so frozen types round-trip exactly as they do through a checkpoint."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentkit.agents.outcomes import Answered, ToolJob, ToolOutcome
from agentkit.agents.result import AgentResult
from agentkit.core.contracts.errors import InvalidDecision, RunError
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.types import ChatRequest
from agentkit.state.codec import dumps, loads, register

__all__ = [
    "PayloadTooLarge",
    "RemoteError",
    "RunOptions",
    "decision_fields",
    "invalid_decision",
    "job_fields",
    "job_from",
    "outcome_fields",
    "outcome_from",
    "pack",
    "pack_within",
    "result_from",
    "result_to",
    "unpack",
]

register(ChatRequest, tag="agentkit.ChatRequest")


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

    def __post_init__(self) -> None:
        for name in ("heartbeat_timeout", "model_timeout", "tool_timeout"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or value <= 0:
                raise ValueError(f"RunOptions.{name} must be a positive number of seconds, "
                                 f"got {value!r}")
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
    """``value`` as a payload string."""
    return dumps(value)


def pack_within(value: Any, limit: int, run_id: str, what: str) -> str:
    """``value`` as a payload string of at most ``limit`` bytes, else
    :class:`PayloadTooLarge` (the store format is ASCII: a character is a byte)."""
    text = dumps(value)
    if len(text) > limit:
        raise PayloadTooLarge(run_id, what, len(text), limit)
    return text


def unpack(text: str, what: str) -> Any:
    """A payload string back to its value; ``what`` names it in a decoding error."""
    return loads(text, key=f"temporal:{what}")


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
    result = unpack(text, "result")
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


def job_fields(agent: str, job: ToolJob, limit: int) -> dict[str, Any]:
    """A tool job as the tool activity's input. The fields a plain call needs are the
    ones runs have always sent (recorded histories replay); what only a call that
    waited for a person needs is added when it is set."""
    fields: dict[str, Any] = {
        "agent": agent, "run_id": job.run_id, "scope": job.scope,
        "autonomy": str(job.autonomy),
        "call": job.call, "arguments": job.arguments, "spent": job.spent, "limit": limit,
    }
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


def job_from(fields: Mapping[str, Any], model: str) -> ToolJob:
    """The :class:`ToolJob` that :func:`job_fields` describes."""
    calls, nanos = fields.get("spent", (0, 0))
    return ToolJob(
        fields["run_id"], f"{fields['run_id']}:{fields['agent']}", fields["scope"],
        fields["autonomy"], fields["call"], fields["arguments"], model,
        fields.get("answers", FrozenDict()), fields.get("wake"),
        fields.get("decisions", FrozenDict()), note=fields.get("note", ""),
        spent=(calls, nanos), timeout=fields.get("timeout"),
    )


def outcome_fields(outcome: ToolOutcome) -> dict[str, Any]:
    """A tool outcome as the tool activity's answer (an answer as runs always sent it)."""
    if isinstance(outcome, Answered):
        return {"content": outcome.content, "is_error": outcome.is_error,
                "attachments": outcome.attachments}
    return {outcome.kind: outcome}


def outcome_from(fields: Mapping[str, Any]) -> ToolOutcome:
    """The outcome :func:`outcome_fields` describes."""
    for kind in ("asked", "parked", "unknown"):
        if kind in fields:
            outcome: ToolOutcome = fields[kind]
            return outcome
    return Answered(fields["content"], fields["is_error"], tuple(fields.get("attachments", ())))
