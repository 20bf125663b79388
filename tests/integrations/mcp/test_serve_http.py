"""Who may reach `agentkit mcp serve --http`: bearer tokens, loopback-only by default,
and the Host/Origin checks against DNS rebinding."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import httpx2
import pytest

from agentkit.cli import main
from agentkit.integrations.mcp import build_server, connect_http
from agentkit.integrations.mcp.http_access import BearerAuth
from agentkit.integrations.mcp.server import http_app

LIMIT = 20
TOKEN = "s3cret-7f2a9c41d6e8b0"
INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "probe", "version": "1"}},
}
ACCEPT = {"accept": "application/json, text/event-stream"}


def serve_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "agentkit", "mcp", "serve", *args]


async def test_a_token_protected_server_answers_401_without_the_token(
    agentkit_tools: Path, http_server: Callable[[Sequence[str]], str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SHOP_MCP_TOKEN", TOKEN)
    url = http_server(serve_command(str(agentkit_tools), "--http", "127.0.0.1:{port}",
                                    "--token-env", "SHOP_MCP_TOKEN"))
    async with asyncio.timeout(LIMIT), httpx2.AsyncClient() as http:
        missing = await http.post(url, json=INITIALIZE, headers=ACCEPT)
        wrong = await http.post(url, json=INITIALIZE,
                                headers={**ACCEPT, "authorization": f"Bearer {TOKEN}x"})
        right = await http.post(url, json=INITIALIZE,
                                headers={**ACCEPT, "authorization": f"Bearer {TOKEN}"})
    async with asyncio.timeout(LIMIT), connect_http(
        url, headers={"Authorization": f"Bearer {TOKEN}"}
    ) as session:
        names = [t.name for t in await session.list_tools()]

    assert (missing.status_code, missing.headers["www-authenticate"]) == (
        401, 'Bearer realm="mcp", error="invalid_token"')
    assert missing.json() == {"error": "unauthorized", "error_description":
                              "missing bearer token: send Authorization: Bearer <token>"}
    assert (wrong.status_code, wrong.json()["error_description"]) == (
        401, "invalid bearer token: send Authorization: Bearer <token>")
    assert right.status_code == 200
    assert names == ["city_population", "get_quote", "refund", "send_email"]


def test_a_non_loopback_address_needs_a_token_or_an_explicit_insecure_flag(
    agentkit_tools: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delenv("UNSET_TOKEN_VAR", raising=False)
    tools = str(agentkit_tools)
    assert main(["mcp", "serve", tools, "--http", "192.0.2.10:8000"]) == 2
    assert main(["mcp", "serve", tools, "--http", "0.0.0.0:8000", "--insecure-no-auth"]) == 2
    assert main(["mcp", "serve", tools, "--http", "127.0.0.1:8000", "--token-env",
                 "UNSET_TOKEN_VAR"]) == 2
    assert main(["mcp", "serve", tools, "--token-env", "SHOP_MCP_TOKEN"]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "agentkit: error: --http 192.0.2.10:8000: refusing to serve '192.0.2.10' without "
        "authentication: anyone who can reach it could call the tools. Give a bearer token "
        "(--token-env NAME, or serve(..., auth_token=...)), bind to 127.0.0.1, or pass "
        "--insecure-no-auth (insecure_no_auth=True) if something in front of the server "
        "authenticates",
        "agentkit: error: --http 0.0.0.0:8000: '0.0.0.0' listens on every address, so there "
        "is no one Host value to accept: name the host names clients use, e.g. --allow-host "
        "mcp.example.com:8000 (allowed_hosts=[...])",
        "agentkit: error: --token-env UNSET_TOKEN_VAR: the environment variable "
        "UNSET_TOKEN_VAR is not set or empty; set it to a long random secret",
        "agentkit: error: --token-env, --insecure-no-auth, --allow-host and --allow-origin "
        "apply to --http only: a stdio server has exactly one client, the process that "
        "started it",
    ]


def test_http_app_applies_the_same_rules_to_embedders() -> None:
    server = build_server([])
    with pytest.raises(ValueError, match=r"refusing to serve '10\.0\.0\.5' without auth"):
        http_app(server, "10.0.0.5", 8000)
    with pytest.raises(ValueError, match="the bearer token is empty"):
        http_app(server, "10.0.0.5", 8000, auth_token="  ")
    assert http_app(server, "10.0.0.5", 8000, insecure_no_auth=True) is not None
    assert http_app(server, "10.0.0.5", 8000, auth_token=TOKEN) is not None


async def test_host_and_origin_are_checked_against_the_bound_or_allowed_addresses(
    agentkit_tools: Path, http_server: Callable[[Sequence[str]], str]
) -> None:
    default = http_server(serve_command(str(agentkit_tools), "--http", "127.0.0.1:{port}"))
    port = default.split(":")[2].split("/")[0]
    custom = http_server(serve_command(
        str(agentkit_tools), "--http", "127.0.0.1:{port}", "--allow-host", "mcp.internal:{port}",
        "--allow-origin", "https://console.example.com"))
    custom_port = custom.split(":")[2].split("/")[0]

    async def status(url: str, host: str, origin: str | None = None) -> int:
        headers = {**ACCEPT, "host": host, **({"origin": origin} if origin else {})}
        async with httpx2.AsyncClient() as http:
            return (await http.post(url, json=INITIALIZE, headers=headers)).status_code

    async with asyncio.timeout(LIMIT):
        assert await status(default, f"127.0.0.1:{port}") == 200
        assert await status(default, f"localhost:{port}") == 200
        assert await status(default, f"evil.example.com:{port}") == 421
        assert await status(default, f"localhost:{port}", "http://evil.example.com") == 403
        assert await status(custom, f"mcp.internal:{custom_port}") == 200
        assert await status(custom, f"127.0.0.1:{custom_port}") == 421
        assert await status(custom, f"mcp.internal:{custom_port}",
                            "https://console.example.com") == 200
        assert await status(custom, f"mcp.internal:{custom_port}",
                            f"http://mcp.internal:{custom_port}") == 403


async def test_bearer_auth_closes_websocket_connections_before_the_app_sees_them() -> None:
    """MCP over HTTP has no WebSocket channel: one is closed, with or without a token."""
    seen: list[str] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen.append(scope["type"])
        if scope["type"] == "websocket":
            await send({"type": "websocket.accept"})

    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    guarded = BearerAuth(app, TOKEN)
    for headers in ([], [(b"authorization", f"Bearer {TOKEN}".encode())]):
        await guarded({"type": "websocket", "path": "/mcp", "headers": headers},
                      receive, send)
    await guarded({"type": "lifespan"}, receive, send)

    closed = {"type": "websocket.close", "code": 1008,
              "reason": "this endpoint serves MCP over HTTP only"}
    assert sent == [closed, closed]
    assert seen == ["lifespan"]
