"""Evals: datasets of cases, evaluators that understand agents, and reports to compare.

Standard library only; the ``yaml`` extra is needed only to read YAML datasets.
"""

from agentkit.evals.case import Case
from agentkit.evals.dataset import Dataset
from agentkit.evals.dataset_files import DatasetError
from agentkit.evals.effect_checks import NoDuplicateSideEffects, SideEffectsAtMost, Suspended
from agentkit.evals.judge import LLMJudge, Verdict
from agentkit.evals.limits import MaxCost, MaxLatency, MaxSteps, MaxTokens
from agentkit.evals.output_checks import Contains, Equals, IsInstance, Matches, MatchesSchema
from agentkit.evals.pytest_cases import pytest_cases
from agentkit.evals.report import EvalReport
from agentkit.evals.results import Aggregate, CaseResult, Change, Comparison
from agentkit.evals.running import EVAL_RUNS_LOG
from agentkit.evals.scores import EvalContext, Evaluator, Score
from agentkit.evals.tool_checks import MaxToolCalls, NoToolCall, ToolArguments, ToolTrajectory

__all__ = [
    "EVAL_RUNS_LOG",
    "Aggregate",
    "Case",
    "CaseResult",
    "Change",
    "Comparison",
    "Contains",
    "Dataset",
    "DatasetError",
    "Equals",
    "EvalContext",
    "EvalReport",
    "Evaluator",
    "IsInstance",
    "LLMJudge",
    "Matches",
    "MatchesSchema",
    "MaxCost",
    "MaxLatency",
    "MaxSteps",
    "MaxTokens",
    "MaxToolCalls",
    "NoDuplicateSideEffects",
    "NoToolCall",
    "Score",
    "SideEffectsAtMost",
    "Suspended",
    "ToolArguments",
    "ToolTrajectory",
    "Verdict",
    "pytest_cases",
]
