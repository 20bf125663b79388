"""Console benchmarks: the pages a browser asks for, at the sizes the issue names.

Run with ``.venv/bin/python bench/console.py``. A real uvicorn server on a free loopback
port serves one agent over a SQLite store, without tokens (loopback dev mode), and
httpx2 asks for the console's pages as a browser would, one at a time; medians of 20
(of 5 for the long run).

- **Runs page at 10,000 runs**: ``GET /`` (a page of 50), the first page and one from a
  cursor 5,000 deep, beside the JSON API's ``GET /v1/runs?limit=50`` for the same page.
- **Inbox with 1,000 pending**: ``GET /inbox`` (50 suspended runs a page).
- **Costs over 11,000 runs**: ``GET /costs``, which sums every record the viewer sees.
- **A 1,000-step run**: a run that made 1,000 model calls (999 tool calls, then an
  answer), traced: ``GET /runs/{id}``, whose transcript holds 2,000 messages and whose
  timeline draws 2,000 spans (the trace's cap). The issue asks for under one second.
  This run is made and served on an ``InMemoryStore`` (see :func:`main`).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx2

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.runs import RunQuery
from agentkit.core.contracts.types import ToolCall
from agentkit.core.policies import tracing
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.serve import create_app
from agentkit.state.stores import InMemoryStore
from agentkit.state.stores.sqlite import SQLiteStore
from agentkit.state.traces import TraceRecorder, save_trace

sys.path.insert(0, str(Path(__file__).parent))
from serve import AGENT, SCOPE, fill, noop, serve, timed  # bench/serve.py

STEPS = 1000


async def long_run(store: Any) -> str:
    """A traced run of :data:`STEPS` model calls on ``store``; its id."""
    turns = [Turn(tool_calls=(ToolCall(f"c{i}", "noop", {"x": f"step {i}"}),))
             for i in range(STEPS - 1)]
    llm = FakeLLM.script([*turns, Turn(content="Done after a thousand steps.")])
    agent = Agent("bench", "fake", "You answer.",
                  cognition=ReActCognition([noop], max_iterations=STEPS + 1))
    recorder = TraceRecorder("long")
    ctx = make_test_ctx(llm=llm, store=store, scope=SCOPE, correlation_id="long",
                        tracer=recorder, tool_middleware=[tracing()],
                        chat_middleware=[tracing()])
    result = await agent.run("go", ctx)
    assert result.stop_reason == "complete" and result.steps == STEPS, result.stop_reason
    await save_trace(store, recorder.trace())
    return "long"


async def main() -> None:
    med = statistics.median
    with tempfile.TemporaryDirectory() as folder:
        async with SQLiteStore(Path(folder) / "console.db") as store:
            await fill(store, 10_000, "complete", "done-")
            await fill(store, 1_000, "suspended", "wait-")
            app = create_app([AGENT], context=lambda: make_test_ctx(
                llm=FakeLLM(reply="x"), store=store, scope=SCOPE))
            server, task, url = await serve(app)
            async with httpx2.AsyncClient(base_url=url, timeout=60) as http:
                async def get(path: str) -> Any:
                    response = await http.get(path)
                    assert response.status_code == 200, response.text[:300]
                    return response

                cursor = None
                for _ in range(5):
                    cursor = (await store.list_runs(RunQuery(limit=1000,
                                                             cursor=cursor))).next_cursor
                first = [await timed(get("/")) for _ in range(20)]
                deep = [await timed(get(f"/?cursor={cursor}")) for _ in range(20)]
                api = [await timed(get(f"/v1/runs?limit=50&cursor={cursor}"))
                       for _ in range(20)]
                inbox = [await timed(get("/inbox")) for _ in range(20)]
                costs = [await timed(get("/costs")) for _ in range(5)]
            server.should_exit = True
            await task
    # The long run is made on an InMemoryStore: on SQLite its 1,000 checkpoints, each
    # rewriting a transcript that grows by two messages a step, take minutes to write.
    memory = InMemoryStore()
    started = time.perf_counter()
    run_id = await long_run(memory)
    print(f"a {STEPS}-step run made in {time.perf_counter() - started:.1f} s")
    app = create_app([AGENT], context=lambda: make_test_ctx(
        llm=FakeLLM(reply="x"), store=memory, scope=SCOPE))
    server, task, url = await serve(app)
    async with httpx2.AsyncClient(base_url=url, timeout=60) as http:
        page = await http.get(f"/runs/{run_id}")
        assert page.text.count('class="span ') == 2000, page.text.count('class="span ')
        long_page = [await timed(http.get(f"/runs/{run_id}")) for _ in range(5)]
        size = len(page.content)
    server.should_exit = True
    await task
    print(f"runs page of 50 at 11,000 runs: first {med(first) * 1e3:.1f} ms, 5,000 deep "
          f"{med(deep) * 1e3:.1f} ms (GET /v1/runs, same page: {med(api) * 1e3:.1f} ms)")
    print(f"inbox page with 1,000 pending: {med(inbox) * 1e3:.1f} ms")
    print(f"costs over 11,000 runs: {med(costs) * 1e3:.0f} ms")
    print(f"run page of a {STEPS}-step run (2,000 messages, 2,000 spans, {size / 1e6:.1f} MB): "
          f"{med(long_page) * 1e3:.0f} ms")
    print(f"python {sys.version.split()[0]}")


if __name__ == "__main__":
    asyncio.run(main())
