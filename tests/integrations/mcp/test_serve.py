"""agentkit tools served over MCP, driven by the official SDK's client."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult, TextContent

from agentkit.core.assembly import make_ctx
from agentkit.core.contracts.types import ToolRequest
from agentkit.core.policies import Budget, audit, meter
from agentkit.core.runtime import RunContext
from agentkit.core.testing import FakeLLM
from agentkit.integrations.mcp import RUN_ID_META, build_server
from agentkit.state.stores.memory import InMemoryStore
from agentkit.tools import tool

LIMIT = 20  # seconds any one test may take

LISTING = [
    {
        "name": "city_population",
        "description": "Look up the most recent census population for a named city.",
        "inputSchema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True},
    },
    {
        "name": "get_quote",
        "description": "Return the latest traded price for a stock ticker symbol.",
        "inputSchema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {"symbol": {"type": "string"}},
            "required": ["symbol"],
            "additionalProperties": False,
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
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "amount_usd": {"type": "number"}},
            "required": ["order_id", "amount_usd"],
            "additionalProperties": False,
        },
        "annotations": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False},
        "_meta": {"agentkit/requiresApproval": True},
    },
    {
        "name": "send_email",
        "description": "Send one email to a single recipient and return the provider message id.",
        "inputSchema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {"to": {"type": "string"}, "body": {"type": "string"}},
            "required": ["to", "body"],
            "additionalProperties": False,
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
    # Two requests are two intended sends, even with the same arguments.
    assert effects.read_text().splitlines() == ["email ops@example.com"] * 2
    assert text_of(refund) == (True, (
        "tool 'refund' needs a human's approval and this MCP server has no way to ask for it "
        "(the client does not support elicitation), so the call did not run. A person can "
        "approve it through a client that supports elicitation, or when the server is started "
        "from Python with serve(..., approve=callback)"
    ))
    assert text_of(quote) == (False, '{"symbol": "ACME", "price": 12.5}')
    assert quote.structured_content == {"symbol": "ACME", "price": 12.5}
    assert text_of(unknown) == (True, (
        "no tool named 'city_size'. Available tools: "
        "['city_population', 'get_quote', 'refund', 'send_email']"
    ))


COUNTER = '''
import asyncio

from agentkit.tools import tool

COUNT = {"value": 0}


@tool(side_effecting=True)
async def bump() -> int:
    """Add one to the shared counter and return its new value."""
    await asyncio.sleep(0.05)
    COUNT["value"] += 1
    return COUNT["value"]
'''


async def test_concurrent_side_effecting_calls_in_one_session_each_run(
    script: Callable[[str, str], Path], http_server: Callable[[Sequence[str]], str]
) -> None:
    """Three concurrent bumps from one client's session are three intended bumps."""
    path = script("counter.py", COUNTER)
    url = http_server(agentkit_command(str(path), "--http", "127.0.0.1:{port}"))
    async with asyncio.timeout(LIMIT), Client(url, mode="legacy") as client:
        results = await asyncio.gather(*(client.call_tool("bump", {}) for _ in range(3)))
        after = await client.call_tool("bump", {})

    assert sorted(text_of(r) for r in results) == [(False, "1"), (False, "2"), (False, "3")]
    assert text_of(after) == (False, "4")


async def post(http: Any, url: str, message: dict[str, Any], session: str | None) -> Any:
    headers = {"accept": "application/json, text/event-stream",
               "mcp-protocol-version": "2025-11-25"}
    if session is not None:
        headers["mcp-session-id"] = session
    response = await http.post(url, json=message, headers=headers)
    assert response.status_code in (200, 202), response.text
    return response


def rpc_result(response: Any) -> Any:
    """The JSON-RPC result of a response sent as JSON or as server-sent events."""
    if response.headers.get("content-type", "").startswith("application/json"):
        return response.json()["result"]
    for line in response.text.splitlines():
        if line.startswith("data:") and '"result"' in line:
            return json.loads(line[5:])["result"]
    raise AssertionError(f"no result in {response.text!r}")


