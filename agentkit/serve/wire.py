"""agentkit's values as the JSON the HTTP API sends: events, run records, waiting calls."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from agentkit.agents.events import (
    AgentEvent,
    GuardrailEvent,
    InterruptEvent,
    ReasoningDeltaEvent,
    StepEvent,
    TextDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from agentkit.core.contracts.runs import RecordedDecision, RunRecord, WaitingCall
from agentkit.core.contracts.types import ToolCall, Usage

__all__ = [
    "INBOX_KINDS", "event_data", "inbox_kind", "jsonable", "record_data", "usage_data",
    "waiting_data",
]

INBOX_KINDS = ("approval", "question", "outcome_unknown")
"""The kinds the approval inbox filters by (``?kind=``)."""

_INBOX_KIND = {"input": "question", "elicitation": "question",
               "unknown_outcome": "outcome_unknown"}


def inbox_kind(kind: str) -> str:
    """The inbox's kind of a pending call's kind: an ``ask_human`` question and a tool's
    question mid-call are both a ``question``."""
    return _INBOX_KIND.get(kind, kind)


def jsonable(value: Any) -> Any:
    """``value`` as JSON data: mappings, sequences and dataclasses taken apart; anything
    else that JSON has no form for, as its text."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    dump = getattr(value, "model_dump", None)  # a pydantic output type
    if callable(dump):
        return jsonable(dump(mode="json"))
    return str(value)


def usage_data(usage: Usage) -> dict[str, Any]:
    """Tokens and cost."""
    return {
        "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
        "cache_read_tokens": usage.cache_read_tokens,
        "cache_write_tokens": usage.cache_write_tokens, "cost_usd": usage.cost_usd,
    }


def _call(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "name": call.name, "arguments": jsonable(call.arguments)}


def event_data(event: AgentEvent) -> dict[str, Any]:
    """One typed event of a run as the data of a Server-Sent Event."""
    if isinstance(event, TextDeltaEvent | ReasoningDeltaEvent):
        return {"kind": event.kind, "text": event.text}
    if isinstance(event, ToolCallEvent):
        return {"kind": event.kind, "call": _call(event.call)}
    if isinstance(event, ToolResultEvent):
        return {"kind": event.kind, "call_id": event.call_id, "name": event.name,
                "content": event.content, "is_error": event.is_error}
    if isinstance(event, StepEvent):
        return {"kind": event.kind, "step": event.step, "usage": usage_data(event.usage)}
    if isinstance(event, InterruptEvent):
        suspended = event.suspended
        return {"kind": event.kind, "reason": suspended.reason,
                "pending": [_call(call) for call in suspended.pending],
                "kinds": dict(suspended.kinds), "asked_by": {
                    call_id: list(chain) for call_id, chain in suspended.agents.items()
                }}
    if isinstance(event, GuardrailEvent):
        trip = event.trip
        return {"kind": event.kind, "guardrail": trip.guardrail, "where": trip.where,
                "reason": trip.reason, "info": jsonable(trip.info)}
    result = event.result
    return {"kind": "final", "stop_reason": result.stop_reason,
            "output": jsonable(result.output), "usage": usage_data(result.usage),
            "steps": result.steps}


def waiting_data(record: RunRecord, call: WaitingCall) -> dict[str, Any]:
    """One entry of the approval inbox."""
    return {
        "run_id": record.run_id, "agent": record.agent, "call_id": call.call_id,
        "tool": call.tool, "arguments": jsonable(call.arguments),
        "kind": inbox_kind(call.kind), "waits_for": call.kind,
        "asked_by": list(call.agents), "since": call.since,
    }


def record_data(
    record: RunRecord, decisions: tuple[RecordedDecision, ...] | None = None
) -> dict[str, Any]:
    """A run as ``GET /v1/runs/{run_id}`` shows it (with who decided, when given)."""
    data: dict[str, Any] = {
        "run_id": record.run_id, "agent": record.agent, "status": record.status,
        "session": record.session, "scope": record.scope, "created": record.created,
        "updated": record.updated, "usage": usage_data(record.usage),
        "cost_usd": record.cost_usd, "output": jsonable(record.output),
        "stop_reason": record.stop_reason, "error": record.error,
        "pending": [waiting_data(record, call) for call in record.pending],
    }
    if decisions is not None:
        data["decisions"] = [
            {"call_id": d.call_id, "decision": jsonable(d.decision), "by": d.by, "at": d.at}
            for d in decisions
        ]
    return data
