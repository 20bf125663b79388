"""``agentkit eval MODULE:DATASET --agent MODULE:AGENT``: run an eval from the command line.

The targets are loaded as ``agentkit tools inspect`` loads its target (one loader, the
same one-line errors, status 2). The model is ``--model SPEC``, else ``$AGENTKIT_MODEL``,
else the agent's own model with the contexts the agent's module makes (its
``ctx_factory``). Status 1 when a case fails, a regression against ``--baseline`` is
found, or the eval stopped early; 0 otherwise.
"""

from __future__ import annotations

import asyncio
import copy
import os
from collections.abc import Callable
from pathlib import Path

from agentkit.agents.agent import Agent
from agentkit.cli.errors import UsageError
from agentkit.cli.targets import load_target
from agentkit.core.assembly import make_ctx
from agentkit.core.runtime.context import RunContext
from agentkit.evals.dataset import Dataset
from agentkit.evals.report import EvalReport

__all__ = ["FAILED_STATUS", "eval_command"]

FAILED_STATUS = 1
"""Exit status when a case fails, a regression is found, or the eval stopped early."""


def _load(target: str, kind: type, what: str, flag: str) -> tuple[object, object]:
    module, value = load_target(target)
    if value is None:
        raise UsageError(f"{flag} {target!r} names a module; name the {what} in it: "
                         f"{target}:NAME")
    if not isinstance(value, kind):
        raise UsageError(f"{flag} {target!r} is {type(value).__name__}, not {_a(what)}")
    return module, value


def _a(noun: str) -> str:
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def _contexts(agent: Agent, module: object, model: str | None) -> tuple[Agent, Callable[[],
                                                                              RunContext]]:
    spec = model or os.environ.get("AGENTKIT_MODEL") or None
    if spec is not None:
        from agentkit.providers import llm_for, parse_model_spec

        try:
            model_id = parse_model_spec(spec).model
            llm = llm_for(spec)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        live = copy.copy(agent)
        live.model = model_id
        return live, lambda: make_ctx(llm)
    factory = getattr(module, "ctx_factory", None)
    if not callable(factory):
        name = getattr(module, "__name__", "the agent's module")
        raise UsageError(
            f"no model to run {agent.name!r} on: {name} defines no ctx_factory() returning a "
            "RunContext; define one, or pass --model SPEC (or set $AGENTKIT_MODEL)"
        )
    return agent, factory


def eval_command(
    target: str,
    *,
    agent: str,
    repeat: int = 1,
    json_path: str | None = None,
    junit_path: str | None = None,
    baseline: str | None = None,
    model: str | None = None,
) -> int:
    """Run the eval, print the report, write the files asked for; the exit status."""
    _, dataset = _load(target, Dataset, "Dataset", "dataset")
    agent_module, found_agent = _load(agent, Agent, "Agent", "--agent")
    assert isinstance(dataset, Dataset) and isinstance(found_agent, Agent)
    if repeat < 1:
        raise UsageError(f"--repeat is at least 1, got {repeat}")
    old = None
    if baseline is not None:
        try:
            old = EvalReport.from_json(baseline)
        except ValueError as exc:
            raise UsageError(f"--baseline: {exc}") from None
    runner, factory = _contexts(found_agent, agent_module, model)
    report = asyncio.run(dataset.evaluate(runner, factory, repeat=repeat))
    report.print()
    if json_path is not None:
        report.to_json(Path(json_path))
    if junit_path is not None:
        report.to_junit(Path(junit_path))
    regressed = False
    if old is not None:
        comparison = report.compare(old)
        for change in comparison.regressions:
            print(f"regression: {change}")
        for change in comparison.improvements:
            print(f"improvement: {change}")
        regressed = bool(comparison.regressions)
    return FAILED_STATUS if regressed or not report.passed else 0
