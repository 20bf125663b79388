"""Issue 24: a running run's timeline updates live (the in-process engine shows the
spans so far of the runs it advances), and the API's trace says the same."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, expect

from agentkit.core.contracts.types import ToolCall
from agentkit.core.testing import Turn
from tests.serve.console.conftest import Outside
from tests.serve.console.test_browser import console, signed_in
from tests.serve.served import Shop

pytestmark = pytest.mark.asyncio(loop_scope="session")


def names(spans: list[dict[str, Any]]) -> list[str]:
    return [n for s in spans for n in (s["name"], *names(s["children"]))]


async def test_a_running_runs_timeline_shows_its_spans_so_far_and_grows_without_reload(
    browser: Browser, outside: Outside, tmp_path: Path,
) -> None:
    shop = Shop()
    look = [Turn(tool_calls=(ToolCall("c1", "slow_lookup", {"order_id": "L"}),)),
            Turn(content="It has shipped.")]
    async with console(shop, {"look L": look}, tmp_path,
                       [("r-look", "look L", False)]) as (url, http):
        page = await signed_in(browser, outside, url, "/runs/r-look")
        await expect(page.locator(".facts .status")).to_have_text("running")
        labels = page.locator(".timeline .span .label")
        # Held inside slow_lookup: the model call that asked for it is on the timeline,
        # and the tool call, still open.
        await expect(labels).to_have_text(["agent support", "model call · fake",
                                           "tool slow_lookup [c1]"])
        held = (await http.get("/v1/runs/r-look/trace")).json()
        assert names(held["spans"]) == ["invoke_agent support", "chat fake",
                                        "execute_tool slow_lookup"]
        ((agent_span,),) = [held["spans"]]
        assert [c["duration"] is None for c in agent_span["children"]] == [False, True]
        await page.evaluate("window.notReloaded = true")
        shop.release.set()
        await expect(page.locator(".facts .status")).to_have_text("complete")
        # The answer after the tool came in without a reload.
        await expect(labels).to_have_text(["agent support", "model call · fake",
                                           "tool slow_lookup [c1]", "model call · fake"])
        assert await page.evaluate("window.notReloaded") is True
        done = (await http.get("/v1/runs/r-look/trace")).json()
        assert names(done["spans"]) == ["invoke_agent support", "chat fake",
                                        "execute_tool slow_lookup", "chat fake"]
    assert outside.urls == []
