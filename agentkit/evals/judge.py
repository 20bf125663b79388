"""LLMJudge: a model grades the answer against a rubric, with a structured verdict.

The judge is itself an agent run (``Agent(output=Verdict)``), so its answer is parsed
and validated like any structured answer (one repair turn, then a failure), its calls
go through ``make_ctx``'s chat chain (retries for transient failures), and its usage is
its own: the Score carries ``cost_usd``, kept apart from the agent's cost.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from agentkit.agents.agent import Agent
from agentkit.core.assembly import make_ctx
from agentkit.core.contracts.ports import LLM
from agentkit.evals.scores import EvalContext, Score

__all__ = ["LLMJudge", "Verdict"]


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the judge answers."""

    passed: bool
    """Whether the answer meets the rubric."""
    score: float
    """How well, from 0.0 to 1.0."""
    reason: str
    """Why, in a sentence or two."""


_PROMPT = (
    "You grade the answer of an AI agent against a rubric. Read the rubric, the material "
    "you are given, and the answer, then reply with a verdict: passed (true when the "
    "answer meets the rubric), score (0.0 to 1.0) and reason (one or two sentences "
    "naming what decided it).\n\nRubric:\n"
)


class LLMJudge:
    """Grade the answer against ``rubric`` with ``model``: an agentkit provider (any
    ``LLM``, a ``FakeLLM`` in tests) or a model spec such as
    ``"anthropic:claude-sonnet-4-6"``. ``model_id`` names the model in the request when
    ``model`` is an LLM object. The task is shown to the judge unless
    ``include_input=False``; the tool calls too with ``include_trajectory=True``."""

    __slots__ = (
        "_agent", "include_input", "include_trajectory", "llm", "model_id", "name", "rubric",
    )

    def __init__(
        self,
        rubric: str,
        *,
        model: LLM | str,
        model_id: str = "judge",
        include_input: bool = True,
        include_trajectory: bool = False,
        name: str = "LLMJudge",
    ) -> None:
        if isinstance(model, str):
            # Imported here: a judge on a FakeLLM must not need a provider SDK.
            from agentkit.providers import llm_for, parse_model_spec

            model_id = parse_model_spec(model).model
            model = llm_for(model)
        self.llm: LLM = model
        """The judge's model."""
        self.model_id = model_id
        """The model id its requests name."""
        self._agent = Agent("judge", model_id, _PROMPT + rubric, output=Verdict)
        self.rubric = rubric
        self.include_input = include_input
        self.include_trajectory = include_trajectory
        self.name = name

    def _task(self, ctx: EvalContext) -> str:
        parts: list[str] = []
        if self.include_input:
            parts.append(f"Task given to the agent:\n{ctx.input}")
        if ctx.expected is not None:
            parts.append(f"Reference answer:\n{_text(ctx.expected)}")
        if self.include_trajectory:
            calls = [{"tool": c.name, "arguments": dict(c.arguments)} for c in ctx.trajectory]
            parts.append(f"Tool calls the agent made:\n{json.dumps(calls, default=str)}")
        parts.append(f"The agent's answer:\n{_text(ctx.output)}")
        return "\n\n".join(parts)

    async def __call__(self, ctx: EvalContext) -> Score:
        result = await self._agent.run(self._task(ctx), make_ctx(self.llm))
        cost = result.usage.cost_usd
        verdict = result.output
        if not isinstance(verdict, Verdict):
            error = result.evals.get("error")
            raise RuntimeError(
                f"the judge gave no verdict: it stopped with {result.stop_reason!r}"
                + (f" ({error})" if error is not None else "")
            )
        return Score(verdict.score, verdict.passed, verdict.reason, cost_usd=cost)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=repr)
