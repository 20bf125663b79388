"""agentkit eval: exit statuses, files for CI, baselines, and one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from agentkit.providers import parse_model_spec

TARGET = '''
import os

from agentkit.agents import Agent
from agentkit.core.testing import FakeLLM, make_test_ctx
from agentkit.evals import Case, Contains, Dataset

dataset = Dataset([Case("refund A-1", id="refund", expected="Refunded"),
                   Case("hello", id="greet", expected=os.environ.get("EXPECT_GREET", "Hi"))],
                  evaluators=[Contains()], name="support")
agent = Agent("support", "fake", "You help.")
not_a_dataset = 42


def ctx_factory():
    return make_test_ctx(llm=FakeLLM("Refunded. Hi!"))
'''


def _spec_error(spec: str) -> str:
    try:
        parse_model_spec(spec)
    except ValueError as exc:
        return str(exc)
    raise AssertionError(f"{spec!r} parsed")


def agentkit_eval(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "AGENTKIT_MODEL"}
    return subprocess.run(
        [sys.executable, "-m", "agentkit", "eval", *args], capture_output=True, text=True,
        cwd=cwd, timeout=60, check=False, env={**environment, **env},
    )


@pytest.fixture
def here(tmp_path: Path) -> Path:
    (tmp_path / "support_evals.py").write_text(TARGET)
    return tmp_path


def test_a_passing_eval_exits_0_and_writes_json_and_junit(here: Path) -> None:
    run = agentkit_eval(here, "support_evals:dataset", "--agent", "support_evals:agent",
                        "--repeat", "2", "--json", "out.json", "--junit", "out.xml")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == "eval 'support': 2 case(s) x 2 repeat(s)"
    assert "passed 4 of 4 (100%); agent cost $0.0000, judge cost $0.0000" in run.stdout
    assert [r["case_id"] for r in json.loads((here / "out.json").read_text())["results"]] == [
        "refund", "refund", "greet", "greet",
    ]
    assert ET.parse(here / "out.xml").getroot().get("failures") == "0"
    assert run.stderr.splitlines()[-1] == "eval support: 4/4 greet#2 pass"


def test_a_failing_case_exits_1(here: Path) -> None:
    run = agentkit_eval(here, "support_evals:dataset", "--agent", "support_evals:agent",
                        EXPECT_GREET="Bye")
    assert run.returncode == 1
    assert run.stdout.splitlines()[-1] == "  greet#1: Contains: 'Bye' not found in 'Refunded. Hi!'"


def test_a_regression_against_the_baseline_exits_1(here: Path) -> None:
    first = agentkit_eval(here, "support_evals:dataset", "--agent", "support_evals:agent",
                          "--json", "base.json")
    assert first.returncode == 0, first.stderr
    run = agentkit_eval(here, "support_evals:dataset", "--agent", "support_evals:agent",
                        "--baseline", "base.json", EXPECT_GREET="Bye")
    assert run.returncode == 1
    assert "regression: case 'greet': pass rate 100% -> 0%" in run.stdout.splitlines()
    assert "regression: evaluator 'Contains': pass rate 100% -> 50%" in run.stdout.splitlines()


@pytest.mark.parametrize(("args", "message"), [
    (["nowhere:dataset", "--agent", "support_evals:agent"],
     "no module named 'nowhere' (run from the directory that holds it, or pass the path to a "
     ".py file)"),
    (["support_evals:not_a_dataset", "--agent", "support_evals:agent"],
     "dataset 'support_evals:not_a_dataset' is int, not a Dataset"),
    (["support_evals", "--agent", "support_evals:agent"],
     "dataset 'support_evals' names a module; name the Dataset in it: support_evals:NAME"),
    (["support_evals:dataset", "--agent", "support_evals:dataset"],
     "--agent 'support_evals:dataset' is Dataset, not an Agent"),
    (["support_evals:dataset", "--agent", "support_evals:agent", "--baseline", "missing.json"],
     "--baseline: missing.json: cannot read an eval report: [Errno 2] No such file or "
     "directory: 'missing.json'"),
    # The spec parser's own message, whatever providers it knows: the command adds nothing.
    (["support_evals:dataset", "--agent", "support_evals:agent", "--model", "nope"],
     _spec_error("nope")),
])
def test_mistakes_are_one_line_and_exit_2(here: Path, args: list[str], message: str) -> None:
    run = agentkit_eval(here, *args)
    assert (run.returncode, run.stderr, run.stdout) == (2, f"agentkit: error: {message}\n", "")


def test_without_a_model_the_agents_module_must_make_contexts(here: Path) -> None:
    (here / "bare.py").write_text(
        "from agentkit.agents import Agent\nagent = Agent('bare', 'fake', 'p')\n"
    )
    run = agentkit_eval(here, "support_evals:dataset", "--agent", "bare:agent")
    assert (run.returncode, run.stderr) == (2, (
        "agentkit: error: no model to run 'bare' on: bare defines no ctx_factory() returning "
        "a RunContext; define one, or pass --model SPEC (or set $AGENTKIT_MODEL)\n"
    ))