async def test_a_retried_json_rpc_request_replays_and_a_new_request_runs(
    agentkit_tools: Path, effects: Path, http_server: Callable[[Sequence[str]], str]
) -> None:
    """Idempotency is keyed on the client's request identity: the same request id in
    the same session is a retry (answered from the first result); a new id is a new
    call, even with the same arguments."""
    url = http_server(agentkit_command(str(agentkit_tools), "--http", "127.0.0.1:{port}"))
    email = {"name": "send_email", "arguments": {"to": "ops@example.com", "body": "down"}}
    async with asyncio.timeout(LIMIT), httpx2.AsyncClient() as http:
        opened = await post(http, url, {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                                        "params": {"protocolVersion": "2025-11-25",
                                                   "capabilities": {},
                                                   "clientInfo": {"name": "t", "version": "1"}}},
                            None)
        session = opened.headers["mcp-session-id"]
        await post(http, url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
        first = rpc_result(await post(http, url, {"jsonrpc": "2.0", "id": 7,
                                                  "method": "tools/call", "params": email},
                                      session))
        retried = rpc_result(await post(http, url, {"jsonrpc": "2.0", "id": 7,
                                                    "method": "tools/call", "params": email},
                                        session))
        assert effects.read_text().splitlines() == ["email ops@example.com"]
        rpc_result(await post(http, url, {"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                                          "params": email}, session))

    assert first == retried
    assert first["content"] == [{"type": "text", "text": "queued for ops@example.com"}]
    assert effects.read_text().splitlines() == ["email ops@example.com"] * 2


async def test_a_client_sending_another_clients_session_id_does_not_join_its_run(
    agentkit_tools: Path, effects: Path, http_server: Callable[[Sequence[str]], str]
) -> None:
    """Session-less HTTP (the 2026 single exchange): the Mcp-Session-Id header is the
    caller's word, so it never picks a run, and an unauthenticated caller's run id
    ties nothing together."""
    url = http_server(agentkit_command(str(agentkit_tools), "--http", "127.0.0.1:{port}"))
    email = {"to": "ops@example.com", "body": "down"}
    sessions: list[str] = []

    async def remember(response: Any) -> None:
        if "mcp-session-id" in response.headers:
            sessions.append(response.headers["mcp-session-id"])

    async with asyncio.timeout(LIMIT):
        async with httpx2.AsyncClient(event_hooks={"response": [remember]}) as http, Client(
            with_http(url, http), mode="legacy"
        ) as victim:
            await victim.call_tool("send_email", email, meta={RUN_ID_META: "run-1"})
            async with httpx2.AsyncClient(
                headers={"mcp-session-id": sessions[0]}
            ) as stolen, Client(with_http(url, stolen)) as intruder:
                await intruder.call_tool("send_email", email, meta={RUN_ID_META: "run-1"})
                await intruder.call_tool("send_email", email, meta={RUN_ID_META: "run-1"})

    # Nothing was answered from the victim's records: all three really sent.
    assert effects.read_text().splitlines() == ["email ops@example.com"] * 3


@asynccontextmanager
async def with_http(url: str, http: Any) -> AsyncIterator[Any]:
    async with streamable_http_client(url, http_client=http) as streams:
        yield streams


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
    async with asyncio.timeout(LIMIT), Client(server) as client:
        results = [
            text_of(await client.call_tool("divide", {"a": 6, "b": 3}, meta={RUN_ID_META: "r1"}))
            for _ in range(3)
        ]

    assert results[:2] == [(False, "2.0")] * 2
    assert results[2] == (True, (
        "budget exceeded: tool call 'divide' refused: calls would reach 3 over the ceiling of 2"
    ))
    assert list(budgets) == ["mcp-local/run-r1"]  # in process: the embedding app's run


async def test_each_connection_is_a_session_and_each_session_a_run() -> None:
    store = InMemoryStore()
    server = build_server([divide], store=store, tool_middleware=[audit()])
    for _ in range(2):
        async with asyncio.timeout(LIMIT), Client(server, mode="legacy") as client:
            for _ in range(2):
                await client.call_tool("divide", {"a": 1, "b": 2})
    async with asyncio.timeout(LIMIT), Client(server) as client:  # 2026: no sessions
        for _ in range(2):
            await client.call_tool("divide", {"a": 1, "b": 2})

    runs = [record.run_id for record in await store.list("audit")]
    assert runs[0] == runs[1] and runs[2] == runs[3] and runs[0] != runs[2]
    assert runs[0].startswith("mcp-session-")
    assert runs[4].startswith("mcp-call-") and runs[5].startswith("mcp-call-")
    assert len(set(runs)) == 4


def test_build_server_refuses_what_is_not_a_tool() -> None:
    with pytest.raises(ValueError, match="is not a Tool"):
        build_server([object()])  # type: ignore[list-item]
