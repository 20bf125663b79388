"""HTTP MCP servers that want credentials: refusals are typed, tokens are sent."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from agentkit.core.testing import make_test_ctx
from agentkit.integrations.mcp import MCPAuthError, MCPConnectionError, connect_http

LIMIT = 20

GUARDED_SERVER = '''
"""An official-SDK server behind a bearer-token check, as a gateway would put it."""
import sys

import uvicorn
from mcp.server.mcpserver import MCPServer

server = MCPServer("vault", log_level="WARNING")


@server.tool()
def secret(name: str) -> str:
    """Return the secret stored under a name."""
    return f"{name}: hunter2"


app = server.streamable_http_app()
CHALLENGE = b'Bearer realm="vault", error="invalid_token"'


async def guarded(scope, receive, send):
    if scope["type"] == "http":
        token = dict(scope["headers"]).get(b"authorization", b"")
        if token != b"Bearer s3cret":
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"www-authenticate", CHALLENGE),
                                    (b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"unauthorized"})
            return
    await app(scope, receive, send)


uvicorn.run(guarded, host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
'''


@pytest.fixture
def guarded_url(
    script: Callable[[str, str], Path], http_server: Callable[[Sequence[str]], str]
) -> str:
    return http_server([sys.executable, str(script("vault.py", GUARDED_SERVER))])


async def test_a_401_is_an_authentication_error_not_an_internal_error(guarded_url: str) -> None:
    for token in (None, "wrong"):
        with pytest.raises(MCPAuthError) as refused:
            async with asyncio.timeout(LIMIT), connect_http(guarded_url, bearer_token=token):
                pass
        assert isinstance(refused.value, MCPConnectionError | PermissionError)
        assert (refused.value.status, refused.value.challenge) == (
            401, 'Bearer realm="vault", error="invalid_token"'
        )
        assert str(refused.value) == (
            f"MCP server {guarded_url!r} rejected the credentials (HTTP 401) "
            '(WWW-Authenticate: Bearer realm="vault", error="invalid_token"). Pass a token '
            "with connect_http(..., bearer_token=...) or headers=, or an OAuth client "
            "provider with auth="
        )


async def test_a_bearer_token_or_a_static_header_is_sent(guarded_url: str) -> None:
    answers = []
    for options in ({"bearer_token": "s3cret"}, {"headers": {"Authorization": "Bearer s3cret"}}):
        async with asyncio.timeout(LIMIT), connect_http(guarded_url, **options) as session:
            [secret] = await session.list_tools()
            answers.append(await secret.run({"name": "wifi"}, make_test_ctx()))

    assert answers == [{"result": "wifi: hunter2"}] * 2
