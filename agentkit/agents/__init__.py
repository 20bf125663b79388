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
from agentkit.agents.history import HistoryPolicy, estimate_tokens
from agentkit.agents.result import AgentResult, StopReason, Suspended
from agentkit.agents.skill import Skill
from agentkit.agents.summarize import Summarize
from agentkit.agents.workflow import Workflow, WorkflowError, WorkflowResult
from agentkit.core.contracts.errors import (
    CheckpointCorrupt,
    InvalidDecision,
    OutputCoercionError,
    RunNotResumable,
    RunTakenOver,
    SessionBusy,
    UnsupportedSetting,
)
from agentkit.core.contracts.types import ModelSettings

__all__ = [
    "Agent",
    "AgentEvent",
    "AgentResult",
    "Autonomy",
    "CheckpointCorrupt",
    "Cognition",
    "FinalEvent",
    "HistoryPolicy",
    "InterruptEvent",
    "InvalidDecision",
    "ModelSettings",
    "OutputCoercionError",
    "RunNotResumable",
    "RunTakenOver",
    "SessionBusy",
    "Skill",
    "StepEvent",
    "StopReason",
    "Summarize",
    "Suspended",
    "TextDeltaEvent",
    "ToolCallEvent",
    "ToolResultEvent",
    "UnsupportedSetting",
    "Workflow",
    "WorkflowError",
    "WorkflowResult",
    "estimate_tokens",
    "should_gate",
]
