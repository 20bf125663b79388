"""Running an eval: every case × repeat through ``Agent.run``, then scored.

Each run gets a context from the caller's ``ctx_factory``, acting for a fresh run id
``eval-<eval id>-<case>-<repeat>`` (a multi-turn case's turns add ``.t1``, ``.t2``, ...,
played into the session of the case's run id), and the run is noted in the ``eval_runs``
log of that context's store, so an eval's runs can be listed like any other runs.
Nothing of the agent loop is repeated here: the results, audit records and usage are
what the engine recorded.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from agentkit.agents.result import AgentResult
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.types import ToolCall, Usage
from agentkit.core.policies.audit import AuditRecord, audit_log_of
from agentkit.core.policies.budget import Budget
from agentkit.core.policies.meter import metered
from agentkit.core.runtime.context import RunContext, new_run_id
from agentkit.evals.case import Case
from agentkit.evals.progress import Progress
from agentkit.evals.report import EvalReport
from agentkit.evals.results import CaseResult
from agentkit.evals.scores import EvalContext, Evaluator, Score, score

if TYPE_CHECKING:
    from agentkit.agents.agent import Agent

__all__ = ["EVAL_RUNS_LOG", "run_eval"]

EVAL_RUNS_LOG = "eval_runs"
"""The store log where each eval run is noted: ``{"eval", "eval_id", "case_id",
"repeat", "run_id", "turn_run_ids", "agent"}``."""

_COMPLETED = ("complete", "suspended")
"""Stop reasons of a run that can be scored: it answered, or it waits for a person."""


class _BudgetSpent(Exception):
    """The eval's budget stopped this run; it is not scored."""


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "x"


def _trajectory(result: AgentResult) -> tuple[ToolCall, ...]:
    """The calls of this run's own turn: the transcript after its last user message
    (a session run's transcript starts with the conversation before it)."""
    messages = result.messages
    start = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1) + 1
    return tuple(call for m in messages[start:] if m.role == "assistant" for call in m.tool_calls)


async def _audit_records(ctx: RunContext) -> tuple[AuditRecord, ...] | None:
    where = audit_log_of(ctx)
    if where is None:
        return None
    store, log = where
    return tuple(
        r for r in await store.list(log)
        if isinstance(r, AuditRecord) and r.run_id == ctx.correlation_id
    )


def _run_error(result: AgentResult) -> str | None:
    if result.stop_reason in _COMPLETED:
        return None
    error = result.evals.get("error")
    detail = f": {type(error).__name__}: {error}" if error is not None else ""
    return f"the run stopped with {result.stop_reason!r}{detail}"


