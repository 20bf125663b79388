"""agentkit's own storable value types, by codec tag: where each one lives.

:mod:`agentkit.core.codec` registers one of these the first time it is written or read,
importing its module from this fixed table (never from the data), so the codec, which
lives in the core, imports no layer above it, and reading a checkpoint does not need the
agents layer imported beforehand.
"""

from __future__ import annotations

__all__ = ["AGENTKIT_TYPES"]

AGENTKIT_TYPES: dict[str, tuple[str, str]] = {
    "agentkit.Scope": ("agentkit.core.contracts.types", "Scope"),
    "agentkit.Usage": ("agentkit.core.contracts.types", "Usage"),
    "agentkit.ToolCall": ("agentkit.core.contracts.types", "ToolCall"),
    "agentkit.ToolSchema": ("agentkit.core.contracts.types", "ToolSchema"),
    "agentkit.Message": ("agentkit.core.contracts.types", "Message"),
    "agentkit.LLMResult": ("agentkit.core.contracts.types", "LLMResult"),
    "agentkit.ModelSettings": ("agentkit.core.contracts.settings", "ModelSettings"),
    "agentkit.Reasoning": ("agentkit.core.contracts.reasoning", "Reasoning"),
    "agentkit.ReasoningPart": ("agentkit.core.contracts.reasoning", "ReasoningPart"),
    "agentkit.RunRecord": ("agentkit.core.contracts.runs", "RunRecord"),
    "agentkit.WaitingCall": ("agentkit.core.contracts.runs", "WaitingCall"),
    "agentkit.RecordedDecision": ("agentkit.core.contracts.runs", "RecordedDecision"),
    "agentkit.RunTrace": ("agentkit.state.traces", "RunTrace"),
    "agentkit.TraceSpan": ("agentkit.state.traces", "TraceSpan"),
    "agentkit.Image": ("agentkit.core.contracts.media", "Image"),
    "agentkit.Audio": ("agentkit.core.contracts.media", "Audio"),
    "agentkit.File": ("agentkit.core.contracts.media", "File"),
    "agentkit.AuditRecord": ("agentkit.core.policies.audit", "AuditRecord"),
    "agentkit.DecisionRecord": ("agentkit.core.policies.audit", "DecisionRecord"),
    "agentkit.GuardrailTrip": ("agentkit.core.guardrails.running", "GuardrailTrip"),
    "agentkit.GuardrailRecord": ("agentkit.core.guardrails.tripped", "GuardrailRecord"),
    "agentkit.Suspended": ("agentkit.agents.result", "Suspended"),
    "agentkit.AgentResult": ("agentkit.agents.result", "AgentResult"),
    "agentkit.RunState": ("agentkit.agents.run_state", "RunState"),
    "agentkit.SubRun": ("agentkit.agents.run_state", "SubRun"),
    "agentkit.Intent": ("agentkit.agents.intents", "Intent"),
    "agentkit.SessionRecord": ("agentkit.state.sessions", "SessionRecord"),
    "agentkit.StoredMedia": ("agentkit.state.media_refs", "StoredMedia"),
    "agentkit.SessionSummary": ("agentkit.state.sessions", "SessionSummary"),
    "agentkit.WorkflowState": ("agentkit.agents.workflow_state", "_State"),
    "agentkit.WorkflowResult": ("agentkit.agents.workflow_state", "WorkflowResult"),
    "agentkit.Asked": ("agentkit.agents.outcomes", "Asked"),
    "agentkit.Parked": ("agentkit.agents.outcomes", "Parked"),
    "agentkit.Unknown": ("agentkit.agents.outcomes", "Unknown"),
}
"""Tag to (module, class name)."""
