"""agentkit's runs as A2A tasks and its agents as A2A agent cards (A2A 1.0, ProtoJSON).

A task is a run: its id is the run id, its context id the run's session. Its state
follows the run's status; a suspended run is ``input-required``, with the pending calls
and an example reply in a data part of its status message (see
:mod:`agentkit.integrations.a2a.protocol`). The output is the artifact ``output``: text
as a text part, structured output as a data part.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from agentkit.agents.agent import Agent
from agentkit.agents.decisions import accepted_form
from agentkit.core.contracts.media import Media
from agentkit.core.contracts.runs import RunRecord
from agentkit.core.contracts.traits import traits_of
from agentkit.core.contracts.types import Message
from agentkit.integrations.a2a.protocol import (
    DECISIONS_KEY,
    PENDING_KEY,
    PROTOCOL_VERSION,
    example_decision,
    output_parts,
)
from agentkit.serve.wire import jsonable

__all__ = [
    "A2ASkill", "agent_card", "history_data", "output_artifact", "reply_hint", "state_of",
    "status_data", "task_data",
]

BEARER = "bearer"
"""The name of the card's security scheme: the server's bearer tokens."""


@dataclass(frozen=True, slots=True)
class A2ASkill:
    """One skill an agent card lists (instead of one per tool)."""

    id: str
    """A stable identifier."""
    name: str
    """What a person reads."""
    description: str
    """What the agent does with it."""
    tags: tuple[str, ...] = ()
    """Keywords."""
    examples: tuple[str, ...] = ()
    """Example requests."""

    def __post_init__(self) -> None:
        for field in ("id", "name", "description"):
            if not isinstance(getattr(self, field), str) or not getattr(self, field):
                raise ValueError(f"A2ASkill({field}=...) must be a non-empty string, got "
                                 f"{getattr(self, field)!r}")


def _tool_skills(agent: Agent) -> list[dict[str, Any]]:
    registry = getattr(agent.cognition, "tools", None)
    skills = []
    for tool in () if registry is None else registry:
        schema = tool.schema
        traits = traits_of(tool)
        tags = [t for t, on in (("side_effecting", traits.side_effecting),
                                ("requires_approval", traits.requires_approval),
                                ("asks_human", traits.asks_human)) if on]
        skills.append({"id": tool.name, "name": tool.name, "tags": ["tool", *tags],
                       "description": schema.description if schema is not None
                       else tool.description or tool.name})
    return skills


def agent_card(agent: Agent, url: str, *, bearer: bool,
               skills: Sequence[A2ASkill] | None = None) -> dict[str, Any]:
    """The agent card of ``agent`` served at ``url``: skills from ``skills`` or else its
    tools, streaming, and with ``bearer`` the bearer-token scheme every call needs. The
    0.3 connection fields (``url``, ``preferredTransport``) are there for 0.3 clients."""
    listed = _tool_skills(agent) if skills is None else [
        {"id": s.id, "name": s.name, "description": s.description, "tags": list(s.tags),
         "examples": list(s.examples)} for s in skills
    ]
    card: dict[str, Any] = {
        "name": agent.name,
        "description": agent.description or f"The agentkit agent {agent.name!r}: send it a "
                                            "task in plain text.",
        "version": "1.0.0",
        "supportedInterfaces": [{"url": url, "protocolBinding": "JSONRPC",
                                 "protocolVersion": PROTOCOL_VERSION}],
        "url": url, "preferredTransport": "JSONRPC",
        "capabilities": {"streaming": True, "pushNotifications": False},
        "defaultInputModes": ["text/plain", "application/json", "image/*", "audio/*",
                              "application/octet-stream"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": listed,
    }
    if bearer:
        card["securitySchemes"] = {BEARER: {"httpAuthSecurityScheme": {
            "scheme": "Bearer",
            "description": "A token the agentkit server was given (--token-env or --tokens)",
        }}}
        card["securityRequirements"] = [{"schemes": {BEARER: {"list": []}}}]
    return card


_STATES = {"running": "TASK_STATE_WORKING", "suspended": "TASK_STATE_INPUT_REQUIRED",
           "complete": "TASK_STATE_COMPLETED", "cancelled": "TASK_STATE_CANCELED"}


def state_of(status: str) -> str:
    """The task state of a run status (a run that stopped short of an answer failed)."""
    return _STATES.get(status, "TASK_STATE_FAILED")


def _timestamp(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z")


def reply_hint(record: RunRecord) -> str:
    """How to answer a waiting task, in a sentence naming its pending calls."""
    example = {DECISIONS_KEY: {c.call_id: example_decision(c.kind) for c in record.pending}}
    forms = "; ".join(f"{c.call_id} ({c.kind}): {accepted_form(c.kind)}"
                      for c in record.pending)
    return (f"task {record.run_id!r} waits for a person on {[c.call_id for c in record.pending]}: "
            f"send a message with taskId {record.run_id!r} and a data part "
            f"{json.dumps(example)}; accepted decisions: {forms}")


def _status_message(record: RunRecord) -> dict[str, Any] | None:
    parts: list[dict[str, Any]]
    if record.status == "suspended":
        pending = [{"call_id": c.call_id, "tool": c.tool, "arguments": jsonable(c.arguments),
                    "kind": c.kind, "accepted": accepted_form(c.kind),
                    "asked_by": list(c.agents)} for c in record.pending]
        parts = [{"text": reply_hint(record)}, {"data": {
            PENDING_KEY: pending,
            "reply": {DECISIONS_KEY: {c.call_id: example_decision(c.kind)
                                      for c in record.pending}},
        }}]
    elif record.status not in ("running", "complete"):
        why = record.error or f"the run stopped: {record.stop_reason or record.status}"
        parts = [{"text": why}]
    else:
        return None
    return {"messageId": f"{record.run_id}:status:{record.updated}", "role": "ROLE_AGENT",
            "taskId": record.run_id, "contextId": record.session or "", "parts": parts}


def status_data(record: RunRecord) -> dict[str, Any]:
    """The task status of a run."""
    status: dict[str, Any] = {"state": state_of(record.status),
                              "timestamp": _timestamp(record.updated)}
    message = _status_message(record)
    if message is not None:
        status["message"] = message
    return status


def output_artifact(record: RunRecord) -> dict[str, Any] | None:
    """The artifact of a completed run's output, or None."""
    if record.status != "complete" or record.output is None:
        return None
    return {"artifactId": "output", "name": "output",
            "parts": output_parts(jsonable(record.output))}