class _Eval:
    """One call of :func:`run_eval`: the shared settings of every run."""

    def __init__(self, name: str, cases: Sequence[Case], evaluators: Sequence[Evaluator],
                 names: Sequence[str], agent: Agent, factory: Callable[[], RunContext],
                 timeout: float | None, budget: Budget | None) -> None:
        self.name = name
        self.evaluators = tuple(evaluators)
        self.agent = agent
        self.factory = factory
        self.timeout = timeout
        self.budget = budget
        self.names = tuple(names)
        self.eval_id = f"{_slug(name)}-{new_run_id()[:8]}"
        # Two case ids may slug alike ("a b", "a-b"); their runs must not share an id,
        # or their checkpoints and audit records would mix.
        self.slugs: dict[int, str] = {}
        taken: set[str] = set()
        for index, case in enumerate(cases, 1):
            slug = _slug(str(case.id))
            if slug in taken:
                slug = f"{slug}~{index}"
            taken.add(slug)
            self.slugs[id(case)] = slug
        self.stopped: str | None = None
        self.refused: Exception | None = None

    def _context(self) -> RunContext:
        ctx = self.factory()
        if not isinstance(ctx, RunContext):
            raise TypeError(
                f"ctx_factory must return a RunContext (from make_ctx or make_test_ctx), got "
                f"{ctx!r}"
            )
        if self.budget is not None and not metered(ctx):
            raise ValueError(
                "evaluate(budget=...) is enforced by meter() on the model calls, and the "
                "contexts ctx_factory returns have none in their chat chain; build them with "
                "make_ctx (its default chains meter) or pass chat_middleware=[meter()]"
            )
        return ctx

    def _exhausted(self) -> str | None:
        budget = self.budget
        if budget is None:
            return None
        if budget.max_calls is not None and budget.calls >= budget.max_calls:
            return f"the eval's budget of {budget.max_calls} calls is spent"
        remaining = budget.remaining_usd
        if remaining is not None and remaining <= 0:
            return f"the eval's budget of ${budget.max_cost_usd} is spent"
        return None

    async def run(self, case: Case, repeat: int) -> CaseResult | None:
        """Run and score one case once; None when the eval stopped before or during it."""
        self.stopped = self.stopped or self._exhausted()
        if self.stopped is not None or self.refused is not None:
            return None
        try:
            base = self._context()
        except (TypeError, ValueError) as exc:
            self.refused = exc
            return None
        run_id = f"eval-{self.eval_id}-{self.slugs[id(case)]}-{repeat + 1}"
        multi = case.turns is not None
        turn_ids = [f"{run_id}.t{t + 1}" for t in range(len(case.inputs))] if multi else [run_id]
        started = time.perf_counter()
        played: list[tuple[RunContext, AgentResult, float]] = []
        try:
            await base.store.append(EVAL_RUNS_LOG, {
                "eval": self.name, "eval_id": self.eval_id, "case_id": case.id,
                "repeat": repeat, "run_id": run_id, "turn_run_ids": turn_ids,
                "agent": self.agent.name,
            })
            async with asyncio.timeout(self.timeout):
                for turn, task in enumerate(case.inputs):
                    ctx = base.for_run(turn_ids[turn])
                    if self.budget is not None:
                        ctx.budget = self.budget
                    t0 = time.perf_counter()
                    result = await self.agent.run(task, ctx, session=run_id if multi else None)
                    played.append((ctx, result, time.perf_counter() - t0))
                    if result.stop_reason == "budget_exceeded" and self.budget is not None:
                        raise _BudgetSpent(str(result.evals.get("error")))
                    if result.stop_reason != "complete":
                        break  # a later turn cannot follow a turn that did not answer
        except _BudgetSpent as spent:
            self.stopped = self.stopped or f"the eval's budget ran out: {spent}"
            return None
        except TimeoutError:
            return self._unscored(case, repeat, run_id, played, started, "timeout",
                                  f"timed out after {self.timeout}s")
        except Exception as exc:
            return self._unscored(case, repeat, run_id, played, started, "crashed",
                                  f"the run raised {type(exc).__name__}: {exc}")
        return await self._scored(case, repeat, run_id, played, time.perf_counter() - started)

    def _unscored(self, case: Case, repeat: int, run_id: str,
                  played: Sequence[tuple[RunContext, AgentResult, float]], started: float,
                  stop_reason: str, error: str) -> CaseResult:
        usage = sum((r.usage for _, r, _ in played), Usage())
        return CaseResult(
            case_id=str(case.id), repeat=repeat, output=None,
            trajectory=tuple(c for _, r, _ in played for c in _trajectory(r)),
            scores=FrozenDict(), usage=usage, cost_usd=usage.cost_usd,
            latency_s=time.perf_counter() - started, run_id=run_id, passed=False,
            stop_reason=stop_reason, error=error,
        )

    async def _scored(self, case: Case, repeat: int, run_id: str,
                      played: Sequence[tuple[RunContext, AgentResult, float]],
                      latency: float) -> CaseResult:
        scores: dict[str, Score] = {}
        multi = case.turns is not None
        for turn, task in enumerate(case.inputs):
            prefix = f"turn{turn + 1}:" if multi else ""
            if turn >= len(played):
                ended = played[-1][1].stop_reason
                for name in self.names:
                    scores[prefix + name] = Score(
                        None, False, f"turn not played: turn {len(played)} stopped with {ended!r}"
                    )
                continue
            ctx, result, turn_latency = played[turn]
            view = EvalContext(
                case=case, input=task, expected=case.expected_for(turn), output=result.output,
                result=result, trajectory=_trajectory(result),
                audit=await _audit_records(ctx), latency_s=turn_latency, turn=turn,
            )
            for name, evaluator in zip(self.names, self.evaluators, strict=True):
                scores[prefix + name] = await score(evaluator, view)
        last = played[-1][1]
        usage = sum((r.usage for _, r, _ in played), Usage())
        error = _run_error(last)
        passed = error is None and all(s.passed for s in scores.values())
        return CaseResult(
            case_id=str(case.id), repeat=repeat, output=last.output,
            trajectory=tuple(c for _, r, _ in played for c in _trajectory(r)),
            scores=FrozenDict(scores), usage=usage, cost_usd=usage.cost_usd,
            latency_s=latency, run_id=run_id, passed=passed, stop_reason=last.stop_reason,
            error=error, judge_cost_usd=sum(s.cost_usd for s in scores.values()),
        )


