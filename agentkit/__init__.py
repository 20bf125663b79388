"""agentkit: a framework for AI agents whose tools say exactly what they do.

The everyday names are importable from here (``from agentkit import Agent, tool``), and
each is loaded on first use, so ``import agentkit`` itself stays cheap. They live in
(and are documented with) their subpackages: ``agentkit.agents``, ``agentkit.tools``,
``agentkit.core``.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# Each public name and the module that defines it; resolved on first access.
_HOMES = {
    "Agent": "agentkit.agents.agent",
    "AgentResult": "agentkit.agents.result",
    "AgentkitError": "agentkit.core.contracts.errors",
    "BudgetExceeded": "agentkit.core.contracts.errors",
    "CheckpointCorrupt": "agentkit.core.contracts.state_errors",
    "DepthLimitExceeded": "agentkit.core.contracts.errors",
    "EgressRefused": "agentkit.core.contracts.errors",
    "FakeLLM": "agentkit.core.testing.fake_llm",
    "HumanInputRequired": "agentkit.core.contracts.errors",
    "InvalidDecision": "agentkit.core.contracts.errors",
    "ModelCallError": "agentkit.core.contracts.errors",
    "NotStorable": "agentkit.core.contracts.state_errors",
    "OutputCoercionError": "agentkit.core.contracts.errors",
    "ProviderError": "agentkit.core.contracts.errors",
    "ReActCognition": "agentkit.agents.cognition.react",
    "Reasoning": "agentkit.core.contracts.reasoning",
    "RunCancelled": "agentkit.core.contracts.errors",
    "RunError": "agentkit.core.contracts.errors",
    "RunNotResumable": "agentkit.core.contracts.errors",
    "RunTakenOver": "agentkit.core.contracts.errors",
    "SessionBusy": "agentkit.core.contracts.state_errors",
    "SingleFlightLost": "agentkit.core.contracts.state_errors",
    "SingleFlightTimeout": "agentkit.core.contracts.state_errors",
    "Suspended": "agentkit.agents.result",
    "ToolArgumentError": "agentkit.core.contracts.errors",
    "ToolCall": "agentkit.core.contracts.types",
    "ToolDefinitionError": "agentkit.core.contracts.errors",
    "ToolNotFoundError": "agentkit.core.contracts.errors",
    "ToolShapeError": "agentkit.core.contracts.errors",
    "ToolTimeout": "agentkit.core.contracts.errors",
    "Turn": "agentkit.core.testing.fake_llm",
    "UnpricedModel": "agentkit.core.contracts.errors",
    "UnservedModel": "agentkit.core.contracts.errors",
    "UnsupportedMedia": "agentkit.core.contracts.errors",
    "UnsupportedSchema": "agentkit.core.contracts.errors",
    "UnsupportedSetting": "agentkit.core.contracts.errors",
    "VersionConflict": "agentkit.core.contracts.state_errors",
    "WaitsForPerson": "agentkit.core.contracts.errors",
    "make_ctx": "agentkit.core.assembly",
    "make_test_ctx": "agentkit.core.testing.context",
    "tool": "agentkit.tools.function_tool",
}

# Literal, so type checkers see the re-exports.
__all__ = [
    "Agent",
    "AgentResult",
    "AgentkitError",
    "BudgetExceeded",
    "CheckpointCorrupt",
    "DepthLimitExceeded",
    "EgressRefused",
    "FakeLLM",
    "HumanInputRequired",
    "InvalidDecision",
    "ModelCallError",
    "NotStorable",
    "OutputCoercionError",
    "ProviderError",
    "ReActCognition",
    "Reasoning",
    "RunCancelled",
    "RunError",
    "RunNotResumable",
    "RunTakenOver",
    "SessionBusy",
    "SingleFlightLost",
    "SingleFlightTimeout",
    "Suspended",
    "ToolArgumentError",
    "ToolCall",
    "ToolDefinitionError",
    "ToolNotFoundError",
    "ToolShapeError",
    "ToolTimeout",
    "Turn",
    "UnpricedModel",
    "UnservedModel",
    "UnsupportedMedia",
    "UnsupportedSchema",
    "UnsupportedSetting",
    "VersionConflict",
    "WaitsForPerson",
    "__version__",
    "make_ctx",
    "make_test_ctx",
    "tool",
]

if TYPE_CHECKING:
    from agentkit.agents.agent import Agent
    from agentkit.agents.cognition.react import ReActCognition
    from agentkit.agents.result import AgentResult, Suspended
    from agentkit.core.assembly import make_ctx
    from agentkit.core.contracts.errors import (
        AgentkitError,
        BudgetExceeded,
        DepthLimitExceeded,
        EgressRefused,
        HumanInputRequired,
        InvalidDecision,
        ModelCallError,
        OutputCoercionError,
        ProviderError,
        RunCancelled,
        RunError,
        RunNotResumable,
        RunTakenOver,
        ToolArgumentError,
        ToolDefinitionError,
        ToolNotFoundError,
        ToolShapeError,
        ToolTimeout,
        UnpricedModel,
        UnservedModel,
        UnsupportedMedia,
        UnsupportedSchema,
        UnsupportedSetting,
        WaitsForPerson,
    )
    from agentkit.core.contracts.reasoning import Reasoning
    from agentkit.core.contracts.state_errors import (
        CheckpointCorrupt,
        NotStorable,
        SessionBusy,
        SingleFlightLost,
        SingleFlightTimeout,
        VersionConflict,
    )
    from agentkit.core.contracts.types import ToolCall
    from agentkit.core.testing.context import make_test_ctx
    from agentkit.core.testing.fake_llm import FakeLLM, Turn
    from agentkit.tools.function_tool import tool


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'agentkit' has no attribute {name!r}")
    value = getattr(import_module(home), name)
    globals()[name] = value  # the next access is a plain module attribute
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})
