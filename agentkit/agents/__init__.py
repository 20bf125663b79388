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
from agentkit.core.contracts.errors import (
    CheckpointCorrupt,
    OutputCoercionError,
    RunNotResumable,
    RunTakenOver,
)

__all__ = [
    "Agent",
    "AgentEvent",
    "AgentResult",
    "Autonomy",
    "CheckpointCorrupt",
    "Cognition",
    "FinalEvent",
    "InterruptEvent",
    "OutputCoercionError",
    "RunNotResumable",
    "RunTakenOver",
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
