"""Agents: the loop that calls tools, stops for a human, and resumes."""

from agentkit.agents.agent import Agent, Cognition
from agentkit.agents.autonomy import Autonomy, should_gate
from agentkit.agents.events import (
    AgentEvent,
    FinalEvent,
    GuardrailEvent,
    InterruptEvent,
    ReasoningDeltaEvent,
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
    InvalidDecision,
    OutputCoercionError,
    RunNotResumable,
    RunTakenOver,
    UnsupportedSetting,
)
from agentkit.core.contracts.state_errors import CheckpointCorrupt, SessionBusy
from agentkit.core.contracts.types import ModelSettings

__all__ = [
    "Agent",
    "AgentEvent",
    "AgentResult",
    "Autonomy",
    "CheckpointCorrupt",
    "Cognition",
    "FinalEvent",
    "GuardrailEvent",
    "HistoryPolicy",
    "InterruptEvent",
    "InvalidDecision",
    "ModelSettings",
    "OutputCoercionError",
    "ReasoningDeltaEvent",
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
