"""The console in a real headless Chromium against a real uvicorn server: the runs page
updates live, the inbox approves, rejects with a reason, refuses a bad edit in place,
tells the loser of two deciders, model output stays text, a sub-agent's trace nests,
and no page fetches anything from outside. Each test writes its pages' screenshots.

Regenerate the docs' images from them with
``AGENTKIT_CONSOLE_SCREENSHOTS=docs/images .venv/bin/python -m pytest -n 0 tests/serve/console``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx2
import pytest
from playwright.async_api import Browser, Page, expect

from agentkit.core.contracts.types import ToolCall
from agentkit.core.testing import Turn
from agentkit.state.stores.sqlite import SQLiteStore
from agentkit.tools import tool
from tests.serve.console.conftest import Outside, new_context
from tests.serve.served import (
    DEADLINE,
    TOKENS,
    ByTask,
    Shop,
    bearer,
    context_for,
    create_app,
    nested_turns,
    refund_turns,
    served,
)

pytestmark = pytest.mark.asyncio(loop_scope="session")

ANA = bearer("tok-ana")


@contextlib.asynccontextmanager
async def console(shop: Shop, scripts: Mapping[str, Sequence[Turn]], tmp_path: Path,
                  starts: Sequence[tuple[str, str, bool]] = (), *, agents: Any = None,
                  session: str | None = None) -> AsyncIterator[tuple[str, httpx2.AsyncClient]]:
    """The served shop on SQLite with the runs ``starts`` names (run id, task, wait) begun
    over the API; the base URL and an API client signed in as ana."""
    store = SQLiteStore(tmp_path / "runs.db")
    app = create_app(agents or [shop.support], context=context_for(ByTask(scripts), store),
                     auth=TOKENS)
    async with served(app) as url, httpx2.AsyncClient(base_url=url, headers=ANA,
                                                      timeout=DEADLINE) as http:
        for run_id, task, wait in starts:
            body: dict[str, Any] = {"input": task, "run_id": run_id, "wait": wait}
            if session is not None:
                body["session"] = session
            started = await http.post("/v1/agents/support/runs", json=body)
            assert started.status_code in (200, 202), started.text
        yield url, http
    store.close()


async def signed_in(browser: Browser, outside: Outside, url: str, path: str,
                    token: str = "tok-ana", **options: Any) -> Page:
    """A new browser profile signed in with ``token`` by the sign-in form, at ``path``."""
    context = await new_context(browser, outside, **options)
    page = await context.new_page()
    await page.goto(url + path)
    await expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    await page.get_by_label("Token").fill(token)
    await page.get_by_role("button", name="Sign in").click()
    await page.wait_for_url(url + path)
    return page


def row(page: Page, run_id: str) -> Any:
    return page.locator(f'tr[data-run="{run_id}"]')


async def test_the_runs_page_lists_three_runs_and_a_live_run_updates_without_reload(
    browser: Browser, outside: Outside, tmp_path: Path, shots: Any,
) -> None:
    shop = Shop()
    look = [Turn(tool_calls=(ToolCall("c1", "slow_lookup", {"order_id": "L"}),)),
            Turn(content="It has shipped.")]
    scripts = {"hello": [Turn(content="Hi there.")], "refund A": refund_turns("A", 10),
               "look L": look}
    starts = [("r-hello", "hello", True), ("r-refund", "refund A", True),
              ("r-look", "look L", False)]
    async with console(shop, scripts, tmp_path, starts) as (url, _):
        page = await signed_in(browser, outside, url, "/")
        cookie = next(c for c in await page.context.cookies() if c["name"] == "agentkit_console")
        assert (cookie["httpOnly"], cookie["sameSite"]) == (True, "Strict")
        await expect(page.locator("#runs tr")).to_have_count(3)
        await expect(row(page, "r-hello").locator(".status")).to_have_text("complete")
        await expect(row(page, "r-refund").locator(".status")).to_have_text("suspended")
        await expect(row(page, "r-look").locator(".status")).to_have_text("running")
        await shots(page, "runs")
        await page.evaluate("window.notReloaded = true")
        run = await page.context.new_page()
        await run.goto(url + "/runs/r-look")
        await expect(run.locator(".facts .status")).to_have_text("running")
        await run.evaluate("window.notReloaded = true")
        shop.release.set()
        await expect(row(page, "r-look").locator(".status")).to_have_text("complete")
        assert await page.evaluate("window.notReloaded") is True
        await expect(run.locator(".facts .status")).to_have_text("complete")
        await expect(run.locator(".m-assistant .text").last).to_have_text("It has shipped.")
        await expect(run.locator(".timeline .label").first).to_have_text("agent support")
        assert await run.evaluate("window.notReloaded") is True
        await page.get_by_label("Status").select_option("suspended")
        await page.get_by_role("button", name="Show").click()
        await expect(page.locator("#runs tr")).to_have_count(1)
        await page.get_by_label("Run id").fill("r-hello")
        await page.get_by_label("Status").select_option("")
        await page.get_by_role("button", name="Show").click()
        await expect(page.locator("#runs tr td:first-child")).to_have_text(["r-hello"])
    assert outside.urls == []


async def test_approve_in_the_inbox_completes_a_suspended_run_and_the_tool_ran_once(
    browser: Browser, outside: Outside, tmp_path: Path, shots: Any,
) -> None:
    shop = Shop()
    scripts = {"refund A": refund_turns("A", 10), "refund B": refund_turns("B", 20),
               **nested_turns("C")}
    starts = [("ra", "refund A", True), ("rb", "refund B", True), ("rc", "delegate C", True)]
    async with console(shop, scripts, tmp_path, starts) as (url, _):
        page = await signed_in(browser, outside, url, "/inbox")
        groups = page.locator("section.run-group")
        await expect(groups).to_have_count(3)
        nested = groups.filter(has=page.locator("code", has_text="c1/s1"))
        await expect(nested.locator(".meta")).to_contain_text("asked by support › billing")
        await shots(page, "inbox")
        item = groups.filter(has_text="ra").locator("li.waiting")
        await item.get_by_role("button", name="Approve", exact=True).click()
        await expect(page.locator("li.decided")).to_contain_text(
            "Approved by ana; the run goes on.")
        await page.goto(url + "/runs/ra")
        await expect(page.locator(".facts .status")).to_have_text("complete")
        assert shop.refunds == [("A", 10)]
        await expect(page.locator(".m-tool pre, .m-tool .text").first).to_contain_text(
            "refunded 10 USD on A")
        await shots(page, "run")
    assert outside.urls == []


async def test_reject_in_the_inbox_ends_the_call_with_the_reason(
    browser: Browser, outside: Outside, tmp_path: Path,
) -> None:
    shop = Shop()
    scripts = {"refund A": [refund_turns("A", 10)[0], Turn(content="Not refunded.")]}
    async with console(shop, scripts, tmp_path, [("ra", "refund A", True)]) as (url, http):
        page = await signed_in(browser, outside, url, "/inbox")
        await page.get_by_label("Reason").fill("the order was never paid")
        await page.get_by_role("button", name="Reject").click()
        await expect(page.locator("li.decided")).to_contain_text("Rejected by ana")
        await page.goto(url + "/runs/ra")
        await expect(page.locator(".facts .status")).to_have_text("complete")
        await expect(page.locator(".m-tool")).to_contain_text(
            "not approved by a human, so it did not run. Do not retry it unchanged; continue "
            "without it or ask differently. The reason given: the order was never paid")
        decided = (await http.get("/v1/runs/ra")).json()["decisions"]
        assert [(d["decision"], d["by"]) for d in decided] == [
            ("reject: the order was never paid", "ana")]
    assert shop.refunds == []
    assert outside.urls == []


async def test_edited_arguments_that_do_not_fit_the_schema_are_refused_in_the_page(
    browser: Browser, outside: Outside, tmp_path: Path,
) -> None:
    shop = Shop()
    async with console(shop, {"refund A": refund_turns("A", 10)}, tmp_path,
                       [("ra", "refund A", True)]) as (url, http):
        page = await signed_in(browser, outside, url, "/inbox")
        arguments = page.get_by_label("Arguments (JSON)")
        await arguments.fill('{"order_id": "A", "usd": "lots"}')
        await page.get_by_role("button", name="Approve with these arguments").click()
        refused = page.locator("li.waiting .refused")
        await expect(refused).to_have_text(
            "Refused, nothing ran: run 'ra': the edited arguments of call 'c1' do not fit "
            "the tool's schema: $.usd: expected integer, got string; nothing ran and the "
            "run still waits")
        await expect(page.get_by_label("Arguments (JSON)")).to_have_value(
            '{"order_id": "A", "usd": "lots"}')
        assert (await http.get("/v1/runs/ra")).json()["status"] == "suspended"
        await page.get_by_label("Arguments (JSON)").fill('{"order_id": "A", "usd": 7}')
        await page.get_by_role("button", name="Approve with these arguments").click()
        await expect(page.locator("li.decided")).to_contain_text(
            "Approved with edited arguments by ana")
        await page.goto(url + "/runs/ra")
        await expect(page.locator(".facts .status")).to_have_text("complete")
    assert shop.refunds == [("A", 7)]
    assert outside.urls == []


async def test_two_browsers_approving_one_call_have_one_winner_and_the_other_is_told(
    browser: Browser, outside: Outside, tmp_path: Path,
) -> None:
    shop = Shop()
    async with console(shop, {"refund A": refund_turns("A", 10)}, tmp_path,
                       [("ra", "refund A", True)]) as (url, _):
        first = await signed_in(browser, outside, url, "/inbox")
        second = await signed_in(browser, outside, url, "/inbox")
        await first.get_by_role("button", name="Approve", exact=True).click()
        await expect(first.locator("li.decided")).to_contain_text("Approved by ana")
        await second.get_by_role("button", name="Approve", exact=True).click()
        await expect(second.locator("li.refused")).to_contain_text(
            "Decided elsewhere in the meantime, so not changed here: run 'ra'")
        await first.goto(url + "/runs/ra")
        await expect(first.locator(".facts .status")).to_have_text("complete")
    assert shop.refunds == [("A", 10)]
    assert outside.urls == []


async def test_a_script_a_tool_returns_stays_text_on_every_page(
    browser: Browser, outside: Outside, tmp_path: Path,
) -> None:
    payload = "<script>alert(1)</script>"

    @tool(side_effecting=False)
    def fetch_note(order_id: str) -> str:
        """Fetch the customer's note on an order, exactly as they typed it."""
        return payload

    from agentkit.agents import Agent
    from agentkit.agents.cognition import ReActCognition

    agent = Agent("support", "fake", "You help.", cognition=ReActCognition([fetch_note]))
    scripts = {payload: [Turn(tool_calls=(ToolCall("c1", "fetch_note", {"order_id": payload}),)),
                         Turn(content=payload)]}
    async with console(Shop(), scripts, tmp_path, [("rx", payload, True)],
                       agents=[agent]) as (url, _):
        page = await signed_in(browser, outside, url, "/runs/rx")
        dialogs: list[str] = []
        page.on("dialog", lambda dialog: dialogs.append(dialog.message))
        await expect(page.locator(".m-tool .text")).to_have_text(payload)
        await expect(page.locator(".m-user .text")).to_have_text(payload)
        assert await page.locator("main script").count() == 0
        await page.goto(url + "/")
        await expect(row(page, "rx").locator(".status")).to_have_text("complete")
    assert dialogs == []
    assert outside.urls == []


