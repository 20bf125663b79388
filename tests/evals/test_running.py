"""Running an eval: repeats, sessions, budgets, timeouts, crashes and run ids."""

from __future__ import annotations

import asyncio
import io
import sys

import pytest

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ToolCall
from agentkit.core.policies import Budget, meter
from agentkit.core.runtime import RunContext
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.evals import EVAL_RUNS_LOG, Aggregate, Case, Contains, Dataset, EvalContext, Score
from agentkit.state.stores import InMemoryStore
from agentkit.tools import tool

AGENT = Agent("helper", "fake", "You help.")


def one_reply_each(*replies: str) -> tuple[list[RunContext], object]:
    """A ctx_factory whose n-th context answers with the n-th reply."""
    made: list[RunContext] = []

    def factory() -> RunContext:
        ctx = make_test_ctx(llm=FakeLLM.script([Turn(replies[len(made)])]))
        made.append(ctx)
        return ctx

    return made, factory


async def test_repeats_give_pass_rates_means_and_stdevs() -> None:
    made, factory = one_reply_each("Paris", "Lyon", "Paris", "Paris")

    def exact(ctx: EvalContext) -> float:
        return 1.0 if ctx.output == "Paris" else 0.0

    dataset = Dataset([Case("capital of France?", expected="Paris", id="france")],
                      evaluators=[Contains(), exact], name="geo")
    report = await dataset.evaluate(AGENT, factory, repeat=4, max_concurrency=1,  # type: ignore[arg-type]
                                    progress=False)
    assert len(made) == 4
    assert [(r.case_id, r.repeat, r.output, r.passed) for r in report.results] == [
        ("france", 0, "Paris", True), ("france", 1, "Lyon", False),
        ("france", 2, "Paris", True), ("france", 3, "Paris", True),
    ]
    assert report.aggregates == {
        "Contains": Aggregate(pass_rate=0.75, mean=0.75, stdev=0.5, count=4),
        "exact": Aggregate(pass_rate=0.75, mean=0.75, stdev=0.5, count=4),
    }
    assert report.case_pass_rates() == {"france": 0.75}
    assert not report.passed


async def test_every_run_gets_a_fresh_run_id_naming_the_eval_noted_in_the_store() -> None:
    store = InMemoryStore()
    dataset = Dataset([Case("a", id="first case"), Case("b")], name="smoke test")
    report = await dataset.evaluate(
        AGENT, lambda: make_test_ctx(llm=FakeLLM("ok"), store=store, correlation_id="fixed"),
        repeat=2, progress=False,
    )
    prefix = f"eval-{report.eval_id}-"
    assert report.eval_id.startswith("smoke-test-")
    assert [r.run_id for r in report.results] == [
        prefix + "first-case-1", prefix + "first-case-2", prefix + "case-2-1", prefix + "case-2-2",
    ]
    noted = await store.list(EVAL_RUNS_LOG)
    assert sorted(n["run_id"] for n in noted) == sorted(r.run_id for r in report.results)
    assert {(n["eval"], n["eval_id"], n["agent"]) for n in noted} == {
        ("smoke test", report.eval_id, "helper"),
    }


async def test_a_multi_turn_case_plays_its_turns_into_one_session() -> None:
    llm = FakeLLM.script([Turn("Hi Ada!"), Turn("Your name is Ada.")])
    case = Case(turns=["I am Ada.", "What is my name?"], expected=["Ada", "Ada"], id="memory")
    report = await Dataset([case], evaluators=[Contains()]).evaluate(
        AGENT, lambda: make_test_ctx(llm=llm), progress=False
    )
    (result,) = report.results
    assert result.scores == {"turn1:Contains": Score(1.0, True), "turn2:Contains": Score(1.0, True)}
    assert result.output == "Your name is Ada."
    second = llm.requests[1].messages
    assert [(m.role, m.content) for m in second] == [
        ("user", "I am Ada."), ("assistant", "Hi Ada!"), ("user", "What is my name?"),
    ]


async def test_a_turn_after_a_suspended_turn_is_not_played() -> None:
    @tool(side_effecting=True, requires_approval=True)
    def close_account(user: str) -> str:
        """Close a customer's account for good; a person approves every call."""
        return "closed"

    agent = Agent("support", "fake", "You help.",
                  cognition=ReActCognition(tools=[close_account]))
    llm = FakeLLM.script([Turn(tool_calls=(ToolCall("c1", "close_account", {"user": "u"}),))])
    case = Case(turns=["close my account", "thanks"])
    report = await Dataset([case], evaluators=[Contains("closed")]).evaluate(
        agent, lambda: make_test_ctx(llm=llm), progress=False
    )
    (result,) = report.results
    assert result.stop_reason == "suspended"
    assert result.scores["turn2:Contains"] == Score(
        None, False, "turn not played: turn 1 stopped with 'suspended'"
    )


async def test_a_spent_budget_stops_the_eval_with_a_partial_report() -> None:
    @tool(side_effecting=False)
    def lookup(order_id: str) -> str:
        """Look up a customer order by its id and return its status line."""
        return "delivered"

    agent = Agent("support", "fake", "You help.", cognition=ReActCognition(tools=[lookup]))

    def factory() -> RunContext:
        llm = FakeLLM.script([
            Turn(tool_calls=(ToolCall("c1", "lookup", {"order_id": "A-1"}),)),
            Turn("It was delivered."),
        ])
        return make_test_ctx(llm=llm, chat_middleware=[meter()])

    budget = Budget(max_calls=3)
    dataset = Dataset([Case("where is A-1?", id=f"q{n}") for n in range(1, 5)],
                      evaluators=[Contains("delivered")])
    report = await dataset.evaluate(agent, factory, max_concurrency=1, budget=budget,
                                    progress=False)
    assert [r.case_id for r in report.results] == ["q1"]
    assert report.unfinished == ("q2#1", "q3#1", "q4#1")
    assert report.stopped == (
        "the eval's budget ran out: budget exceeded: model call to 'fake' refused: calls "
        "would reach 4 over the ceiling of 3"
    )
    assert not report.passed