def task_data(record: RunRecord, history: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The run as an A2A Task."""
    artifact = output_artifact(record)
    return {"id": record.run_id, "contextId": record.session or "",
            "status": status_data(record),
            "artifacts": [] if artifact is None else [artifact],
            "history": list(history), "metadata": {"agent": record.agent}}


def _media_part(media: Media) -> dict[str, Any]:
    part: dict[str, Any] = {"mediaType": media.mime_type}
    if media.url is not None and not media.data:
        part["url"] = media.url
    else:
        part["raw"] = base64.b64encode(media.data).decode("ascii")
    name = getattr(media, "name", None)
    if name:
        part["filename"] = name
    return part


def _parts(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        parts: list[dict[str, Any]] = [{"data": {"tool_result": {
            "call_id": message.tool_call_id, "name": message.name,
            "content": message.content, "is_error": message.is_error}}}]
    else:
        parts = [{"text": message.content}] if message.content else []
    parts += [_media_part(media) for media in message.attachments]
    if message.tool_calls:
        parts.append({"data": {"tool_calls": [
            {"id": call.id, "name": call.name, "arguments": jsonable(call.arguments)}
            for call in message.tool_calls]}})
    return parts


def history_data(record: RunRecord, messages: Sequence[Message], first: int = 0,
                 limit: int | None = None) -> list[dict[str, Any]]:
    """The run's messages from index ``first`` (those before are the session's earlier
    turns) as A2A Messages, the last ``limit`` of them (all for None): the user's as
    ``ROLE_USER``; the model's answers, tool calls (a ``tool_calls`` data part) and the
    tools' results (a ``tool_result`` data part) as ``ROLE_AGENT``. A message's id is
    its place in the run, so it is the same on every read."""
    if limit == 0:
        return []
    shown = []
    for index in range(first, len(messages)):
        message = messages[index]
        parts = [] if message.role == "system" else _parts(message)
        if parts:
            shown.append({"messageId": f"{record.run_id}:history:{index - first}",
                          "role": "ROLE_USER" if message.role == "user" else "ROLE_AGENT",
                          "taskId": record.run_id, "contextId": record.session or "",
                          "parts": parts})
    return shown if limit is None else shown[-limit:]
