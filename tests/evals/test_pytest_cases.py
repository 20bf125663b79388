"""pytest_cases: one pytest test per case, failing with the evaluators' reasons."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

MODULE = '''
from agentkit.agents import Agent
from agentkit.core.testing import FakeLLM, make_test_ctx
from agentkit.evals import Case, Contains, Dataset, pytest_cases

dataset = Dataset([Case("refund A-1", id="refund", expected="Refunded"),
                   Case("hello", id="greet", expected="Hi")],
                  evaluators=[Contains()], name="support")
agent = Agent("support", "fake", "You help.")

test_support = pytest_cases(dataset, agent, lambda: make_test_ctx(llm=FakeLLM("Refunded.")))
'''


def test_each_case_is_a_test_that_fails_with_the_reasons(tmp_path: Path) -> None:
    (tmp_path / "test_support_evals.py").write_text(MODULE)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider",
         "-n", "0", "test_support_evals.py"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    failure = next(i for i, line in enumerate(lines) if line.strip("_ ") == "test_support[greet]")
    assert lines[failure + 1] == "greet#1: Contains: 'Hi' not found in 'Refunded.'"
    assert lines[-1].startswith("1 failed, 1 passed")
