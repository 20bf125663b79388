"""A run on the Temporal engine streams the events an in-process run streams: steps,
text and reasoning deltas from the workers, tool calls and results once each, in the
order they happened, over SSE and AG-UI; a retried model call says so and duplicates
nothing."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import pytest

from agentkit.core.contracts.types import (
    ChatRequest,
    LLMResult,
    StreamEvent,
    TextDelta,
    ToolCall,
    Usage,
)
from agentkit.core.testing import Turn
from agentkit.state.stores.memory import InMemoryStore
from tests.serve.served import (
    TOKENS,
    ByTask,
    Shop,
    apps_on,
    bearer,
    client_on,
    context_for,
    refund_turns,
    served,
    sse,
)
from tests.serve.test_agui import post_sse, run_input

ANA = bearer("tok-ana")


def shown(events: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """Each event's name and data, but a final event's usage (the engines count a
    run's requests differently) and the usage of a final's result."""
    return [(e["event"], e["data"] if e["event"] != "final" else
             (e["data"]["stop_reason"], e["data"]["output"])) for e in events]


WHERE_IS_A = [
    Turn(content="Checking.", reasoning="Look it up.",
         tool_calls=(ToolCall("c1", "slow_lookup", {"order_id": "A"}),
                     ToolCall("c2", "no_such_tool", {}))),
    # A model may give a later call an id it used before.
    Turn(tool_calls=(ToolCall("c1", "slow_lookup", {"order_id": "B"}),)),
    Turn(content="It shipped."),
]


async def test_a_run_on_temporal_streams_steps_and_deltas_as_the_in_process_engine_does(
    request: pytest.FixtureRequest,
) -> None:
    """Reasoning and text deltas, tool calls, the step, tool results (one answered by a
    worker, one by the workflow itself), then the next step: the same events in the
    same order on both engines."""
    seen: dict[str, list[dict[str, Any]]] = {}
    for engine in ("in-process", "temporal"):
        shop = Shop()
        shop.release.set()
        store = InMemoryStore()
        context = context_for(ByTask({"where is A": WHERE_IS_A}), store)
        async with client_on(engine, request, store, [shop.support], context) as http:
            run_id = f"t-{uuid.uuid4().hex[:12]}"
            await http.post("/v1/agents/support/runs", json={"input": "where is A",
                            "run_id": run_id}, headers=ANA)
            seen[engine] = await sse(http, f"/v1/runs/{run_id}/events")
            replayed = await sse(http, f"/v1/runs/{run_id}/events", last="6")
            assert [e["id"] for e in replayed] == [str(n) for n in range(7, 15)]
    assert [e["event"] for e in seen["temporal"]] == [
        "reasoning_delta", "text_delta", "tool_call", "tool_call", "step", "tool_result",
        "tool_result", "tool_call", "step", "tool_result", "text_delta", "text_delta",
        "step", "final"]
    assert shown(seen["temporal"]) == shown(seen["in-process"])
    assert [e["id"] for e in seen["temporal"]] == [str(n) for n in range(1, 15)]


async def test_a_rejected_call_streams_its_result_before_the_next_step_as_in_process(
    request: pytest.FixtureRequest,
) -> None:
    """A call the workflow answers itself (a person rejected it) is in the stream where
    it happened: before the next model call's deltas, not after them."""
    seen: dict[str, list[list[dict[str, Any]]]] = {}
    for engine in ("in-process", "temporal"):
        shop = Shop()
        store = InMemoryStore()
        context = context_for(ByTask({"refund A": refund_turns("A", 10)}), store)
        async with client_on(engine, request, store, [shop.support], context) as http:
            run_id = f"t-{uuid.uuid4().hex[:12]}"
            await http.post("/v1/agents/support/runs", json={"input": "refund A",
                            "run_id": run_id, "wait": True}, headers=ANA)
            first = await sse(http, f"/v1/runs/{run_id}/events")
            decided = await http.post(f"/v1/runs/{run_id}/decisions",
                                      json={"decisions": {"c1": "reject"}}, headers=ANA)
            assert decided.status_code == 202
            second = await sse(http, f"/v1/runs/{run_id}/events", last=first[-1]["id"])
            seen[engine] = [first, second]
        assert shop.refunds == []
    first, second = seen["temporal"]
    assert [e["event"] for e in first] == ["tool_call", "step", "interrupt", "final"]
    assert [e["event"] for e in second] == [
        "tool_result", "text_delta", "text_delta", "step", "final"]
    assert [shown(events) for events in seen["temporal"]] == [
        shown(events) for events in seen["in-process"]]


class _BrokenOnce:
    """A streaming model whose first stream breaks after a delta (a dropped
    connection); its next stream answers in full, asking for a tool call."""

    def __init__(self) -> None:
        self.streams = 0

    async def chat(self, request: ChatRequest, ctx: Any) -> LLMResult:
        raise AssertionError("a followed run streams its model calls")

    async def stream(self, request: ChatRequest, ctx: Any) -> AsyncIterator[StreamEvent]:
        self.streams += 1
        if any(m.role == "tool" for m in request.messages):
            yield TextDelta("Shipped.")
            yield LLMResult(content="Shipped.", usage=Usage(1, 1, 1), finish_reason="stop",
                            model="fake")
            return
        yield TextDelta("Let me")
        if self.streams == 1:
            raise ConnectionError("the connection dropped")
        yield TextDelta(" look.")
        call = ToolCall("c1", "slow_lookup", {"order_id": "A"})
        yield LLMResult(content="Let me look.", tool_calls=(call,), usage=Usage(1, 1, 1),
                        finish_reason="tool_calls", model="fake")


async def test_a_retried_model_call_supersedes_its_deltas_and_duplicates_nothing(
    request: pytest.FixtureRequest,
) -> None:
    """The deltas of an attempt that broke stay in the stream, followed by a ``retry``
    event and the retry's own deltas; each tool call, result and step appears once."""
    shop = Shop()
    shop.release.set()
    model = _BrokenOnce()
    store = InMemoryStore()
    context = context_for(model, store)
    async with apps_on("temporal", request, store) as make, \
            served(await make([shop.support], context=context, auth=TOKENS)) as url, \
            httpx2.AsyncClient(base_url=url) as http:
        await http.post("/v1/agents/support/runs", json={"input": "where is A",
                        "run_id": f"t-{uuid.uuid4().hex[:12]}", "wait": True}, headers=ANA)
        run = (await http.get("/v1/runs?limit=1", headers=ANA)).json()["runs"][0]
        events = await sse(http, f"/v1/runs/{run['run_id']}/events")
    assert model.streams == 3
    assert [(e["event"], e["data"].get("text", e["data"].get("attempt")))
            for e in events] == [
        ("text_delta", "Let me"), ("retry", 2), ("text_delta", "Let me"),
        ("text_delta", " look."), ("tool_call", None), ("step", None),
        ("tool_result", None), ("text_delta", "Shipped."), ("step", None), ("final", None)]
    assert events[-1]["data"]["output"] == "Shipped."


async def test_the_ag_ui_face_on_temporal_streams_text_messages_as_in_process(
    request: pytest.FixtureRequest,
) -> None:
    """AG-UI's text and reasoning messages are built from the run's deltas, so a run on
    Temporal shows them too: the same protocol events as in-process."""
    seen: dict[str, list[dict[str, Any]]] = {}
    thread, run = f"t-{uuid.uuid4().hex[:8]}", f"r-{uuid.uuid4().hex[:8]}"
    for engine in ("in-process", "temporal"):
        shop = Shop()
        shop.release.set()
        store = InMemoryStore()
        context = context_for(ByTask({"where is A": WHERE_IS_A}), store)
        async with client_on(engine, request, store, [shop.support], context) as http:
            seen[engine] = await post_sse(http, "/v1/agents/support/ag-ui",
                                          run_input(thread, run, "where is A"))
    assert seen["temporal"] == seen["in-process"]
    contents = [e["delta"] for e in seen["temporal"] if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert contents == ["Checking.", "It", " shipped."]


class _ByLastTask(ByTask):
    """Answers each run from the script of its own task: the last user message (the
    first is the session's)."""

    def _fake(self, request: ChatRequest) -> Any:
        return self.fakes[[m.content for m in request.messages if m.role == "user"][-1]]


async def test_a_run_in_a_session_streams_its_own_calls_not_its_history(
    request: pytest.FixtureRequest,
) -> None:
    """The second run of a session has the first one's calls in its transcript; its
    stream has only its own events, as in-process."""
    seen: dict[str, list[dict[str, Any]]] = {}
    for engine in ("in-process", "temporal"):
        shop = Shop()
        shop.release.set()
        llm = _ByLastTask({"where is A": WHERE_IS_A, "thanks": [Turn(content="Welcome.")]})
        store = InMemoryStore()
        context = context_for(llm, store)
        async with client_on(engine, request, store, [shop.support], context) as http:
            session = f"s-{uuid.uuid4().hex[:8]}"
            for task in ("where is A", "thanks"):
                run_id = f"t-{uuid.uuid4().hex[:12]}"
                done = await http.post("/v1/agents/support/runs", json={
                    "input": task, "run_id": run_id, "session": session, "wait": True},
                    headers=ANA)
                assert done.json()["status"] == "complete"
            seen[engine] = await sse(http, f"/v1/runs/{run_id}/events")
    assert [e["event"] for e in seen["temporal"]] == ["text_delta", "step", "final"]
    assert shown(seen["temporal"]) == shown(seen["in-process"])


async def test_on_ag_ui_a_retried_model_call_ends_its_text_and_starts_a_new_message(
    request: pytest.FixtureRequest,
) -> None:
    shop = Shop()
    shop.release.set()
    store = InMemoryStore()
    context = context_for(_BrokenOnce(), store)
    thread, run = f"t-{uuid.uuid4().hex[:8]}", f"r-{uuid.uuid4().hex[:8]}"
    async with apps_on("temporal", request, store) as make, \
            served(await make([shop.support], context=context, auth=TOKENS)) as url, \
            httpx2.AsyncClient(base_url=url) as http:
        events = await post_sse(http, "/v1/agents/support/ag-ui",
                                run_input(thread, run, "where is A"))
    texts = [(e["type"], e["messageId"], e.get("delta")) for e in events
             if e["type"].startswith("TEXT_MESSAGE")]
    assert texts == [
        ("TEXT_MESSAGE_START", f"{run}-1", None), ("TEXT_MESSAGE_CONTENT", f"{run}-1", "Let me"),
        ("TEXT_MESSAGE_END", f"{run}-1", None),
        ("TEXT_MESSAGE_START", f"{run}-3", None), ("TEXT_MESSAGE_CONTENT", f"{run}-3", "Let me"),
        ("TEXT_MESSAGE_CONTENT", f"{run}-3", " look."), ("TEXT_MESSAGE_END", f"{run}-3", None),
        ("TEXT_MESSAGE_START", f"{run}-8", None),
        ("TEXT_MESSAGE_CONTENT", f"{run}-8", "Shipped."), ("TEXT_MESSAGE_END", f"{run}-8", None)]
    assert events[-1]["result"] == "Shipped."