async def test_a_budget_needs_a_metered_context() -> None:
    with pytest.raises(ValueError) as exc:
        await Dataset([Case("hi")]).evaluate(
            AGENT, lambda: make_test_ctx(llm=FakeLLM("ok")), budget=Budget(max_calls=3),
            progress=False,
        )
    assert str(exc.value) == (
        "evaluate(budget=...) is enforced by meter() on the model calls, and the contexts "
        "ctx_factory returns have none in their chat chain; build them with make_ctx (its "
        "default chains meter) or pass chat_middleware=[meter()]"
    )


async def test_a_case_past_its_timeout_fails_with_the_reason() -> None:
    never = asyncio.Event()

    @tool(side_effecting=False)
    async def wait_forever(topic: str) -> str:
        """Wait for a reply on a topic that never comes (a hung backend)."""
        await never.wait()
        return "never"

    agent = Agent("slow", "fake", "You wait.", cognition=ReActCognition(tools=[wait_forever]))
    llm = FakeLLM.script([Turn(tool_calls=(ToolCall("c1", "wait_forever", {"topic": "x"}),))])
    dataset = Dataset([Case("wait", id="hung"), Case("hi", id="quick")],
                      evaluators=[Contains("hi")])
    replies = iter([llm, FakeLLM("hi there")])
    report = await dataset.evaluate(
        agent, lambda: make_test_ctx(llm=next(replies)), timeout=1.0, max_concurrency=1,
        progress=False,
    )
    hung, quick = report.results
    assert (hung.passed, hung.stop_reason, hung.error, dict(hung.scores)) == (
        False, "timeout", "timed out after 1.0s", {},
    )
    assert [c.name for c in hung.trajectory] == []
    assert quick.passed
    assert hung.reasons() == ["timed out after 1.0s"]


async def test_a_run_that_raises_is_reported_as_crashed() -> None:
    report = await Dataset([Case("hi")], evaluators=[Contains("x")]).evaluate(
        AGENT, lambda: make_test_ctx(llm=FakeLLM()), progress=False
    )
    (result,) = report.results
    assert (result.stop_reason, result.passed) == ("crashed", False)
    assert result.error == (
        "the run raised FakeLLMExhausted: FakeLLM: the script has 0 turn(s) and all were "
        "used; call 1 has no answer. Add a Turn to FakeLLM.script([...])."
    )


async def test_evaluate_refuses_bad_settings_and_a_factory_that_makes_no_context() -> None:
    dataset = Dataset([Case("hi")])
    with pytest.raises(ValueError) as exc:
        await dataset.evaluate(AGENT, make_test_ctx, repeat=0)
    assert str(exc.value) == "repeat= is a whole number of runs per case, at least 1; got 0"
    with pytest.raises(TypeError) as type_exc:
        await dataset.evaluate(AGENT, lambda: "ctx", progress=False)  # type: ignore[arg-type,return-value]
    assert str(type_exc.value) == (
        "ctx_factory must return a RunContext (from make_ctx or make_test_ctx), got 'ctx'"
    )


def test_a_case_takes_an_input_or_turns_and_a_dataset_unique_ids() -> None:
    with pytest.raises(ValueError) as exc:
        Case("hi", turns=["a"])
    assert str(exc.value) == (
        "case None: give exactly one of input= (one run) or turns=[...] (a conversation), "
        "got both"
    )
    with pytest.raises(ValueError) as exc:
        Case(turns=["a", "b"], expected=["x"])
    assert str(exc.value) == (
        "case None: a multi-turn case's expected= is None or a list with one entry per "
        "turn (2), got ['x']"
    )
    with pytest.raises(ValueError) as exc:
        Dataset([Case("a", id="x"), Case("b", id="x")], name="d")
    assert str(exc.value) == "dataset 'd': case ids must be unique; repeated: ['x']"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


async def test_progress_is_a_bar_on_a_terminal_and_plain_lines_otherwise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dataset = Dataset([Case("a", id="a"), Case("b", id="b")], evaluators=[Contains("ok")],
                      name="p")
    for stream, expected in [
        (io.StringIO(), "eval p: 1/2 a#1 pass\neval p: 2/2 b#1 pass\n"),
        (Terminal(), "\reval p [###############---------------] 1/2 (0 failed)"
                     "\reval p [##############################] 2/2 (0 failed)\n"),
    ]:
        monkeypatch.setattr(sys, "stderr", stream)
        await dataset.evaluate(AGENT, lambda: make_test_ctx(llm=FakeLLM("ok")),
                               max_concurrency=1)
        assert stream.getvalue() == expected


async def test_case_ids_that_slug_alike_still_get_distinct_run_ids() -> None:
    report = await Dataset([Case("a", id="a b"), Case("b", id="a-b")]).evaluate(
        AGENT, lambda: make_test_ctx(llm=FakeLLM("ok")), progress=False
    )
    assert [r.run_id.removeprefix(f"eval-{report.eval_id}-") for r in report.results] == [
        "a-b-1", "a-b~2-1",
    ]


def test_a_case_without_an_id_is_numbered_by_its_place_in_each_dataset() -> None:
    shared = Case("hi")
    first, second = Dataset([shared]), Dataset([Case("x", id="x"), shared])
    assert ([c.id for c in first.cases], [c.id for c in second.cases], shared.id) == (
        ["case-1"], ["x", "case-2"], None,
    )
