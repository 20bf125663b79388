"""Agents: the loop that calls tools, stops for a human, and resumes."""

from agentkit.agents.agent import Agent, Cognition
from agentkit.agents.autonomy import Autonomy, should_gate
from agentkit.agents.events import (
    AgentEvent,
    FinalEvent,
    InterruptEvent,
    StepEvent,
    TextDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from agentkit.agents.result import AgentResult, StopReason, Suspended
from agentkit.agents.skill import Skill
from agentkit.agents.workflow import Workflow, WorkflowError, WorkflowResult
from agentkit.core.contracts.errors import OutputCoercionError, RunNotResumable

__all__ = [
    "Agent",
    "AgentEvent",
    "AgentResult",
    "Autonomy",
    "Cognition",
    "FinalEvent",
    "InterruptEvent",
    "OutputCoercionError",
    "RunNotResumable",
    "Skill",
    "StepEvent",
    "StopReason",
    "Suspended",
    "TextDeltaEvent",
    "ToolCallEvent",
    "ToolResultEvent",
    "Workflow",
    "WorkflowError",
    "WorkflowResult",
    "should_gate",
]
