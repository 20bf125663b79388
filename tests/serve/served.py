"""A real uvicorn server on a free port for the app under test, and the agents it serves."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx2
import pytest
import uvicorn

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ChatRequest, LLMResult, Scope, StreamEvent, ToolCall
from agentkit.core.policies import tracing
from agentkit.core.runtime import RunContext
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.serve import Principal, create_app
from agentkit.state.stores.memory import InMemoryStore
from agentkit.state.stores.postgres import PostgresStore
from agentkit.state.stores.sqlite import SQLiteStore
from agentkit.tools import as_tool, tool

DEADLINE = 20.0
"""Seconds a test waits on the server before it fails instead of hanging."""


class ByTask:
    """A model that answers each run from the script of its task (the run's first user
    message), so concurrent runs never take each other's turns."""

    def __init__(self, scripts: Mapping[str, Sequence[Turn]]) -> None:
        self.fakes = {task: FakeLLM.script(turns) for task, turns in scripts.items()}

    def _fake(self, request: ChatRequest) -> FakeLLM:
        task = next(m.content for m in request.messages if m.role == "user")
        return self.fakes[task]

    async def chat(self, request: ChatRequest, ctx: RunContext) -> LLMResult:
        return await self._fake(request).chat(request, ctx)

    def stream(self, request: ChatRequest, ctx: RunContext) -> AsyncIterator[StreamEvent]:
        return self._fake(request).stream(request, ctx)


class Shop:
    """Agents whose tools count every execution: ``support`` delegates refunds to
    ``billing`` (a nested run), and both may refund directly."""

    def __init__(self) -> None:
        self.refunds: list[tuple[str, int]] = []
        self.release = asyncio.Event()

        @tool(side_effecting=True)
        def refund(order_id: str, usd: int) -> str:
            """Refund part of a customer order, in whole dollars, to the card used."""
            self.refunds.append((order_id, usd))
            return f"refunded {usd} USD on {order_id}"

        @tool(side_effecting=False)
        async def slow_lookup(order_id: str) -> str:
            """Look an order up in the slow warehouse system and return its status."""
            await self.release.wait()
            return "shipped"

        self.billing = Agent("billing", "fake", "You refund.", cognition=ReActCognition([refund]))
        delegate = as_tool(self.billing, name="ask_billing", side_effecting=False,
                           description="Ask the billing team to handle a refund request.")
        self.support = Agent("support", "fake", "You help.",
                             cognition=ReActCognition([refund, delegate, slow_lookup]))


def refund_turns(order: str, usd: int, call_id: str = "c1") -> list[Turn]:
    return [Turn(tool_calls=(ToolCall(call_id, "refund", {"order_id": order, "usd": usd}),)),
            Turn(content=f"Refunded {order}.")]


def nested_turns(order: str) -> dict[str, list[Turn]]:
    """The outer task delegates; billing's task (what the outer model asked) refunds."""
    inner = f"refund {order} for 5 USD"
    return {
        f"delegate {order}": [
            Turn(tool_calls=(ToolCall("c1", "ask_billing", {"task": inner}),)),
            Turn(content=f"Billing handled {order}."),
        ],
        inner: [*refund_turns(order, 5, "s1")[:1], Turn(content="done")],
    }


