"""The HTTP API against a real uvicorn server, on SQLite and PostgreSQL: runs, events,
traces, the approval inbox, decisions (one winner), cancel, sessions, errors, access."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.media import File, Image
from agentkit.core.contracts.settings import ModelSettings
from agentkit.core.contracts.types import Scope, ToolCall
from agentkit.core.testing import Turn
from agentkit.serve import Principal
from tests.serve.served import (
    TOKENS,
    ByTask,
    MakeApp,
    Shop,
    apps_on,
    bearer,
    close_store,
    context_for,
    decide_at_once,
    nested_turns,
    open_store,
    refund_turns,
    served,
    sse,
    start,
    waiting_refund,
)

ANA = bearer("tok-ana")


STORES = ["memory", "sqlite", "postgres"]
"""The stores the in-process engine keeps runs in; ``temporal`` is the Temporal engine
(a real dev server and a real worker in this process, sharing an InMemoryStore)."""


@pytest.fixture(params=[*STORES, "temporal"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def store(backend: str, request: pytest.FixtureRequest, tmp_path: Path
                ) -> AsyncIterator[Any]:
    opened = await open_store("memory" if backend == "temporal" else backend, request,
                              tmp_path)
    yield opened
    await close_store(opened)


@pytest.fixture
async def make_app(
    backend: str, store: Any, request: pytest.FixtureRequest
) -> AsyncIterator[MakeApp]:
    """``await make_app(agents, context=..., **create_app_options)``: the app on the
    backend under test; on Temporal, with a worker hosting the same agents."""
    async with apps_on("temporal" if backend == "temporal" else "in-process", request,
                       store) as make:
        yield make


async def test_a_run_starts_lists_streams_its_events_and_replays_after_last_event_id(
    store: Any, make_app: MakeApp, backend: str
) -> None:
    shop = Shop()
    llm = ByTask({"hello": [Turn(content="Hi there.")]})
    app = await make_app([shop.support], context=context_for(llm, store), auth=TOKENS)
    async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
        started = await http.post("/v1/agents/support/runs", json={"input": "hello",
                                  "run_id": "r1"}, headers=ANA)
        assert (started.status_code, started.json()) == (202, {"run_id": "r1",
                                                                "status": "running"})
        events = await sse(http, "/v1/runs/r1/events")
        names = ["text_delta", "text_delta", "step", "final"]  # on either engine
        assert [e["event"] for e in events] == names
        assert [e["id"] for e in events] == [str(n) for n in range(1, len(names) + 1)]
        assert events[-1]["data"]["output"] == "Hi there."
        replayed = await sse(http, "/v1/runs/r1/events", last=str(len(names) - 1))
        assert [e["id"] for e in replayed] == [str(len(names))]
        run = (await http.get("/v1/runs/r1", headers=ANA)).json()
        assert (run["status"], run["agent"], run["output"], run["stop_reason"]) == (
            "complete", "support", "Hi there.", "complete")
        assert run["decisions"] == [] and run["pending"] == []
        listed = (await http.get("/v1/runs?status=complete", headers=ANA)).json()
        assert [r["run_id"] for r in listed["runs"]] == ["r1"]
        again = await http.post("/v1/agents/support/runs", json={"input": "hello",
                                "run_id": "r1"}, headers=ANA)
        assert (again.status_code, again.json()) == (200, {"run_id": "r1",
                                                           "status": "complete"})
        assert len(llm.fakes["hello"].requests) == 1  # one run for the id given twice


async def test_the_inbox_lists_calls_waiting_across_runs_and_a_decision_runs_the_tool_once(
    store: Any, make_app: MakeApp, backend: str
) -> None:
    shop = Shop()
    llm = ByTask({"refund A": refund_turns("A", 10), "refund B": refund_turns("B", 20),
                  **nested_turns("C")})
    app = await make_app([shop.support], context=context_for(llm, store), auth=TOKENS)
    async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
        for run_id, task in (("ra", "refund A"), ("rb", "refund B"), ("rc", "delegate C")):
            done = await start(http, task, run_id)
            assert (done.status_code, done.json()["status"]) == (200, "suspended")
        inbox = (await http.get("/v1/approvals", headers=ANA)).json()
        assert [(a["run_id"], a["call_id"], a["tool"], a["arguments"], a["kind"], a["asked_by"])
                for a in inbox["approvals"]] == [
            ("rc", "c1/s1", "refund", {"order_id": "C", "usd": 5}, "approval",
             ["support", "billing"]),
            ("rb", "c1", "refund", {"order_id": "B", "usd": 20}, "approval", ["support"]),
            ("ra", "c1", "refund", {"order_id": "A", "usd": 10}, "approval", ["support"]),
        ]
        assert all(isinstance(a["since"], float) for a in inbox["approvals"])
        assert (await http.get("/v1/approvals?kind=question", headers=ANA)).json() == {
            "approvals": [], "next_cursor": None}
        suspended = await sse(http, "/v1/runs/rc/events")
        assert [e["event"] for e in suspended][-2:] == ["interrupt", "final"]
        assert suspended[-1]["data"]["stop_reason"] == "suspended"
        decided = await http.post("/v1/runs/rc/decisions",
                                  json={"decisions": {"c1/s1": "approve"}}, headers=ANA)
        assert decided.status_code == 202
        events = await sse(http, "/v1/runs/rc/events", last=suspended[-1]["id"])
        assert events[-1]["data"]["output"] == "Billing handled C."
        run = (await http.get("/v1/runs/rc", headers=ANA)).json()
        assert run["status"] == "complete"
        assert [(d["call_id"], d["decision"], d["by"]) for d in run["decisions"]] == [
            ("c1/s1", "approve", "ana")]
        assert shop.refunds == [("C", 5)]
        trace = (await http.get("/v1/runs/rc/trace", headers=ANA)).json()
        if backend == "temporal":  # the workflow's activities, before and after approval
            assert [s["name"] for s in trace["spans"]] == [
                "model fake", "tool ask_billing", "tool ask_billing", "model fake"]
        else:
            assert [s["attributes"]["agentkit.stop_reason"] for s in trace["spans"]] == [
                "suspended", "complete"]  # both stretches of the run, before and after
        left = (await http.get("/v1/approvals?agent=support&limit=1", headers=ANA)).json()
        assert [a["run_id"] for a in left["approvals"]] == ["rb"]
        rest = (await http.get(f"/v1/approvals?cursor={left['next_cursor']}",
                               headers=ANA)).json()
        assert [a["run_id"] for a in rest["approvals"]] == ["ra"]


async def test_two_deciders_at_once_have_one_winner_and_the_tool_runs_once(
    store: Any, make_app: MakeApp
) -> None:
    async with waiting_refund(make_app, store) as (shop, http):
        winner, loser = await decide_at_once(http, "r1", {"c1": "approve"})
        assert (winner.status_code, loser.status_code) == (202, 409)
        assert loser.json()["error"]["type"] == "not_resumable"
        suspended = await sse(http, "/v1/runs/r1/events")
        await sse(http, "/v1/runs/r1/events", last=suspended[-1]["id"])
        finished = (await http.get("/v1/runs/r1", headers=ANA)).json()
        assert finished["status"] == "complete"
        assert [d["by"] for d in finished["decisions"]] == ["ana"]
        assert shop.refunds == [("A", 10)]


async def test_a_decision_the_run_cannot_take_is_422_naming_the_pending_ids(
    store: Any, make_app: MakeApp
) -> None:
    async with waiting_refund(make_app, store) as (shop, http):
        refused = await http.post("/v1/runs/r1/decisions",
                                  json={"decisions": {"c9": "approve"}}, headers=ANA)
        assert refused.status_code == 422
        error = refused.json()["error"]
        assert (error["type"], error["pending"]) == ("invalid_decision", {"c1": "approval"})
        assert "c9" in error["message"] and "c1" in error["message"]
        assert (await http.get("/v1/runs/r1", headers=ANA)).json()["status"] == "suspended"
        assert shop.refunds == []


async def test_cancel_stops_a_running_run_at_its_next_safe_point(
    store: Any, make_app: MakeApp
) -> None:
    shop = Shop()
    llm = ByTask({"look": [Turn(tool_calls=(ToolCall("c1", "slow_lookup", {"order_id": "A"}),)),
                           Turn(content="never")]})
    app = await make_app([shop.support], context=context_for(llm, store), auth=TOKENS)
    async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
        await http.post("/v1/agents/support/runs", json={"input": "look", "run_id": "r1"},
                        headers=ANA)
        cancelled = await http.post("/v1/runs/r1/cancel", headers=ANA)
        assert cancelled.json() == {"run_id": "r1", "status": "cancelling"}
        shop.release.set()
        events = await sse(http, "/v1/runs/r1/events")
        assert events[-1]["data"]["stop_reason"] == "cancelled"
        assert (await http.get("/v1/runs/r1", headers=ANA)).json()["status"] == "cancelled"
        again = await http.post("/v1/runs/r1/cancel", headers=ANA)
        assert (again.status_code, again.json()["error"]) == (409, {
            "type": "not_cancellable", "message": "run 'r1' cannot be cancelled: it is "
            "cancelled; only a running or suspended run can be cancelled"})


async def test_cancel_ends_a_run_waiting_for_a_person_and_a_later_decision_is_409(
    store: Any, make_app: MakeApp
) -> None:
    shop = Shop()
    llm = ByTask({"refund A": refund_turns("A", 10), "refund B": refund_turns("B", 20)})
    app = await make_app([shop.support], context=context_for(llm, store), auth=TOKENS)
    async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
        for run_id, task in (("ra", "refund A"), ("rb", "refund B")):
            await start(http, task, run_id)
        suspended = await sse(http, "/v1/runs/ra/events")
        viewer = await http.post("/v1/runs/ra/cancel", headers=bearer("tok-viewer"))
        assert (viewer.status_code, viewer.json()["error"]["message"]) == (
            403, "principal 'viewer' may not cancel runs; run 'ra' is unchanged")
        cancelled = await http.post("/v1/runs/ra/cancel", headers=ANA)
        assert (cancelled.status_code, cancelled.json()) == (
            202, {"run_id": "ra", "status": "cancelled"})
        run = (await http.get("/v1/runs/ra", headers=ANA)).json()
        assert (run["status"], run["stop_reason"], run["pending"]) == (
            "cancelled", "cancelled", [])
        inbox = (await http.get("/v1/approvals", headers=ANA)).json()["approvals"]
        assert [(a["run_id"], a["call_id"]) for a in inbox] == [("rb", "c1")]
        events = await sse(http, "/v1/runs/ra/events", last=suspended[-1]["id"])
        assert [(e["event"], e["data"]["stop_reason"]) for e in events] == [
            ("final", "cancelled")]
        late = await http.post("/v1/runs/ra/decisions", json={"decisions": {"c1": "approve"}},
                               headers=ANA)
        assert (late.status_code, late.json()["error"]) == (409, {
            "type": "not_resumable",
            "message": "run 'ra' cannot be resumed: it is cancelled, not suspended"})
        assert (await http.get("/v1/runs/ra", headers=ANA)).json()["decisions"] == []
        assert shop.refunds == []


async def test_a_cancel_and_a_decision_at_once_have_one_winner(
    store: Any, make_app: MakeApp
) -> None:
    async with waiting_refund(make_app, store) as (shop, http):
        suspended = await sse(http, "/v1/runs/r1/events")
        cancel, decide = await asyncio.gather(
            http.post("/v1/runs/r1/cancel", headers=ANA),
            http.post("/v1/runs/r1/decisions", json={"decisions": {"c1": "approve"}},
                      headers=ANA))
        # One of the two takes the suspension. A cancel that lands after the decision
        # won, while the resumed run still advances, cancels that run instead (202 too).
        assert (cancel.status_code, decide.status_code) in ((202, 409), (409, 202), (202, 202))
        await sse(http, "/v1/runs/r1/events", last=suspended[-1]["id"])
        run = (await http.get("/v1/runs/r1", headers=ANA)).json()
        if decide.status_code == 409:
            assert (run["status"], run["decisions"], shop.refunds) == ("cancelled", [], [])
        else:
            assert [d["by"] for d in run["decisions"]] == ["ana"]
            assert shop.refunds in ([], [("A", 10)])  # once at most
            if cancel.status_code == 409:
                assert (run["status"], shop.refunds) == ("complete", [("A", 10)])
            else:
                assert run["status"] in ("cancelled", "complete")


async def test_sessions_list_and_show_their_conversation(store: Any, make_app: MakeApp) -> None:
    shop = Shop()
    llm = ByTask({"hi": [Turn(content="Hello!")]})
    app = await make_app([shop.support], context=context_for(llm, store), auth=TOKENS)
    async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
        await http.post("/v1/agents/support/runs", json={"input": "hi", "session": "s1",
                        "wait": True}, headers=ANA)
        assert (await http.get("/v1/sessions", headers=ANA)).json() == {"sessions": ["s1"]}
        shown = (await http.get("/v1/sessions/s1", headers=ANA)).json()
        assert [(m["role"], m["content"]) for m in shown["messages"]] == [
            ("user", "hi"), ("assistant", "Hello!")]
        missing = await http.get("/v1/sessions/nope", headers=ANA)
        assert (missing.status_code, missing.json()) == (404, {"error": {
            "type": "unknown_session", "message": "no session 'nope' is known here"}})


async def test_settings_given_at_start_reach_the_model_request(
    store: Any, make_app: MakeApp
) -> None:
    shop = Shop()
    llm = ByTask({"hi": [Turn(content="Hello!")]})
    app = await make_app([shop.support], context=context_for(llm, store), auth=TOKENS)
    async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
        done = await http.post("/v1/agents/support/runs", json={
            "input": "hi", "settings": {"temperature": 0.2, "max_tokens": 40},
            "wait": True}, headers=ANA)
        assert (done.status_code, done.json()["output"]) == (200, "Hello!")
        bad = await http.post("/v1/agents/support/runs", json={
            "input": "hi", "settings": {"warmth": 1}}, headers=ANA)
        assert bad.status_code == 400
    assert llm.fakes["hi"].requests[0].settings == ModelSettings(temperature=0.2,
                                                                  max_tokens=40)


async def test_media_parts_in_the_input_reach_the_model_whole(
    store: Any, make_app: MakeApp
) -> None:
    picture = Image(bytes(range(256)) * 800, "image/png")
    llm = ByTask({"look at these\nand this": [Turn(content="Seen.")]})
    app = await make_app([Shop().support], context=context_for(llm, store), auth=TOKENS)
    async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
        done = await http.post("/v1/agents/support/runs", json={"input": [
            {"type": "text", "text": "look at these"},
            {"type": "image", "data": base64.b64encode(picture.data).decode(),
             "media_type": "image/png"},
            {"type": "text", "text": "and this"},
            {"type": "file", "url": "https://example.com/q3.pdf",
             "media_type": "application/pdf", "name": "q3.pdf"}], "wait": True}, headers=ANA)
        assert (done.status_code, done.json()["output"]) == (200, "Seen.")

        async def refused(part: Any) -> str:
            answer = await http.post("/v1/agents/support/runs", json={"input": [part]},
                                     headers=ANA)
            assert answer.status_code == 400
            return str(answer.json()["error"]["message"])

        assert await refused({"type": "image", "media_type": "image/png"}) == (
            'part 0 (image) needs "data" (its bytes, in base64) or "url", one of them')
        assert await refused({"type": "image", "data": "not base64!",
                              "media_type": "image/png"}) == (
            'part 0 (image): "data" is not base64')
        assert await refused({"type": "audio", "url": "ftp://x/a.wav",
                              "media_type": "audio/wav"}) == (
            "part 0 (audio): Audio.url must be an http(s) URL, got 'ftp://x/a.wav'")
        assert await refused({"type": "image", "url": "https://x/a.png", "name": "a"}) == (
            "part 0 (image) has unknown field(s) ['name']; accepted: ['data', "
            "'media_type', 'type', 'url']")
        assert await refused({"type": "video"}) == (
            'part 0 is none of these: "input" must be text, or a list of parts: {"type": '
            '"text", "text": ...}, or {"type": "image" | "audio" | "file", "data": <base64> '
            'or "url": ..., "media_type": ...} (a file may have a "name")')
    [user] = [m for m in llm.fakes["look at these\nand this"].requests[0].messages
              if m.role == "user"]
    assert (user.content, user.attachments) == ("look at these\nand this", (
        picture, File(b"", "application/pdf", "q3.pdf", url="https://example.com/q3.pdf")))


async def test_the_trace_is_a_tree_of_the_runs_spans(
    store: Any, make_app: MakeApp, backend: str
) -> None:
    async with waiting_refund(make_app, store) as (_, http):
        trace = (await http.get("/v1/runs/r1/trace", headers=ANA)).json()
        assert (trace["run_id"], trace["dropped"]) == ("r1", 0)
        if backend == "temporal":  # a span per activity of the workflow's history
            (model,) = trace["spans"]
            assert (model["name"], model["error"], model["children"]) == ("model fake", None, [])
            assert model["attributes"] == {"temporal.activity": "agentkit.model_call"}
            assert model["duration"] >= 0
            return
        (root,) = trace["spans"]
        assert root["name"] == "invoke_agent support"
        assert root["attributes"]["agentkit.stop_reason"] == "suspended"
        assert [c["name"] for c in root["children"]][:1] == ["chat fake"]


async def test_every_error_is_json_with_its_status(store: Any, make_app: MakeApp) -> None:
    shop = Shop()
    llm = ByTask({"refund A": refund_turns("A", 10)})
    app = await make_app([shop.support], context=context_for(llm, store), auth=TOKENS,
                     max_body=1000)
    async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
        async def error(method: str, path: str, **kw: Any) -> tuple[int, dict[str, Any]]:
            response = await http.request(method, path, **{"headers": ANA, **kw})
            return response.status_code, response.json()["error"]

        assert await error("POST", "/v1/agents/nobody/runs", json={"input": "x"}) == (
            404, {"type": "unknown_agent", "message":
                  "no agent named 'nobody' is served here; agents served: ['support']"})
        assert await error("POST", "/v1/agents/support/runs", content=b"{nope") == (
            400, {"type": "bad_request", "message": "the body is not JSON: Expecting "
                  "property name enclosed in double quotes: line 1 column 2 (char 1)"})
        assert await error("POST", "/v1/agents/support/runs", json={"task": "x"}) == (
            400, {"type": "bad_request", "message": "unknown field(s) ['task']; accepted: "
                  "['input', 'run_id', 'session', 'settings', 'wait']"})
        assert await error("POST", "/v1/agents/support/runs", content=b"x" * 1001) == (
            413, {"type": "body_too_large", "message":
                  "the request body is 1001 bytes; at most 1000 are accepted"})
        assert await error("GET", "/v1/runs/nope") == (
            404, {"type": "unknown_run", "message": "no run 'nope' is known here"})
        assert await error("GET", "/v1/runs?limit=0") == (
            400, {"type": "bad_request", "message":
                  "limit must be an integer from 1 to 1000, got '0'"})
        assert (await error("GET", "/v1/runs?cursor=bad"))[0] == 400
        assert await error("GET", "/v1/approvals?kind=maybe") == (
            400, {"type": "bad_request", "message": "kind must be one of ['approval', "
                  "'question', 'outcome_unknown'], got 'maybe'"})
        assert await error("GET", "/v1/runs", headers={}) == (
            401, {"type": "unauthorized",
                  "message": "missing bearer token: send Authorization: Bearer <token>"})
        assert await error("GET", "/v1/runs", headers=bearer("wrong")) == (
            401, {"type": "unauthorized",
                  "message": "unknown bearer token: send Authorization: Bearer <token>"})
        assert await error("GET", "/v1/runs", headers={**ANA, "host": "evil.example:80"}) == (
            421, {"type": "forbidden_host", "message": "Host header 'evil.example:80' is not "
                  "a loopback name; a server reached by another name needs create_app(..., "
                  "allowed_hosts=[...]) (agentkit serve --allow-host)"})
        port = url.rpartition(":")[2]
        assert await error("GET", "/v1/runs", headers={**ANA, "origin": "http://evil.example"}
                           ) == (403, {"type": "forbidden_origin", "message": "Origin "
                           "'http://evil.example' may not call this server; allowed origins: "
                           f"['http://127.0.0.1:{port}', 'https://127.0.0.1:{port}']"})
        await start(http, "refund A", "r1")
        assert await error("POST", "/v1/runs/r1/decisions", json={"decisions": {"c1": "approve"}},
                           headers=bearer("tok-viewer")) == (
            403, {"type": "forbidden", "message":
                  "principal 'viewer' may not decide for runs; run 'r1' is unchanged"})
        assert await error("POST", "/v1/runs/r1/decisions", json={"c1": "approve"}) == (
            400, {"type": "bad_request", "message": 'the body must be {"decisions": {<call '
                  'id>: <decision>}}, as Agent.resume takes them'})
        assert await error("GET", "/v1/runs/r1", headers=bearer("tok-other")) == (
            404, {"type": "unknown_run", "message": "no run 'r1' is known here"})
        assert await error("GET", "/v1/runs/r1/events", headers={**ANA,
                           "last-event-id": "x"}) == (400, {"type": "bad_request", "message":
                           "Last-Event-ID must be an event id (a number), got 'x'"})
        assert (await http.get("/healthz")).json() == {"status": "ok"}
        assert shop.refunds == []


async def test_a_principal_sees_only_the_runs_of_its_scopes(store: Any, make_app: MakeApp) -> None:
    shop = Shop()
    llm = ByTask({"hi": [Turn(content="one")], "ho": [Turn(content="two")]})
    tokens = {**TOKENS, "tok-one": Principal("one", scopes=(Scope(1, 1).key(),))}
    first = await make_app([shop.support], context=context_for(llm, store), auth=tokens)
    second = await make_app([shop.support], context=context_for(llm, store, Scope(2, 2)),
                        auth=tokens)
    async with served(first) as one, served(second) as two, \
            httpx2.AsyncClient(base_url=one) as http, httpx2.AsyncClient(base_url=two) as other:
        await start(http, "hi", "r1")
        await other.post("/v1/agents/support/runs", json={"input": "ho", "run_id": "r2",
                         "wait": True}, headers=ANA)
        mine = (await http.get("/v1/runs", headers=bearer("tok-one"))).json()
        assert [r["run_id"] for r in mine["runs"]] == ["r1"]
        everything = (await http.get("/v1/runs", headers=ANA)).json()
        assert [r["run_id"] for r in everything["runs"]] == ["r2", "r1"]
        hidden = await http.get("/v1/runs/r2", headers=bearer("tok-one"))
        assert hidden.status_code == 404


async def test_agents_and_the_openapi_document_describe_what_is_served(
    store: Any, make_app: MakeApp
) -> None:
    shop = Shop()
    app = await make_app([shop.support], context=context_for(ByTask({}), store), auth=TOKENS)
    async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
        (agent,) = (await http.get("/v1/agents", headers=ANA)).json()["agents"]
        assert (agent["name"], agent["model"]) == ("support", "fake")
        tools = {t["name"]: t for t in agent["tools"]}
        assert {name: t["traits"]["side_effecting"] for name, t in tools.items()} == {
            "refund": True, "ask_billing": False, "slow_lookup": False}
        assert tools["refund"]["parameters"]["required"] == ["order_id", "usd"]
        assert tools["refund"]["description"] == (
            "Refund part of a customer order, in whole dollars, to the card used.")
        document = (await http.get("/openapi.json")).json()
        assert document["openapi"] == "3.1.0"
        described = {(path, method) for path, item in document["paths"].items()
                     for method in item}
        assert described >= {
            ("/healthz", "get"), ("/openapi.json", "get"), ("/v1/agents", "get"),
            ("/v1/agents/{agent}/runs", "post"), ("/v1/runs", "get"),
            ("/v1/runs/{run_id}", "get"), ("/v1/runs/{run_id}/events", "get"),
            ("/v1/runs/{run_id}/trace", "get"), ("/v1/runs/{run_id}/decisions", "post"),
            ("/v1/runs/{run_id}/cancel", "post"), ("/v1/approvals", "get"),
            ("/v1/sessions", "get"), ("/v1/sessions/{session_id}", "get")}


async def test_a_run_that_raises_ends_its_events_and_its_record_says_error(
    store: Any, make_app: MakeApp
) -> None:
    counting = Agent("counter", "fake", "Answer with a number.", output=int,
                     max_output_repairs=0, cognition=ReActCognition([]))
    llm = ByTask({"count": [Turn(content="many")]})
    app = await make_app([counting], context=context_for(llm, store), auth=TOKENS)
    async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
        await http.post("/v1/agents/counter/runs", json={"input": "count", "run_id": "r1"},
                        headers=ANA)
        events = await sse(http, "/v1/runs/r1/events")
        final = events[-1]["data"]
        assert (final["kind"], final["stop_reason"]) == ("final", "error")
        assert final["error"].startswith("OutputCoercionError: ")
        run = (await http.get("/v1/runs/r1", headers=ANA)).json()
        assert run["status"] == "error"


@pytest.mark.parametrize("backend", STORES)  # recovery by the intent rules: in-process
async def test_a_second_server_on_the_store_leaves_a_run_another_advances_alone(
    store: Any, make_app: MakeApp
) -> None:
    shop = Shop()
    llm = ByTask({"look": [Turn(tool_calls=(ToolCall("c1", "slow_lookup", {"order_id": "A"}),)),
                           Turn(content="It shipped.")]})
    first = await make_app([shop.support], context=context_for(llm, store), auth=TOKENS)
    second = await make_app([shop.support], context=context_for(llm, store), auth=TOKENS)
    async with served(first) as url, httpx2.AsyncClient(base_url=url) as http:
        await http.post("/v1/agents/support/runs", json={"input": "look", "run_id": "r1"},
                        headers=ANA)
        async with served(second) as other, httpx2.AsyncClient(base_url=other) as peer:
            seen = await sse(peer, "/v1/runs/r1/events")
            assert [e["data"] for e in seen] == [{"kind": "status", "status": "running"}]
        shop.release.set()
        events = await sse(http, "/v1/runs/r1/events")
        assert events[-1]["data"]["output"] == "It shipped."
        assert len(llm.fakes["look"].requests) == 2  # advanced once, by the first server
