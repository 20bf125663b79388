"""pytest_cases: a dataset as parametrised pytest tests, one test per case."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentkit.agents.agent import Agent
    from agentkit.core.runtime.context import RunContext
    from agentkit.evals.dataset import Dataset

__all__ = ["pytest_cases"]


def pytest_cases(
    dataset: Dataset,
    agent: Agent,
    ctx_factory: Callable[[], RunContext],
    *,
    repeat: int = 1,
    timeout: float | None = None,
) -> Callable[..., None]:
    """A test function, parametrised over the dataset's case ids, that runs its case
    (``repeat`` times) and fails with every failing evaluator's reason. Assign it to a
    ``test_...`` name in a test module::

        test_support = pytest_cases(dataset, agent, ctx_factory)
    """
    try:
        import pytest
    except ImportError:
        raise ImportError("pytest_cases needs pytest: pip install pytest") from None

    ids = [str(case.id) for case in dataset.cases]

    @pytest.mark.parametrize("case_id", ids)
    def test_case(case_id: str) -> None:
        one = dataset.select([case_id])
        report = asyncio.run(
            one.evaluate(agent, ctx_factory, repeat=repeat, timeout=timeout, progress=False)
        )
        if not report.passed:
            lines = [f"{r.case_id}#{r.repeat + 1}: {reason}"
                     for r in report.failures() for reason in r.reasons()]
            if report.stopped is not None:
                lines.append(f"stopped early: {report.stopped}")
            pytest.fail("\n".join(lines) or f"case {case_id!r} failed", pytrace=False)

    test_case.__name__ = f"test_{dataset.name}"
    return test_case


