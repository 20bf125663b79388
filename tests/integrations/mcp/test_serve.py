"""agentkit tools served over MCP, driven by the official SDK's client."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult, TextContent

from agentkit.agents import Agent
from agentkit.core.assembly import make_ctx
from agentkit.core.contracts.types import ToolRequest
from agentkit.core.policies import Budget, audit, idempotent, meter
from agentkit.core.runtime import RunContext
from agentkit.core.testing import FakeLLM
from agentkit.integrations.mcp import RUN_ID_META, build_server
from agentkit.state.stores.memory import InMemoryStore
from agentkit.tools import as_tool, tool

LIMIT = 20  # seconds any one test may take

LISTING = [
    {
        "name": "city_population",
        "description": "Look up the most recent census population for a named city.",
        "inputSchema": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
        "annotations": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True},
    },
    {
        "name": "get_quote",
        "description": "Return the latest traded price for a stock ticker symbol.",
        "inputSchema": {
            "type": "object",
            "properties": {"symbol": {"type": "string"}},
            "required": ["symbol"],
        },
        "outputSchema": {
            "type": "object",
            "properties": {"symbol": {"type": "string"}, "price": {"type": "number"}},
            "required": ["symbol", "price"],
        },
        "annotations": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True},
    },
    {
        "name": "refund",
        "description": "Issue a refund against a customer order and return the confirmation id.",
        "inputSchema": {
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "amount_usd": {"type": "number"}},
            "required": ["order_id", "amount_usd"],
        },
        "annotations": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False},
        "_meta": {"agentkit/requiresApproval": True},
    },
    {
        "name": "send_email",
        "description": "Send one email to a single recipient and return the provider message id.",
        "inputSchema": {
            "type": "object",
            "properties": {"to": {"type": "string"}, "body": {"type": "string"}},
            "required": ["to", "body"],
        },
        "annotations": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False},
    },
]


def text_of(result: CallToolResult) -> tuple[bool, str]:
    """``(is_error, text)`` of a result with one text block."""
    [block] = result.content
    assert isinstance(block, TextContent)
    return result.is_error, block.text


def agentkit_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "agentkit", "mcp", "serve", *args]


async def test_official_client_lists_and_calls_tools_served_by_the_cli_over_stdio(
    agentkit_tools: Path, effects: Path
) -> None:
    command = agentkit_command(str(agentkit_tools))
    server = StdioServerParameters(
        command=command[0], args=command[1:], env={"EFFECTS_FILE": str(effects)}
    )
    async with asyncio.timeout(LIMIT), Client(server) as client:
        assert client.server_info is not None and client.server_info.name == "shop_tools"
        listing = (await client.list_tools()).tools
        population = await client.call_tool("city_population", {"city": "Lisbon"})
        bad = await client.call_tool("city_population", {"town": "Lisbon"})
        sends = [
            await client.call_tool("send_email", {"to": "ops@example.com", "body": "down"})
            for _ in range(2)
        ]
        refund = await client.call_tool("refund", {"order_id": "A-1", "amount_usd": 20.0})
        quote = await client.call_tool("get_quote", {"symbol": "ACME"})
        unknown = await client.call_tool("city_size", {"city": "Lisbon"})

    assert [t.model_dump(by_alias=True, exclude_none=True) for t in listing] == LISTING
    assert text_of(population) == (False, "545000")
    assert text_of(bad) == (True, (
        "tool 'city_population' call rejected: missing required argument(s) ['city']; "
        "unexpected argument(s) ['town']. Accepted arguments: ['city']"
    ))
    assert [text_of(s) for s in sends] == [(False, "queued for ops@example.com")] * 2
    assert effects.read_text().splitlines() == ["email ops@example.com"]  # one effect
    assert text_of(refund) == (True, (
        "tool 'refund' needs a human's approval and this MCP server has no way to ask for it, "
        "so the call did not run. A person can approve it only when the server is started "
        "from Python with serve(..., approve=callback); the agentkit mcp serve command cannot "
        "ask anyone"
    ))
    assert text_of(quote) == (False, '{"symbol": "ACME", "price": 12.5}')
    assert quote.structured_content == {"symbol": "ACME", "price": 12.5}
    assert text_of(unknown) == (True, (
        "no tool named 'city_size'. Available tools: "
        "['city_population', 'get_quote', 'refund', 'send_email']"
    ))


SERVE_WITH_IDEMPOTENT = '''
import sys

from agentkit.core.policies import idempotent
from agentkit.integrations.mcp import serve
from shop_tools import send_email

serve([send_email], name="mailer", tool_middleware=[idempotent()])
'''


async def test_a_retried_side_effect_has_one_effect_per_session_under_idempotent(
    agentkit_tools: Path, effects: Path, script: Callable[[str, str], Path]
) -> None:
    path = script("serve_mailer.py", SERVE_WITH_IDEMPOTENT)
    server = StdioServerParameters(
        command=sys.executable, args=[str(path)], env={"EFFECTS_FILE": str(effects)}
    )
    email = {"to": "ops@example.com", "body": "prod is down"}
    async with asyncio.timeout(LIMIT):
        async with Client(server) as client:
            [sent] = (await client.list_tools()).tools
            first = await client.call_tool("send_email", email)
            retried = await client.call_tool("send_email", email)
            other = await client.call_tool("send_email", {**email, "to": "cto@example.com"})
        assert effects.read_text().splitlines() == [
            "email ops@example.com", "email cto@example.com"
        ]
        async with Client(server) as client:  # a new session is a new run: it really sends
            await client.call_tool("send_email", email)

    assert sent.name == "send_email"
    assert text_of(first) == text_of(retried) == (False, "queued for ops@example.com")
    assert text_of(other) == (False, "queued for cto@example.com")
    assert effects.read_text().splitlines() == [
        "email ops@example.com", "email cto@example.com", "email ops@example.com"
    ]


async def test_the_cli_serves_streamable_http_with_one_run_per_session(
    agentkit_tools: Path, effects: Path, http_server: Callable[[Sequence[str]], str]
) -> None:
    url = http_server(agentkit_command(str(agentkit_tools), "--http", "127.0.0.1:{port}"))
    email = {"to": "ops@example.com", "body": "down"}
    async with asyncio.timeout(LIMIT):
        async with Client(url, mode="legacy") as client:  # Mcp-Session-Id names the session
            assert [t.name for t in (await client.list_tools()).tools] == [
                t["name"] for t in LISTING
            ]
            population = await client.call_tool("city_population", {"city": "Porto"})
            for _ in range(2):
                await client.call_tool("send_email", email)
        assert len(effects.read_text().splitlines()) == 1
        async with Client(url) as client:  # 2026 single exchanges: no session at all ...
            for _ in range(2):
                await client.call_tool("send_email", email)
        assert len(effects.read_text().splitlines()) == 3
        async with Client(url) as client:  # ... unless the caller names its run
            for _ in range(2):
                await client.call_tool("send_email", email, meta={RUN_ID_META: "run-7"})
        assert len(effects.read_text().splitlines()) == 4

    assert text_of(population) == (False, "231000")


# -- in process: the policies every call goes through --------------------------------


@tool(side_effecting=True)
def transfer(account: str, amount_usd: float) -> str:
    """Move money from the operating account to another account."""
    return f"moved {amount_usd} to {account}"


@tool(side_effecting=False, url_arg="url")
def fetch(url: str) -> str:
    """Fetch a web page and return its text, for reading documentation."""
    return f"contents of {url}"


@tool(side_effecting=False)
def divide(a: float, b: float) -> float:
    """Divide one number by another and return the quotient."""
    return a / b


async def call(server: Any, name: str, arguments: dict[str, Any], run: str | None = None) -> Any:
    meta: Any = None if run is None else {RUN_ID_META: run}
    async with asyncio.timeout(LIMIT), Client(server) as client:
        return text_of(await client.call_tool(name, arguments, meta=meta))


async def test_approval_callback_decides_calls_that_need_a_human() -> None:
    asked: list[tuple[str, dict[str, Any]]] = []

    async def approve(request: ToolRequest) -> bool:
        asked.append((request.name, dict(request.arguments)))
        return request.arguments["amount_usd"] < 100

    def gated(run_id: str) -> RunContext:
        return make_ctx(FakeLLM(), correlation_id=run_id, autonomy="gated")

    server = build_server([transfer, divide], ctx_factory=gated, approve=approve)
    refused_outright = build_server([transfer], ctx_factory=gated)

    assert await call(server, "transfer", {"account": "B", "amount_usd": 50}) == (
        False, "moved 50.0 to B"
    )
    assert await call(server, "transfer", {"account": "B", "amount_usd": 500}) == (True, (
        "the call to 'transfer' was not approved by a human, so it did not run. "
        "Do not retry it unchanged"
    ))
    assert await call(server, "divide", {"a": 1, "b": 4}) == (False, "0.25")  # not gated
    assert asked == [("transfer", {"account": "B", "amount_usd": 50}),
                     ("transfer", {"account": "B", "amount_usd": 500})]
    ok, message = await call(refused_outright, "transfer", {"account": "B", "amount_usd": 5})
    assert (ok, message.startswith("tool 'transfer' needs a human's approval")) == (True, True)


async def test_failures_come_back_as_tool_errors_with_agentkit_messages() -> None:
    server = build_server([fetch, divide])

    assert await call(server, "divide", {"a": 1, "b": 0}) == (
        True, "tool 'divide' failed: ZeroDivisionError: float division by zero"
    )
    assert await call(server, "divide", {"a": "one", "b": 2}) == (True, (
        "tool 'divide' call rejected: invalid argument(s): a: expected a number, got string "
        "'one'. Accepted arguments: ['a', 'b']"
    ))
    assert await call(server, "fetch", {"url": "http://127.0.0.1/admin"}) == (True, (
        "tool 'fetch' call refused: argument 'url' = 'http://127.0.0.1/admin' is not allowed: "
        "127.0.0.1 is a loopback address"
    ))


async def test_a_budget_holds_across_the_calls_of_one_run() -> None:
    budgets: dict[str, Budget] = {}

    def metered(run_id: str) -> RunContext:
        budgets[run_id] = Budget(max_calls=2)
        return make_ctx(FakeLLM(), correlation_id=run_id, budget=budgets[run_id],
                        tool_middleware=[meter()])

    server = build_server([divide], ctx_factory=metered)
    results = [await call(server, "divide", {"a": 6, "b": 3}, run="r1") for _ in range(3)]

    assert results[:2] == [(False, "2.0")] * 2
    assert results[2] == (True, (
        "budget exceeded: tool call 'divide' refused: calls would reach 3 over the ceiling of 2"
    ))
    assert list(budgets) == ["mcp-run-r1"]


async def test_each_call_without_a_session_or_run_id_is_its_own_run() -> None:
    store = InMemoryStore()
    server = build_server([divide], store=store, tool_middleware=[audit()])
    for run in (None, None, "r9", "r9"):
        await call(server, "divide", {"a": 1, "b": 2}, run=run)

    runs = [record.run_id for record in await store.list("audit")]
    assert runs[0].startswith("mcp-call-") and runs[1].startswith("mcp-call-")
    assert runs[0] != runs[1]
    assert runs[2:] == ["mcp-run-r9", "mcp-run-r9"]


async def test_a_served_tool_that_needs_a_model_gets_a_clear_error() -> None:
    researcher = as_tool(
        Agent(name="researcher", model="fake", prompt="You research."),
        name="researcher",
        description="Delegate a research sub-task and get a one-sentence summary back.",
        side_effecting=False,
    )
    server = build_server([researcher])

    assert await call(server, "researcher", {"task": "octopuses"}) == (True, (
        "this agentkit MCP server has no model: a served tool called ctx.llm. Serve with "
        "serve(..., ctx_factory=...) returning a context built on a real model"
    ))


async def test_a_named_run_replays_its_repeated_side_effect() -> None:
    sent: list[str] = []

    @tool(side_effecting=True)
    def notify(msg: str) -> str:
        """Page the on-call engineer with a short incident message."""
        sent.append(msg)
        return f"paged: {msg}"

    server = build_server([notify], tool_middleware=[audit(), idempotent()])
    for run in ("a", "a", "b"):
        assert await call(server, "notify", {"msg": "db down"}, run=run) == (
            False, "paged: db down"
        )
    assert sent == ["db down", "db down"]


def test_build_server_refuses_what_is_not_a_tool() -> None:
    with pytest.raises(ValueError, match="is not a Tool"):
        build_server([object()])  # type: ignore[list-item]
