"""RunContext: nested runs, observations, cancellation and the autonomy tier."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import pytest

from agentkit.core.contracts.errors import DepthLimitExceeded, RunCancelled
from agentkit.core.contracts.types import Autonomy, Scope
from agentkit.core.policies import Budget
from agentkit.core.runtime import CancelToken, Invoker, RunContext, reporting_to
from agentkit.core.testing import FakeLLM, RecordingTracer, make_test_ctx
from agentkit.state.stores.memory import InMemoryStore


def test_child_is_one_level_deeper_and_shares_the_run() -> None:
    budget = object()
    parent = make_test_ctx(scope=Scope(org_id=7, domain_id=1), budget=budget, autonomy="gated")
    child = parent.child()

    assert child is not parent
    assert (parent.depth, child.depth) == (0, 1)
    assert child.correlation_id == parent.correlation_id
    assert child.run_id == parent.correlation_id
    assert child.budget is budget
    assert child.cancel is parent.cancel
    assert child.scope == Scope(org_id=7, domain_id=1)
    assert child.autonomy is Autonomy.GATED
    assert child.store is parent.store
    assert child.invoker is parent.invoker
    assert child.llm is parent.llm
    assert child.child().depth == 2


def test_child_refuses_to_go_past_max_depth() -> None:
    ctx = make_test_ctx(max_depth=2)
    deepest = ctx.child().child()
    assert deepest.depth == 2

    with pytest.raises(DepthLimitExceeded) as info:
        deepest.child()
    assert str(info.value) == (
        "nested run refused: depth 3 would exceed the maximum of 2. "
        "Raise max_depth on the context if the nesting is deliberate."
    )
    assert (info.value.depth, info.value.max_depth) == (3, 2)


def test_emit_passes_kind_and_data_with_the_run_identity() -> None:
    seen: list[tuple[str, dict[str, Any]]] = []

    def observer(kind: str, data: Mapping[str, Any]) -> None:
        seen.append((kind, dict(data)))

    ctx = make_test_ctx(observer=observer, correlation_id="run-1")
    ctx.emit("tool.start", tool="send_email", attempt=1)
    ctx.child().emit("tool.end")

    assert seen == [
        ("tool.start", {"run_id": "run-1", "depth": 0, "tool": "send_email", "attempt": 1}),
        ("tool.end", {"run_id": "run-1", "depth": 1}),
    ]


def test_emit_never_raises_when_the_observer_does(caplog: pytest.LogCaptureFixture) -> None:
    calls: list[str] = []

    def broken(kind: str, data: Mapping[str, Any]) -> None:
        calls.append(kind)
        raise RuntimeError("observer is down")

    ctx = make_test_ctx(observer=broken)
    with caplog.at_level(logging.WARNING, logger="agentkit.runtime"):
        ctx.emit("tool.start", tool="t")

    assert calls == ["tool.start"]
    assert [r.getMessage() for r in caplog.records] == [
        "observer failed on 'tool.start'; continuing"
    ]


def test_emit_without_an_observer_does_nothing() -> None:
    make_test_ctx().emit("tool.start", tool="t")


def test_check_cancelled_raises_once_the_token_is_cancelled() -> None:
    ctx = make_test_ctx()
    ctx.check_cancelled()

    ctx.cancel.cancel("why")
    with pytest.raises(RunCancelled) as info:
        ctx.check_cancelled()
    assert str(info.value) == "run cancelled: why"
    assert info.value.reason == "why"


def test_a_child_sees_its_parents_cancellation() -> None:
    parent = make_test_ctx()
    child = parent.child()
    child.check_cancelled()

    parent.cancel.cancel("user pressed stop")
    with pytest.raises(RunCancelled) as info:
        child.check_cancelled()
    assert str(info.value) == "run cancelled: user pressed stop"


def test_the_first_cancel_reason_wins() -> None:
    token = CancelToken()
    assert (token.cancelled, token.reason) == (False, None)
    token.cancel("first")
    token.cancel("second")
    assert (token.cancelled, token.reason) == (True, "first")


def test_autonomy_accepts_the_tier_names() -> None:
    assert make_test_ctx(autonomy="manual").autonomy is Autonomy.MANUAL
    assert make_test_ctx(autonomy=Autonomy.GATED).autonomy is Autonomy.GATED
    assert make_test_ctx().autonomy is Autonomy.AUTO


def test_a_bad_autonomy_string_lists_the_accepted_values() -> None:
    with pytest.raises(ValueError) as info:
        make_test_ctx(autonomy="yolo")
    assert str(info.value) == "unknown autonomy 'yolo'; expected one of ['auto', 'gated', 'manual']"


def test_the_constructor_builds_a_context_from_services() -> None:
    llm, store, invoker = FakeLLM(), InMemoryStore(), Invoker()
    ctx = RunContext(
        llm=llm, store=store, invoker=invoker, scope=Scope(org_id=1, domain_id=2),
        correlation_id="run-9",
    )
    assert (ctx.llm, ctx.store, ctx.invoker) == (llm, store, invoker)
    assert (ctx.depth, ctx.autonomy, ctx.budget, ctx.tracer) == (0, Autonomy.AUTO, None, None)
    assert repr(ctx) == "RunContext(run_id='run-9', scope='org1:dom2', autonomy='auto', depth=0)"


def test_emit_accepts_a_data_field_called_kind() -> None:
    seen: list[tuple[str, dict[str, object]]] = []
    ctx = make_test_ctx(observer=lambda kind, data: seen.append((kind, dict(data))))
    ctx.emit("step", kind="tool")
    assert seen[0][0] == "step"
    assert seen[0][1]["kind"] == "tool"


class _Caller:
    """A caller listening to one tool call, as an MCP server is."""

    def __init__(self) -> None:
        self.heard: list[tuple[object, ...]] = []

    async def progress(self, done: float, total: float | None, message: str | None) -> None:
        self.heard.append(("progress", done, total, message))

    async def log(self, level: str, message: str, data: Mapping[str, Any]) -> None:
        self.heard.append(("log", level, message, dict(data)))


async def test_progress_and_log_are_run_events_and_reach_a_listening_caller() -> None:
    events: list[tuple[str, dict[str, Any]]] = []
    ctx = make_test_ctx(observer=lambda kind, data: events.append((kind, dict(data))))
    caller = _Caller()

    await ctx.progress(1, 4, "loading")  # nobody listening: an event only
    with reporting_to(caller):
        await ctx.progress(2, 4)
        await ctx.log("warning", "slow disk", disk="sda")
    await ctx.log("info", "done")

    run = {"run_id": ctx.run_id, "depth": 0}
    assert events == [
        ("tool.progress", {**run, "done": 1, "total": 4, "message": "loading"}),
        ("tool.progress", {**run, "done": 2, "total": 4, "message": None}),
        ("tool.log", {**run, "disk": "sda", "level": "warning", "message": "slow disk"}),
        ("tool.log", {**run, "level": "info", "message": "done"}),
    ]
    assert caller.heard == [("progress", 2, 4, None), ("log", "warning", "slow disk",
                                                        {"disk": "sda"})]


async def test_an_unknown_log_level_is_refused_and_a_broken_caller_is_survived() -> None:
    class Broken:
        async def progress(self, done: float, total: float | None, message: str | None) -> None:
            raise OSError("pipe closed")

        async def log(self, level: str, message: str, data: Mapping[str, Any]) -> None:
            raise OSError("pipe closed")

    ctx = make_test_ctx()
    with pytest.raises(ValueError) as error:
        await ctx.log("verbose", "x")
    assert str(error.value) == (
        "unknown log level 'verbose'; expected one of ['debug', 'info', 'notice', 'warning', "
        "'error', 'critical', 'alert', 'emergency']"
    )
    with reporting_to(Broken()):
        await ctx.progress(1, 2)
        await ctx.log("error", "still running")


def test_for_run_acts_for_another_run_on_the_same_services() -> None:
    budget = Budget(max_calls=3)
    base = make_test_ctx(scope=Scope(org_id=7, domain_id=1), budget=budget, autonomy="gated")
    resumed = base.for_run("run-2")

    assert (resumed.correlation_id, resumed.depth, resumed.scope) == (
        "run-2", 0, Scope(org_id=7, domain_id=1)
    )
    assert (resumed.autonomy, resumed.budget, resumed.cancel) == (
        Autonomy.GATED, budget, base.cancel
    )
    assert (resumed.llm, resumed.store, resumed.invoker) == (base.llm, base.store, base.invoker)


def test_for_run_takes_the_runs_own_scope_autonomy_budget_and_cancel_token() -> None:
    base = make_test_ctx(budget=Budget(max_calls=3), max_depth=4)
    own_budget, own_cancel = Budget(max_calls=1), CancelToken()
    ctx = base.for_run(
        "run-3", scope=Scope(org_id=2, domain_id=5), autonomy="manual", budget=own_budget,
        cancel=own_cancel,
    )
    assert (ctx.correlation_id, ctx.scope, ctx.autonomy) == (
        "run-3", Scope(org_id=2, domain_id=5), Autonomy.MANUAL
    )
    assert (ctx.budget, ctx.cancel, ctx.max_depth) == (own_budget, own_cancel, 4)
    assert base.for_run("run-4", budget=None).budget is None


def test_for_run_keeps_the_tracer_unless_the_run_records_its_own() -> None:
    shared, own = RecordingTracer(), RecordingTracer()
    base = make_test_ctx(tracer=shared)
    assert base.for_run("run-5").tracer is shared
    assert base.for_run("run-6", tracer=own).tracer is own
    assert base.for_run("run-7", tracer=None).tracer is None


def test_for_run_takes_another_store_when_given_one() -> None:
    base = make_test_ctx()
    other = InMemoryStore()
    assert base.for_run("run-8").store is base.store
    assert base.for_run("run-9", store=other).store is other


def test_child_is_for_run_one_level_deeper() -> None:
    parent = make_test_ctx(budget=Budget(max_calls=3))
    assert vars_of(parent.child()) == vars_of(
        parent.for_run(parent.correlation_id, depth=parent.depth + 1)
    )


def vars_of(ctx: RunContext) -> dict[str, Any]:
    return {name: getattr(ctx, name) for name in RunContext.__slots__}
