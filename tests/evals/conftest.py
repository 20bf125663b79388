"""Helpers for the evals tests: run one case through a real agent on a scripted model."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pytest

from agentkit.agents import Agent
from agentkit.core.contracts.ports import ToolMiddleware
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.evals import Case, CaseResult, Dataset, Evaluator

OneCase = Callable[..., Awaitable[CaseResult]]


@pytest.fixture
def one_case() -> OneCase:
    """``await one_case(case, evaluators, script=[Turn...], agent=..., tool_middleware=...)``:
    the case's only result."""

    async def run(
        case: Case,
        evaluators: Sequence[Evaluator],
        *,
        script: Sequence[Turn],
        agent: Agent | None = None,
        tool_middleware: Sequence[ToolMiddleware] = (),
        **options: Any,
    ) -> CaseResult:
        agent = agent or Agent("helper", "fake", "You help.")
        llm = FakeLLM.script(script)
        dataset = Dataset([case], evaluators=evaluators, name="unit")
        report = await dataset.evaluate(
            agent, lambda: make_test_ctx(llm=llm, tool_middleware=tool_middleware),
            progress=False, **options,
        )
        llm.assert_all_used()
        (result,) = report.results
        return result

    return run
