"""The console's safety over plain HTTP: sign-in by token into an HttpOnly, SameSite=Strict
cookie that only the pages accept, CSRF on every POST, the Host check, a principal that
may not decide sees the inbox read-only, and loopback dev mode without tokens."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from agentkit.state.stores.memory import InMemoryStore
from agentkit.state.stores.sqlite import SQLiteStore
from tests.serve.served import (
    ENGINES,
    TOKENS,
    ByTask,
    Shop,
    apps_on,
    bearer,
    context_for,
    create_app,
    refund_turns,
    served,
    start,
)


@pytest.fixture
async def shop_url(tmp_path: Path) -> AsyncIterator[tuple[Shop, str]]:
    """The shop served with tokens, with run ``ra`` suspended on a refund of A."""
    shop = Shop()
    store = SQLiteStore(tmp_path / "runs.db")
    app = create_app([shop.support], auth=TOKENS,
                     context=context_for(ByTask({"refund A": refund_turns("A", 10)}), store))
    async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
        started = await http.post("/v1/agents/support/runs", headers=bearer("tok-ana"),
                                  json={"input": "refund A", "run_id": "ra", "wait": True})
        assert started.json()["status"] == "suspended"
        yield shop, url
    store.close()


async def sign_in(http: httpx2.AsyncClient, token: str) -> httpx2.Response:
    form = (await http.get("/sign-in")).text
    csrf = re.search(r'name="csrf_token" value="([0-9a-f]+)"', form)
    assert csrf is not None
    return await http.post("/sign-in", data={"token": token, "next": "/inbox",
                                             "csrf_token": csrf.group(1)})


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf_token" value="([0-9a-f]+)"', page)
    assert found is not None
    return found.group(1)


async def test_a_token_pasted_once_signs_in_by_a_cookie_the_api_does_not_accept(
    shop_url: tuple[Shop, str],
) -> None:
    _, url = shop_url
    async with httpx2.AsyncClient(base_url=url) as http:
        away = await http.get("/inbox?kind=approval")
        assert (away.status_code, away.headers["location"]) == (
            303, "/sign-in?next=%2Finbox%3Fkind%3Dapproval")
        wrong = await sign_in(http, "tok-nobody")
        assert wrong.status_code == 401
        assert "This server accepts no such token." in wrong.text
        signed = await sign_in(http, "tok-ana")
        assert (signed.status_code, signed.headers["location"]) == (303, "/inbox")
        cookie = signed.headers["set-cookie"]
        assert cookie.startswith("agentkit_console=tok-ana;")
        assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
        inbox = await http.get("/inbox")
        assert inbox.status_code == 200 and "signed in as ana" in inbox.text
        assert inbox.headers["content-security-policy"].startswith("default-src 'none';")
        api = await http.get("/v1/runs")  # the cookie is the console's, not the API's
        assert api.status_code == 401
        outside = await http.get("/sign-in?next=//evil.example/")
        assert 'name="next" value="/"' in outside.text


async def test_every_post_needs_its_csrf_token_and_nothing_runs_without_it(
    shop_url: tuple[Shop, str],
) -> None:
    shop, url = shop_url
    async with httpx2.AsyncClient(base_url=url) as http:
        await sign_in(http, "tok-ana")
        page = (await http.get("/inbox")).text
        decision = {"call_id": "c1", "action": "approve"}
        refused = await http.post("/inbox/ra/decide", data=decision,
                                  headers={"hx-request": "true"})
        assert refused.status_code == 403
        assert refused.text == (
            '<div class="refused" role="alert"><strong>403 csrf</strong>: this form lacks its '
            "CSRF token (the X-CSRF-Token header or the csrf_token field); reload the page "
            "and try again</div>")
        forged = await http.post("/inbox/ra/decide", data={**decision, "csrf_token": "00" * 32})
        assert forged.status_code == 403
        assert (await http.get("/v1/runs/ra", headers=bearer("tok-ana"))).json()[
            "status"] == "suspended"
        assert shop.refunds == []
        taken = await http.post("/inbox/ra/decide", data=decision,
                                headers={"hx-request": "true", "x-csrf-token": csrf_of(page)})
        assert taken.status_code == 200
        assert "Approved by ana; the run goes on." in taken.text


async def test_the_host_check_holds_for_the_pages(shop_url: tuple[Shop, str]) -> None:
    _, url = shop_url
    async with httpx2.AsyncClient(base_url=url) as http:
        rebound = await http.get("/sign-in", headers={"host": "evil.example"})
        assert rebound.status_code == 421
        assert rebound.json()["error"]["type"] == "forbidden_host"
        foreign = await http.post("/sign-in", headers={"origin": "http://evil.example"},
                                  data={"token": "tok-ana"})
        assert foreign.status_code == 403


async def test_a_principal_that_may_not_decide_sees_the_inbox_read_only(
    shop_url: tuple[Shop, str],
) -> None:
    shop, url = shop_url
    async with httpx2.AsyncClient(base_url=url) as http:
        await sign_in(http, "tok-viewer")
        page = (await http.get("/inbox")).text
        assert "Read-only: viewer may not decide for runs." in page
        assert "refund" in page and "<button class=approve>" not in page
        refused = await http.post("/inbox/ra/decide", headers={"hx-request": "true"}, data={
            "call_id": "c1", "action": "approve", "csrf_token": csrf_of(page)})
        assert refused.status_code == 403
        assert "principal &#x27;viewer&#x27; may not decide for runs" in refused.text
    assert shop.refunds == []


async def test_without_tokens_a_loopback_console_needs_no_sign_in(tmp_path: Path) -> None:
    shop = Shop()
    store = SQLiteStore(tmp_path / "runs.db")
    app: Any = create_app([shop.support], context=context_for(ByTask({}), store))
    async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
        runs = await http.get("/")
        assert runs.status_code == 200 and "<h1>Runs</h1>" in runs.text
        assert "Sign out" not in runs.text
        assert (await http.get("/sign-in")).headers["location"] == "/"
        assert (await http.get("/static/htmx.LICENSE")).text.startswith("Zero-Clause BSD")
    store.close()


@pytest.mark.parametrize("engine", ENGINES)
async def test_the_run_page_shows_the_runs_transcript_on_every_engine(
    engine: str, request: pytest.FixtureRequest
) -> None:
    shop = Shop()
    store = InMemoryStore()
    async with apps_on(engine, request, store) as make:
        app = await make([shop.support], auth=TOKENS,
                         context=context_for(ByTask({"refund A": refund_turns("A", 10)}), store))
        async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
            assert (await start(http, "refund A", "ra")).json()["status"] == "suspended"
            await sign_in(http, "tok-ana")
            page = (await http.get("/runs/ra")).text
    transcript = re.search(r'<ol class="transcript">.*?</ol>', page, re.DOTALL)
    assert transcript is not None
    assert re.findall(r'<li class="m-(\w+)">', transcript.group()) == ["user", "assistant"]
    assert '<div class="text">refund A</div>' in transcript.group()
    assert '<strong>refund</strong> <code>[c1]</code>' in transcript.group()
