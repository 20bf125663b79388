"""One headless Chromium for the whole test session, from the pinned npm package
``@sparticuz/chromium`` (a whole browser in its tarball: no apt, no download at run
time), driven by Playwright's Python driver with ``executable_path=``.

The package unpacks its browser into ``os.tmpdir()`` on first use and reuses it after;
it is pointed at an ignored folder of this checkout (``.venv/chromium``), under a file
lock, so parallel test workers unpack it once. Every page of a test runs in a context
that routes any request not to loopback to an error and records it: a test ends by
asserting that list is empty, proving the console fetched nothing from outside.
"""

from __future__ import annotations

import fcntl
import os
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import pytest_asyncio
from node_tools import ROOT, NodeTools
from playwright.async_api import Browser, BrowserContext, Route, async_playwright

ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage"]
SCREENSHOTS = "AGENTKIT_CONSOLE_SCREENSHOTS"
"""A folder to copy each page's screenshot into as well (``docs/images``)."""


@pytest.fixture(scope="session")
def chromium_path(node_tools: NodeTools) -> str:
    """The unpacked Chromium of ``@sparticuz/chromium``, as its own code finds it."""
    package = node_tools.module("@sparticuz/chromium") / "build" / "index.js"
    folder = ROOT / ".venv" / "chromium"
    folder.mkdir(parents=True, exist_ok=True)
    script = (f"import C from {package.as_uri()!r}; "
              "console.log(await C.executablePath())")
    with (folder / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = subprocess.run(
            [str(node_tools.node), "--input-type=module", "-e", script],
            env={**node_tools.env, "TMPDIR": str(folder)}, capture_output=True, text=True,
            check=True, timeout=300,
        )
    return done.stdout.strip().splitlines()[-1]


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def browser(chromium_path: str) -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=chromium_path, args=ARGS)
        yield launched
        await launched.close()


class Outside:
    """Requests the pages tried to make to anywhere but loopback (each refused)."""

    def __init__(self) -> None:
        self.urls: list[str] = []

    async def route(self, route: Route) -> None:
        url = route.request.url
        host = urlsplit(url).hostname or ""
        if url.startswith(("data:", "blob:")) or host in ("127.0.0.1", "localhost", "::1"):
            await route.continue_()
        else:
            self.urls.append(url)
            await route.abort("blockedbyclient")


@pytest.fixture
def outside() -> Outside:
    return Outside()


async def new_context(browser: Browser, outside: Outside, **options: Any) -> BrowserContext:
    """A fresh browser profile whose every request off loopback is refused and noted."""
    context = await browser.new_context(viewport={"width": 1280, "height": 860}, **options)
    context.set_default_timeout(15_000)
    await context.route("**/*", outside.route)
    return context


@pytest.fixture
def shots(tmp_path: Path) -> Any:
    """``shots(page, name)`` writes ``console-<name>.png`` under the test's output (and
    into ``$AGENTKIT_CONSOLE_SCREENSHOTS`` when set); returns the path."""
    async def shoot(page: Any, name: str) -> Path:
        path = tmp_path / f"console-{name}.png"
        await page.screenshot(path=str(path), full_page=True)
        copy_to = os.environ.get(SCREENSHOTS)
        if copy_to:
            Path(copy_to).mkdir(parents=True, exist_ok=True)
            (Path(copy_to) / path.name).write_bytes(path.read_bytes())
        return path
    return shoot