async def test_the_trace_timeline_of_a_run_with_a_sub_agent_shows_the_nesting(
    browser: Browser, outside: Outside, tmp_path: Path, shots: Any,
) -> None:
    shop = Shop()
    async with console(shop, nested_turns("C"), tmp_path,
                       [("rc", "delegate C", True)]) as (url, http):
        decided = await http.post("/v1/runs/rc/decisions",
                                  json={"decisions": {"c1/s1": "approve"}})
        assert decided.status_code == 202
        page = await signed_in(browser, outside, url, "/runs/rc")
        await expect(page.locator(".facts .status")).to_have_text("complete")
        spans = page.locator(".timeline .span")
        labels = [text.strip() for text in await spans.locator(".label").all_inner_texts()]
        depths = [int(d) for d in await spans.evaluate_all(
            "rows => rows.map(r => r.dataset.depth)")]
        shown = list(zip(labels, depths, strict=True))
        assert shown[:5] == [("agent support", 0), ("model call · fake", 1),
                             ("tool ask_billing [c1]", 1), ("agent billing", 2),
                             ("model call · fake", 3)]
        assert ("tool refund [s1]", 3) in shown
        await shots(page, "trace")
    assert shop.refunds == [("C", 5)]
    assert outside.urls == []


async def test_sessions_and_costs_pages_and_reading_with_javascript_off(
    browser: Browser, outside: Outside, tmp_path: Path, shots: Any,
) -> None:
    shop = Shop()
    # One conversation: the model is asked by the session's first user message both times.
    scripts = {"hello": [Turn(content="Hi there."), Turn(content="Hi again.")]}
    starts = [("t1", "hello", True), ("t2", "and again", True)]
    async with console(shop, scripts, tmp_path, starts, session="chat-1") as (url, _):
        page = await signed_in(browser, outside, url, "/sessions/chat-1")
        await expect(page.locator(".bubble")).to_have_text(
            ["hello", "Hi there.", "and again", "Hi again."])
        await expect(page.locator(".turn h2 a")).to_have_text(["run t1", "run t2"])
        await shots(page, "session")
        await page.goto(url + "/costs")
        await expect(page.locator("figure.chart")).to_have_count(3)
        await expect(page.locator("table").first.locator("tbody td").first).to_have_text(
            "support")
        await shots(page, "costs")
        still = await signed_in(browser, outside, url, "/", java_script_enabled=False)
        await expect(still.locator("#runs tr")).to_have_count(2)
        await still.goto(url + "/runs/t1")
        await expect(still.locator(".m-assistant .text")).to_have_text("Hi there.")
    assert outside.urls == []