async def open_store(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> Any:
    if kind == "memory":
        return InMemoryStore()
    if kind == "sqlite":
        return SQLiteStore(tmp_path / "runs.db")
    dsn = request.getfixturevalue("postgres_dsn")
    return PostgresStore(dsn, schema=request.getfixturevalue("postgres_schema"), pool_size=4)


async def close_store(store: Any) -> None:
    close = getattr(store, "close", None)
    if close is None:
        return
    done = close()
    if asyncio.iscoroutine(done):
        await done


HOME = Scope(org_id=1, domain_id=1)


def context_for(llm: Any, store: Any, scope: Scope = HOME) -> Callable[[], RunContext]:
    return lambda: make_test_ctx(llm=llm, store=store, autonomy="gated", scope=scope,
                                 tool_middleware=[tracing()], chat_middleware=[tracing()])


class _Server(uvicorn.Server):
    """uvicorn, telling when it listens."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.listening = asyncio.Event()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.listening.set()


@contextlib.asynccontextmanager
async def served(app: Any) -> AsyncIterator[str]:
    """``app`` on a real uvicorn server on a free loopback port; its base URL."""
    async with served_as(lambda _: app) as url:
        yield url


@contextlib.asynccontextmanager
async def served_as(make: Callable[[str], Any]) -> AsyncIterator[str]:
    """The app ``make(base_url)`` builds (one that must know its own address, as an A2A
    agent card names it), on a real uvicorn server on a free loopback port; its base URL."""
    sock = socket.socket()
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    # A stream a failed test left open must not hold the shutdown (and the test) for ever.
    server = _Server(uvicorn.Config(make(url), log_level="warning", lifespan="on",
                                    timeout_graceful_shutdown=5))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        async with asyncio.timeout(DEADLINE):
            await server.listening.wait()
        yield url
    finally:
        server.should_exit = True
        await task
        sock.close()


MakeApp = Callable[..., Awaitable[Any]]
"""``await make(agents, context=..., **create_app_options)``: an app on an engine."""

ENGINES = ["in-process", "temporal"]
"""The engines a face is proven on: runs in the server's process, or Temporal workflows
(a real dev server and a real worker in this process, sharing the context's store)."""


@contextlib.asynccontextmanager
async def apps_on(engine: str, request: pytest.FixtureRequest, store: Any
                  ) -> AsyncIterator[MakeApp]:
    """Makes apps on ``engine``; on Temporal, each with a worker hosting the same agents
    on a task queue of its own, and the runs ``store``'s registry lists ended when the
    block ends (workflow ids are the dev server's for the session, so the next test may
    use the same run ids)."""
    async with contextlib.AsyncExitStack() as stack:
        if engine == "temporal":
            stack.push_async_callback(_terminate_runs, request, store)

        async def make(agents: Any, *, context: Any, **options: Any) -> Any:
            if engine != "temporal":
                return create_app(agents, context=context, **options)
            from temporalio.client import Client

            from agentkit.integrations.temporal import AgentWorker
            from agentkit.serve.temporal import TemporalEngine

            client = await Client.connect(request.getfixturevalue("temporal_address"))
            queue = f"serve-{uuid.uuid4().hex[:12]}"
            hosted = [a for a in agents if isinstance(a, Agent)]  # Workflows: the server's
            await stack.enter_async_context(AgentWorker(
                client, task_queue=queue, agents=hosted, context=context))
            return create_app(agents, context=context,
                              engine=TemporalEngine(client, task_queue=queue), **options)

        yield make


@contextlib.asynccontextmanager
async def client_on(engine: str, request: pytest.FixtureRequest, store: Any,
                    agents: Sequence[Any], context: Callable[[], RunContext]
                    ) -> AsyncIterator[httpx2.AsyncClient]:
    """A client of ``agents`` served with :data:`TOKENS` on ``engine`` (see
    :func:`apps_on`), their runs in ``store``."""
    async with apps_on(engine, request, store) as make, served(
        await make(agents, context=context, auth=TOKENS)
    ) as url, httpx2.AsyncClient(base_url=url) as http:
        yield http


async def _terminate_runs(request: pytest.FixtureRequest, store: Any) -> None:
    from temporalio.client import Client
    from temporalio.service import RPCError

    from agentkit.core.contracts.runs import RunQuery

    client = await Client.connect(request.getfixturevalue("temporal_address"))
    for record in (await store.list_runs(RunQuery(limit=1000))).records:
        with contextlib.suppress(RPCError):
            await client.get_workflow_handle(record.run_id).terminate("test over")


OPERATOR = Principal("ana")
VIEWER = Principal("viewer", can_decide=False)
TOKENS = {"tok-ana": OPERATOR, "tok-viewer": VIEWER,
          "tok-other": Principal("other", scopes=("org9:dom9",))}


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def sse(http: httpx2.AsyncClient, url: str, last: str | None = None) -> list[dict[str, Any]]:
    """Every event of a stream until the server ends it: id, event name and data."""
    headers = {**bearer("tok-ana"), **({"last-event-id": last} if last is not None else {})}
    events: list[dict[str, Any]] = []
    # The stream may idle between events for longer than httpx's 5 s read timeout on a
    # loaded machine; the test's own DEADLINE bounds it instead.
    async with asyncio.timeout(DEADLINE), http.stream(
        "GET", url, headers=headers, timeout=DEADLINE
    ) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        current: dict[str, Any] = {}
        async for line in response.aiter_lines():
            if not line:
                if current:
                    events.append(current)
                current = {}
                continue
            field, _, value = line.partition(": ")
            current[field] = json.loads(value) if field == "data" else value
    return events



async def start(http: httpx2.AsyncClient, task: Any, run_id: str | None = None, *,
                agent: str = "support", token: str = "tok-ana") -> httpx2.Response:
    """Start a run of ``agent`` on ``task`` (as run ``run_id``) over the JSON API and wait
    until it suspends or ends: the server's answer."""
    body = {"input": task, **({} if run_id is None else {"run_id": run_id}), "wait": True}
    return await http.post(f"/v1/agents/{agent}/runs", json=body, headers=bearer(token))



async def decide_at_once(http: httpx2.AsyncClient, run_id: str, decisions: dict[str, Any]
                         ) -> list[httpx2.Response]:
    """The same decisions for ``run_id`` from two deciders at the same moment: both
    answers, the lower status first (the winner's 202 before the loser's 409)."""
    body = {"decisions": decisions}
    answers = await asyncio.gather(*(
        http.post(f"/v1/runs/{run_id}/decisions", json=body, headers=bearer("tok-ana"))
        for _ in range(2)))
    return sorted(answers, key=lambda answer: answer.status_code)



@contextlib.asynccontextmanager
async def waiting_refund(
    make: MakeApp, store: Any, *, context: Callable[..., Callable[[], RunContext]] = context_for
) -> AsyncIterator[tuple[Shop, httpx2.AsyncClient]]:
    """The shop served by ``make`` (its runs in ``store``, each run's context from
    ``context(llm, store)``) with run ``r1`` waiting for approval of a refund of A: the
    shop and a client of the server."""
    shop = Shop()
    llm = ByTask({"refund A": refund_turns("A", 10)})
    app = await make([shop.support], context=context(llm, store), auth=TOKENS)
    async with served(app) as url, httpx2.AsyncClient(base_url=url) as http:
        assert (await start(http, "refund A", "r1")).json()["status"] == "suspended"
        yield shop, http


__all__ = [
    "ENGINES",
    "ByTask",
    "MakeApp",
    "Shop",
    "apps_on",
    "context_for",
    "create_app",
    "decide_at_once",
    "served",
    "served_as",
    "sse",
    "start",
]
