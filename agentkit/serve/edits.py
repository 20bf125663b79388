"""Edited arguments checked against the tool's schema before a run resumes.

A person who edits a waiting call's arguments (the decision is a dict of them) may type
a value the tool cannot take. The run would then resume, the call would fail its
argument check and the decision would be spent on an error. The server checks edits
first instead, against the JSON Schema the model sees for that tool, and refuses them
(422) with every problem named while the run still waits and nothing has run.

The tool is looked up in the agent that asked (the last of the call's agent chain),
among the served agents and the agents they delegate to through ``as_tool``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from agentkit.agents.agent import Agent
from agentkit.agents.decisions import EditArguments, parse
from agentkit.core.contracts.runs import RunRecord, WaitingCall
from agentkit.tools.declarations.jsonschema import schema_errors

__all__ = ["edit_problems", "tool_of"]


def _agents(served: Mapping[str, Agent]) -> Iterator[Agent]:
    seen: set[int] = set()
    todo = list(served.values())
    while todo:
        agent = todo.pop()
        if id(agent) in seen:
            continue
        seen.add(id(agent))
        yield agent
        for tool in getattr(getattr(agent, "cognition", None), "tools", None) or ():
            below = getattr(tool, "delegate", None)
            if isinstance(below, Agent):
                todo.append(below)


def tool_of(served: Mapping[str, Agent], call: WaitingCall) -> Any | None:
    """The tool ``call`` would run, or None when no served agent holds it."""
    owner = call.agents[-1] if call.agents else None
    for agent in _agents(served):
        if owner is not None and agent.name != owner:
            continue
        registry = getattr(agent.cognition, "tools", None)
        for tool in registry or ():
            if tool.name == call.tool:
                return tool
    return None


def edit_problems(
    served: Mapping[str, Agent], record: RunRecord, decisions: Mapping[str, Any]
) -> dict[str, list[str]]:
    """Per edited call id, how its arguments fail the tool's schema (none: it fits)."""
    problems: dict[str, list[str]] = {}
    for call in record.pending:
        value = decisions.get(call.call_id)
        if value is None or not isinstance(parse(call.kind, value), EditArguments):
            continue
        tool = tool_of(served, call)
        schema = getattr(tool, "schema", None)
        if schema is None:
            continue  # a tool without a schema is checked when it runs, as any call
        found = schema_errors(dict(value), schema.parameters)
        if found:
            problems[call.call_id] = found
    return problems
