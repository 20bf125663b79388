"""Workflow: a DAG of agents, functions, tools and human gates."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from agentkit.agents import Agent, RunNotResumable, Suspended, Workflow, WorkflowError
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ToolCall
from agentkit.core.runtime.context import RunContext
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.state.stores.sqlite import SQLiteStore
from agentkit.tools import as_tool, render_result, tool

published: list[str] = []


@tool(side_effecting=True)
def publish(draft: str) -> str:
    """Publish a finished draft to the company blog and return its address."""
    published.append(draft)
    return f"published: {draft}"


def writer() -> Agent:
    return Agent(name="writer", model="fake", prompt="You write one-line drafts.")


async def test_independent_steps_run_concurrently() -> None:
    both_started = asyncio.Event()
    started: list[str] = []

    async def step(inputs: Mapping[str, Any], ctx: RunContext) -> str:
        started.append(inputs["task"])
        if len(started) == 2:
            both_started.set()
        await both_started.wait()  # deadlocks unless the two steps run at once
        return f"{len(started)}"

    wf = Workflow("pair").add("a", step).add("b", step)
    result = await asyncio.wait_for(wf.run("go", make_test_ctx()), timeout=5)
    assert result.stop_reason == "complete"
    assert dict(result.outputs) == {"a": "2", "b": "2"}


async def test_dependencies_feed_outputs_and_terminal_outputs_render() -> None:
    async def research(inputs: Mapping[str, Any], ctx: RunContext) -> str:
        return f"facts about {inputs['task']}"

    wf = (
        Workflow("report")
        .add("research", research)
        .add("draft", writer(), after=["research"])
        .add("count", lambda_len := _length, after=["research"])
    )
    assert lambda_len is _length
    llm = FakeLLM.script([Turn(content="Octopuses are clever.")])
    result = await wf.run("octopuses", make_test_ctx(llm=llm))
    assert llm.requests[0].messages[0].content == "research: facts about octopuses"
    assert result.terminal == ("draft", "count")
    assert dict(result.terminal_outputs) == {"draft": "Octopuses are clever.", "count": 21}
    assert render_result(result) == "draft: Octopuses are clever.\ncount: 21"


async def _length(inputs: Mapping[str, Any], ctx: RunContext) -> int:
    return len(inputs["research"])


async def test_gate_suspends_and_resume_runs_the_rest_without_redoing_steps() -> None:
    published.clear()
    llm = FakeLLM.script([Turn(content="Draft one.")])
    wf = (
        Workflow("blog")
        .add("draft", writer())
        .gate("review", "Publish this draft?", after=["draft"])
        .add("publish", publish, after=["review"], input=lambda i: {"draft": i["draft"]})
    )
    ctx = make_test_ctx(llm=llm)
    first = await wf.run("write about tides", ctx)
    assert first.stop_reason == "suspended"
    suspended = first.evals["suspended"]
    assert isinstance(suspended, Suspended)
    assert [(c.id, dict(c.arguments)) for c in suspended.pending] == [
        ("review", {"question": "Publish this draft?"})
    ]
    assert published == []
    second = await wf.resume(first.run_id, {"review": "approve"}, ctx)
    assert second.stop_reason == "complete"
    assert second.outputs["publish"] == "published: Draft one."
    assert published == ["Draft one."]
    assert len(llm.requests) == 1  # the drafting agent did not run again


async def test_rejected_gate_skips_what_follows() -> None:
    published.clear()
    wf = (
        Workflow("blog")
        .gate("review", "Publish?")
        .add("publish", publish, input=lambda i: {"draft": "x"}, after=["review"])
    )
    ctx = make_test_ctx()
    first = await wf.run("t", ctx)
    result = await wf.resume(first.run_id, {}, ctx)  # no decision is a rejection
    assert result.stop_reason == "complete"
    assert result.skipped == ("review", "publish")
    assert published == []


async def test_gate_resumes_in_a_fresh_context_over_sqlite(tmp_path: Path) -> None:
    published.clear()
    path = tmp_path / "wf.db"

    def build() -> Workflow:
        return (
            Workflow("blog")
            .gate("review", "Publish?")
            .add("publish", publish, input=lambda i: {"draft": "final"}, after=["review"])
        )

    store = SQLiteStore(path)
    first = await build().run("t", make_test_ctx(store=store))
    store.close()
    store = SQLiteStore(path)
    try:
        ctx = make_test_ctx(store=store)
        result = await build().resume(first.run_id, {"review": "approve"}, ctx)
    finally:
        store.close()
    assert result.outputs["publish"] == "published: final"
    assert published == ["final"]


async def test_resume_refuses_a_workflow_that_is_not_suspended() -> None:
    ctx = make_test_ctx()

    async def noop(inputs: Mapping[str, Any], ctx: RunContext) -> int:
        return 1

    wf = Workflow("w").add("n", noop)
    done = await wf.run("t", ctx)
    with pytest.raises(RunNotResumable) as info:
        await wf.resume(done.run_id, {}, ctx)
    assert str(info.value) == (
        f"run {done.run_id!r} cannot be resumed: workflow 'w' is complete, not suspended"
    )


async def test_bad_decisions_are_refused_before_anything_changes() -> None:
    wf = Workflow("w").gate("review", "ok?")
    ctx = make_test_ctx()
    first = await wf.run("t", ctx)
    with pytest.raises(ValueError, match="unknown gates \\['nope'\\]"):
        await wf.resume(first.run_id, {"nope": "approve"}, ctx)
    with pytest.raises(ValueError, match="invalid values \\{'review': 'maybe'\\}"):
        await wf.resume(first.run_id, {"review": "maybe"}, ctx)
    result = await wf.resume(first.run_id, {"review": "approve"}, ctx)
    assert result.outputs["review"] is True


async def test_a_failing_step_names_itself() -> None:
    async def broken(inputs: Mapping[str, Any], ctx: RunContext) -> None:
        raise RuntimeError("disk full")

    with pytest.raises(WorkflowError) as info:
        await Workflow("w").add("save", broken).run("t", make_test_ctx())
    assert str(info.value) == "workflow 'w': step 'save' failed: RuntimeError: disk full"
    assert isinstance(info.value.__cause__, RuntimeError)


def test_definition_mistakes_are_refused() -> None:
    wf = Workflow("w")
    with pytest.raises(ValueError, match="comes after unknown step\\(s\\) \\['later'\\]"):
        wf.gate("g", "q?", after=["later"])
    with pytest.raises(ValueError, match="reserved for the workflow's task"):
        wf.gate("task", "q?")
    with pytest.raises(TypeError, match="must be an agent"):
        wf.add("x", 42)
    with pytest.raises(ValueError) as slashed:
        wf.gate("refund/s1", "q?")
    assert str(slashed.value) == (
        "workflow 'w': step name 'refund/s1' holds '/', which separates the ids of a path "
        "to a call inside a step; name it without '/'"
    )


async def test_a_workflow_wrapped_by_as_tool_renders_its_terminal_outputs() -> None:
    async def summary(inputs: Mapping[str, Any], ctx: RunContext) -> str:
        return f"summary of {inputs['task']}"

    wf = Workflow("digest").add("summary", summary)
    digest = as_tool(wf, name="digest", description="Produce a digest of a topic, as lines.",
                     side_effecting=False)
    lead = Agent(name="lead", model="fake", prompt="p",
                 cognition=ReActCognition(tools=[digest]))
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "digest", {"task": "tides"}),)),
        Turn(content="done"),
    ])
    result = await lead.run("go", make_test_ctx(llm=llm))
    assert result.output == "done"
    assert llm.requests[1].messages[-1].content == "summary: summary of tides"


async def test_recover_continues_after_a_failed_step_without_redoing_finished_ones() -> None:
    runs: list[str] = []
    healthy = {"ok": False}

    async def first(inputs: Mapping[str, Any], ctx: RunContext) -> str:
        runs.append("first")
        return "one"

    async def second(inputs: Mapping[str, Any], ctx: RunContext) -> str:
        runs.append("second")
        if not healthy["ok"]:
            raise ConnectionError("service down")
        return inputs["first"] + " two"

    wf = Workflow("w").add("first", first).add("second", second, after=["first"])
    ctx = make_test_ctx()
    with pytest.raises(WorkflowError):
        await wf.run("t", ctx)
    healthy["ok"] = True
    result = await wf.recover(ctx.correlation_id, ctx)
    assert result.outputs["second"] == "one two"
    assert runs == ["first", "second", "second"]
    with pytest.raises(RunNotResumable, match="is complete, not running"):
        await wf.recover(ctx.correlation_id, ctx)


async def test_recover_runs_an_agent_step_that_failed_afresh() -> None:
    """A sub-run that ended by raising gave the step its failure; recover runs the step
    again from the start, as it does any failed step (it does not hand on the failure)."""
    checker = Agent("checker", "fake", "Answer with a JSON object.",
                    output={"type": "object", "properties": {"ok": {"type": "boolean"}},
                            "required": ["ok"]},
                    max_output_repairs=0)
    wf = Workflow("w").add("check", checker)
    llm = FakeLLM.script([Turn(content="not json"), Turn(content='{"ok": true}')])
    ctx = make_test_ctx(llm=llm)
    with pytest.raises(WorkflowError, match="step 'check' failed: OutputCoercionError"):
        await wf.run("check it", ctx)

    result = await wf.recover(ctx.correlation_id, ctx)

    assert dict(result.outputs) == {"check": {"ok": True}}
    llm.assert_all_used()


async def test_a_cancelled_workflow_stops_before_its_next_step_keeping_what_finished() -> None:
    ran: list[str] = []

    async def draft(inputs: Mapping[str, Any], ctx: RunContext) -> str:
        ctx.cancel.cancel("stopped by ana")  # the cancel arrives while this step runs
        return "a draft"

    async def post(inputs: Mapping[str, Any], ctx: RunContext) -> str:
        ran.append("post")
        return "posted"

    workflow = Workflow("w").add("draft", draft).add("post", post, after=["draft"])
    ctx = make_test_ctx(correlation_id="w1")
    result = await workflow.run("t", ctx)
    assert (result.stop_reason, dict(result.outputs), ran) == (
        "cancelled", {"draft": "a draft"}, [])
    fresh = make_test_ctx(store=ctx.store, correlation_id="w1")
    with pytest.raises(RunNotResumable) as info:
        await workflow.resume("w1", {}, fresh)
    assert str(info.value) == "run 'w1' cannot be resumed: workflow 'w' is cancelled, not suspended"
    with pytest.raises(RunNotResumable) as info:
        await workflow.recover("w1", fresh)
    assert str(info.value) == "run 'w1' cannot be resumed: workflow 'w' is cancelled, not running"


async def test_an_agent_step_stopped_by_the_cancel_is_not_taken_as_finished() -> None:
    async def stopper(inputs: Mapping[str, Any], ctx: RunContext) -> str:
        ctx.cancel.cancel("stopped")
        return "stopped"

    llm = FakeLLM.script([Turn(content="never read")])
    workflow = Workflow("w").add("stop", stopper).add("write", writer())
    result = await workflow.run("t", make_test_ctx(llm=llm, correlation_id="w1"))
    assert (result.stop_reason, dict(result.outputs)) == ("cancelled", {"stop": "stopped"})


async def test_a_suspended_workflow_is_cancelled_and_a_decision_after_it_is_refused() -> None:
    from agentkit.agents.cancelling import cancel_suspended_workflow

    async def draft(inputs: Mapping[str, Any], ctx: RunContext) -> str:
        return "a draft"

    workflow = (Workflow("w").add("draft", draft).gate("ok", "Post it?", after=["draft"])
                .add("post", draft, after=["ok"]))
    ctx = make_test_ctx(correlation_id="w1")
    assert (await workflow.run("t", ctx)).stop_reason == "suspended"
    ended = await cancel_suspended_workflow(workflow, "w1", ctx)
    assert (ended.stop_reason, dict(ended.outputs)) == ("cancelled", {"draft": "a draft"})
    with pytest.raises(RunNotResumable) as info:
        await workflow.resume("w1", {"ok": "approve"}, ctx)
    assert str(info.value) == (
        "run 'w1' cannot be resumed: workflow 'w' is cancelled, not suspended")
    with pytest.raises(RunNotResumable):
        await cancel_suspended_workflow(workflow, "w1", ctx)