def _checked(repeat: int, max_concurrency: int, timeout: float | None, budget: Any) -> None:
    if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
        raise ValueError(f"repeat= is a whole number of runs per case, at least 1; got {repeat!r}")
    if isinstance(max_concurrency, bool) or not isinstance(max_concurrency, int) or (
        max_concurrency < 1
    ):
        raise ValueError(f"max_concurrency= is at least 1, got {max_concurrency!r}")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, int | float)
                                or timeout <= 0):
        raise ValueError(f"timeout= is a number of seconds above 0 or None, got {timeout!r}")
    if budget is not None and not isinstance(budget, Budget):
        raise TypeError(f"budget= takes an agentkit.core.policies.Budget, got {budget!r}")


async def run_eval(
    name: str,
    cases: Sequence[Case],
    evaluators: Sequence[Evaluator],
    agent: Agent,
    ctx_factory: Callable[[], RunContext],
    *,
    names: Sequence[str],
    repeat: int = 1,
    max_concurrency: int = 8,
    timeout: float | None = None,
    budget: Budget | None = None,
    progress: bool = True,
) -> EvalReport:
    """Run ``cases`` and score them with ``evaluators`` (filed under ``names``): what
    ``Dataset.evaluate`` does."""
    _checked(repeat, max_concurrency, timeout, budget)
    state = _Eval(name, cases, evaluators, names, agent, ctx_factory, timeout, budget)
    jobs = [(case, r) for case in cases for r in range(repeat)]
    found: list[CaseResult | None] = [None] * len(jobs)
    gate = asyncio.Semaphore(max_concurrency)
    shown = Progress(name, len(jobs), enabled=progress)
    started = datetime.now(UTC).isoformat(timespec="seconds")

    async def one(index: int, case: Case, r: int) -> None:
        async with gate:
            result = await state.run(case, r)
        if result is not None:
            found[index] = result
            shown.finished(result)

    try:
        async with asyncio.TaskGroup() as group:
            for index, (case, r) in enumerate(jobs):
                group.create_task(one(index, case, r))
    finally:
        shown.close()
    if state.refused is not None:
        raise state.refused
    unfinished = tuple(
        f"{case.id}#{r + 1}" for (case, r), got in zip(jobs, found, strict=True) if got is None
    )
    return EvalReport(
        name=name, eval_id=state.eval_id,
        results=tuple(r for r in found if r is not None), evaluators=state.names,
        repeat=repeat, stopped=state.stopped if unfinished else None, unfinished=unfinished,
        metadata=FrozenDict({"agent": agent.name, "model": agent.model, "started": started}),
    )