def _png() -> bytes:
    """A valid 2x2 red PNG."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * 2 for _ in range(2))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


async def test_attachments_show_inline_or_as_links_and_reasoning_is_collapsed(
    browser: Browser, outside: Outside, tmp_path: Path,
) -> None:
    from agentkit.core.contracts.media import File, Image
    from agentkit.core.policies import tracing
    from agentkit.core.testing import FakeLLM, make_test_ctx
    from tests.serve.served import HOME

    shop = Shop()
    async with console(shop, {}, tmp_path) as (url, http):
        # A run started by Agent.run on the same store: the registry lists it too.
        store = SQLiteStore(tmp_path / "runs.db")
        llm = FakeLLM.script([Turn(content="A red square and an invoice.",
                                   reasoning="The user wants the picture described.")])
        ctx = make_test_ctx(llm=llm, store=store, scope=HOME, correlation_id="rm",
                            chat_middleware=[tracing()])
        pdf = b"%PDF-1.4 a tiny invoice"
        done = await shop.support.run(
            ["What is in these?", Image(_png(), "image/png"),
             File(pdf, "application/pdf", "invoice.pdf"),
             Image.from_url("https://images.example.com/far-away.png")], ctx)
        assert done.stop_reason == "complete"
        store.close()
        page = await signed_in(browser, outside, url, "/runs/rm")
        image = page.locator(".m-user figure.media img")
        await expect(image).to_have_attribute("src", "/runs/rm/attachments/0/0")
        assert await image.evaluate("img => img.complete && img.naturalWidth") == 2
        link = page.locator(".m-user a.media")
        await expect(link).to_have_text(f"invoice.pdf, {len(pdf)} bytes")
        served_pdf = await http.get(await link.get_attribute("href") or "")
        assert (served_pdf.content, served_pdf.headers["content-type"]) == (
            pdf, "application/pdf")
        await expect(page.locator(".m-user span.media")).to_have_text(
            "image (image/png): https://images.example.com/far-away.png (by address)")
        thought = page.locator("details.reasoning pre")
        await expect(thought).to_be_hidden()
        await page.locator("details.reasoning summary").click()
        await expect(thought).to_have_text("The user wants the picture described.")
        assert outside.urls == []
        # The guard itself: a request off loopback is refused and noted.
        with pytest.raises(Exception, match="ERR_BLOCKED_BY_CLIENT"):
            await page.goto("https://cdn.example.com/htmx.min.js")
    assert outside.urls == ["https://cdn.example.com/htmx.min.js"]
