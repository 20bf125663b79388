"""Decisions: what a person says about a run that waits, as values.

A run that waits lists its pending calls in a :class:`~agentkit.agents.result.Suspended`,
each with its kind (what it waits for). A resume hands over raw decisions by call id,
as a person or a face typed them (``"approve"``, ``{"answer": "..."}``, ...).
:func:`checked` validates all of them against the pending kinds before anything changes,
raising one :class:`~agentkit.core.contracts.errors.InvalidDecision` that names the
pending ids and the accepted forms, and routes path ids (``"c1/s3"``) to the call that
waits on the sub-run (``{"c1": {"s3": ...}}``). Once the run continues,
:func:`decision_for` turns a call's raw decision into one :data:`Decision` value the
loop acts on.

Every engine (``Agent.resume``, ``Workflow.resume``, the Temporal workflow's update)
and every face calls these functions, so a decision means the same and is refused with
the same text everywhere. Checkpoints keep the raw, checked form, which older
checkpoints also hold.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from agentkit.core.contracts.errors import InvalidDecision
from agentkit.core.contracts.frozen import FrozenDict, freeze

__all__ = [
    "AnswerText",
    "Approve",
    "Decision",
    "EditArguments",
    "ElicitationReply",
    "ForSubRun",
    "PendingKind",
    "Reject",
    "Undecided",
    "accepted_form",
    "answers_so_far",
    "checked",
    "decision_for",
    "decision_schema",
    "parse",
    "routed",
    "waiting_for",
]

PendingKind = Literal["approval", "input", "unknown_outcome", "elicitation", "nested", "gate"]
"""What a pending call waits for: ``approval`` of a gated call, ``input`` (an
``ask_human`` question), ``unknown_outcome`` (a call a crash interrupted that may have
acted), ``elicitation`` (a tool's question mid-call), ``nested`` (a sub-run that waits)
or ``gate`` (a workflow's human gate)."""


@dataclass(frozen=True, slots=True)
class Approve:
    """Run the call as the model asked (or, for an unknown outcome, run it again)."""

    kind: Literal["approve"] = "approve"


@dataclass(frozen=True, slots=True)
class Reject:
    """Do not run the call; the model is told."""

    kind: Literal["reject"] = "reject"


@dataclass(frozen=True, slots=True)
class EditArguments:
    """Run the call with a person's arguments instead of the model's."""

    arguments: Mapping[str, Any] = field(default_factory=FrozenDict)
    """The arguments to run with, validated like any model call."""
    kind: Literal["edit"] = "edit"


@dataclass(frozen=True, slots=True)
class AnswerText:
    """A person's answer to an ``ask_human`` question."""

    answer: str
    """The answer, which becomes the call's result."""
    kind: Literal["answer"] = "answer"


@dataclass(frozen=True, slots=True)
class ElicitationReply:
    """A person's reply to a tool's question mid-call; the call runs again with it."""

    reply: Mapping[str, Any]
    """``{"action": "accept", "content": {...}}``, ``{"action": "decline"}``,
    ``{"action": "cancel"}`` or ``{"answer": "..."}``, as the tool receives it."""
    kind: Literal["elicitation"] = "elicitation"


@dataclass(frozen=True, slots=True)
class ForSubRun:
    """Decisions for the calls a sub-run waits on, by their ids in that sub-run."""

    decisions: Mapping[str, Any]
    """Raw decisions, checked again by the sub-run against what it waits for."""
    kind: Literal["sub_run"] = "sub_run"


@dataclass(frozen=True, slots=True)
class Undecided:
    """No decision was given: a call is rejected, a sub-run stays suspended."""

    kind: Literal["undecided"] = "undecided"


Decision = Approve | Reject | EditArguments | AnswerText | ElicitationReply | ForSubRun | Undecided
"""A parsed decision for one pending call."""

_APPROVAL = "'approve', 'reject' or a dict of edited arguments"
_ELICITATION = (
    "{'action': 'accept', 'content': {...}}, {'action': 'decline'}, {'action': 'cancel'} "
    "or {'answer': '...'}"
)
_ACCEPTED: Mapping[str, str] = {
    "approval": _APPROVAL,
    "unknown_outcome": _APPROVAL,
    "input": "{'answer': '...'}",
    "elicitation": _ELICITATION,
    "gate": "'approve' or 'reject'",
}
_WAITS: Mapping[str, str] = {
    "approval": "waits for approval",
    "unknown_outcome": "may have acted before its worker stopped (its outcome is unknown)",
    "input": "asks the human a question",
    "elicitation": "waits for the answer to a tool's question",
    "gate": "is a human gate",
}
_APPROVE, _REJECT, _UNDECIDED = Approve(), Reject(), Undecided()
_VERDICT: Mapping[str, Any] = {"enum": ["approve", "reject"]}
_EDIT: Mapping[str, Any] = {"type": "object",
                            "description": "the arguments to run the call with instead"}
_ANSWER: Mapping[str, Any] = {"type": "object", "required": ["answer"],
                              "properties": {"answer": {"type": "string"}}}
_SCHEMAS: Mapping[str, Mapping[str, Any]] = {
    "approval": {"oneOf": [_VERDICT, _EDIT]},
    "unknown_outcome": {"oneOf": [_VERDICT, _EDIT]},
    "gate": _VERDICT,
    "input": _ANSWER,
    "elicitation": {"oneOf": [
        {"type": "object", "required": ["action"], "properties": {
            "action": {"const": "accept"}, "content": {"type": "object"}}},
        {"type": "object", "required": ["action"], "properties": {
            "action": {"enum": ["decline", "cancel"]}}},
        {**_ANSWER, "additionalProperties": False},  # a reply is the answer alone
    ]},
}


def accepted_form(kind: str) -> str:
    """The forms a decision for a call pending as ``kind`` may take, as the refusal of an
    invalid one words them (for a face that shows them before anyone decides)."""
    return _ACCEPTED.get(kind, "?")


def parse(kind: str, value: Any) -> Decision | None:
    """``value`` as a decision for a call pending as ``kind``; None when it is not one
    of the forms that kind accepts."""
    if kind in ("approval", "unknown_outcome", "gate"):
        if value == "approve":
            return _APPROVE
        if value == "reject":
            return _REJECT
        if kind != "gate" and isinstance(value, Mapping):
            return EditArguments(freeze(value))
        return None
    if kind == "input":
        if isinstance(value, Mapping) and isinstance(value.get("answer"), str):
            return AnswerText(value["answer"])
        return None
    if kind == "elicitation":
        return ElicitationReply(freeze(value)) if _is_reply(value) else None
    if kind == "nested":
        return ForSubRun(freeze(value)) if isinstance(value, Mapping) else None
    return None


def waiting_for(kind: str) -> str:
    """What a call pending as ``kind`` waits for, in the words the refusals use."""
    return _WAITS.get(kind, "waits")


def decision_schema(kind: str) -> dict[str, Any]:
    """A JSON Schema of the decisions a call pending as ``kind`` accepts (the forms
    :func:`parse` takes), for a face that builds a form or declares what it expects."""
    schema = _SCHEMAS.get(kind)
    if schema is None:
        raise ValueError(f"no decision form is known for pending kind {kind!r}; kinds: "
                         f"{sorted(_SCHEMAS)}")
    plain: dict[str, Any] = _plain(schema)
    return plain


def _plain(value: Any) -> Any:
    """A fresh, mutable copy, so no caller can change the shared schemas."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _is_reply(value: Any) -> bool:
    if not isinstance(value, Mapping):
        return False
    if "answer" in value:
        return isinstance(value["answer"], str) and len(value) == 1
    action = value.get("action")
    if action == "accept":
        return isinstance(value.get("content", {}), Mapping)
    return action in ("decline", "cancel")


def checked(
    run_id: str,
    pending: Mapping[str, str],
    decisions: Mapping[str, Any],
    *,
    workflow: str | None = None,
) -> FrozenDict[str, Any]:
    """``decisions`` checked against the ``pending`` kinds (by call id, path ids
    included), frozen; raises :class:`InvalidDecision` for an id that is not pending or
    a decision of a form its call does not accept, before anything changes.
    ``workflow`` names the workflow whose gates these are, for the message."""
    if not isinstance(decisions, Mapping):
        raise TypeError(
            f"run {run_id!r}: decisions must be a mapping of call id to decision, "
            f"got {type(decisions).__name__}"
        )
    unknown = [call_id for call_id in decisions if call_id not in pending]
    invalid = {
        call_id: value for call_id, value in decisions.items()
        if call_id in pending and parse(pending[call_id], value) is None
    }
    if unknown or invalid:
        raise InvalidDecision(
            run_id,
            pending=pending,
            unknown=unknown,
            invalid=invalid,
            accepted={c: _ACCEPTED.get(pending[c], "?") for c in invalid},
            waits={c: _WAITS.get(pending[c], "waits") for c in invalid},
            workflow=workflow,
        )
    return FrozenDict({k: freeze(v) for k, v in decisions.items()})


def routed(decisions: Mapping[str, Any], nested: Collection[str]) -> FrozenDict[str, Any]:
    """Checked decisions by call of this run: ``"c1/s3"``, where ``c1`` waits on a
    sub-run (one of ``nested``), becomes ``{"c1": {"s3": ...}}`` for that sub-run; any
    other call id keeps its decision."""
    own: dict[str, Any] = {}
    below: dict[str, dict[str, Any]] = {}
    for path, decision in decisions.items():
        head = next((h for h in nested if path.startswith(h + "/")), None)
        if head is None:
            own[path] = decision
        else:
            below.setdefault(head, {})[path[len(head) + 1:]] = decision
    own.update({head: FrozenDict(sub) for head, sub in below.items()})
    return FrozenDict(own)


def decision_for(kind: str | None, value: Any) -> Decision:
    """The decision a call pending as ``kind`` acts on, from its checked, routed
    ``value`` (None: no decision given)."""
    if value is None or kind is None:
        return _UNDECIDED
    parsed = parse(kind, value)
    return _UNDECIDED if parsed is None else parsed


def answers_so_far(question: Mapping[str, Any] | None, decision: Any) -> Mapping[str, Any]:
    """The answers a call that asked questions mid-call has so far: earlier ones, plus
    ``decision`` for the ``question`` it asked last."""
    if question is None:
        return FrozenDict()
    answers = dict(question.get("answers") or {})
    if decision is not None:
        answers[question["message"]] = decision
    return FrozenDict(answers)
