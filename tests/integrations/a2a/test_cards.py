"""A card the client cannot use is refused at construction, its URLs pass the egress
check, and a remote that cannot be reached is transient for retry()."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from agentkit.core.policies import is_transient
from agentkit.core.testing import make_test_ctx
from agentkit.integrations.a2a import A2AAgent, A2ACardError, RemoteUnreachable
from tests.integrations.a2a.test_consume import LOOPBACK
from tests.serve.served import served_as


def closed_port() -> int:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port: int = sock.getsockname()[1]
    sock.close()  # nothing listens there now: connecting is refused
    return port


DEAD = closed_port()

CARDS: dict[str, dict[str, Any]] = {
    "grpc": {"name": "g", "supportedInterfaces": [
        {"url": "http://127.0.0.1:1/", "protocolBinding": "GRPC", "protocolVersion": "1.0"}]},
    "oauth": {"name": "o", "supportedInterfaces": [
        {"url": "http://127.0.0.1:1/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "securitySchemes": {"sso": {"oauth2SecurityScheme": {"flows": {}}}},
        "securityRequirements": [{"schemes": {"sso": {"list": []}}}]},
    "bearer": {"name": "b", "supportedInterfaces": [
        {"url": "http://127.0.0.1:1/", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "securitySchemes": {"token": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
        "securityRequirements": [{"schemes": {"token": {"list": []}}}]},
    "inside": {"name": "i", "supportedInterfaces": [
        {"url": "http://10.1.2.3/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]},
    "dead": {"name": "dead", "description": "An agent whose endpoint is gone.",
             "supportedInterfaces": [{"url": f"http://127.0.0.1:{DEAD}/",
                                      "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]},
}


@pytest.fixture
async def cards() -> AsyncIterator[str]:
    async def card(request: Request) -> JSONResponse:
        return JSONResponse(CARDS[request.path_params["which"]])

    app = Starlette(routes=[Route("/{which}/.well-known/agent-card.json", card)])
    async with served_as(lambda _: app) as url:
        yield url


async def refusal(url: str, **options: Any) -> str:
    with pytest.raises(A2ACardError) as refused:
        await A2AAgent.connect(url, **options)
    return str(refused.value)


async def test_an_unusable_card_is_a_clear_error_at_construction(cards: str) -> None:
    where = f"{cards}/grpc/.well-known/agent-card.json"
    assert await refusal(f"{cards}/grpc", private_hosts=LOOPBACK) == (
        f"A2A agent card {where}: it offers no transport this client speaks (JSONRPC, "
        "protocol 1.x); it offers [('GRPC', '1.0')]")
    where = f"{cards}/oauth/.well-known/agent-card.json"
    assert await refusal(where, private_hosts=LOOPBACK) == (
        f"A2A agent card {where}: its security schemes ['oauth2SecurityScheme'] cannot be "
        "satisfied: this client signs in with an HTTP bearer token only")
    where = f"{cards}/bearer/.well-known/agent-card.json"
    assert await refusal(f"{cards}/bearer/", private_hosts=LOOPBACK) == (
        f"A2A agent card {where}: the agent requires a bearer token (security scheme "
        "['token']): pass A2AAgent(..., token=...)")
    made = await A2AAgent.connect(f"{cards}/bearer", token="t", private_hosts=LOOPBACK)
    assert (made.name, made.card.bearer) == ("b", True)


async def test_the_card_and_its_interface_pass_the_egress_check(cards: str) -> None:
    where = f"{cards}/bearer/.well-known/agent-card.json"
    assert await refusal(f"{cards}/bearer") == (
        f"A2A agent card {where}: the card URL is refused by the egress check: 127.0.0.1 is "
        "a loopback address (a peer on an internal host is admitted by name with "
        "A2AAgent(..., private_hosts=[...]))")
    # A card may not send the client somewhere internal that was not named.
    where = f"{cards}/inside/.well-known/agent-card.json"
    assert await refusal(f"{cards}/inside", private_hosts=LOOPBACK) == (
        f"A2A agent card {where}: the card's interface URL http://10.1.2.3/rpc is refused by "
        "the egress check: "
        "10.1.2.3 is a private address (a peer on an internal host is admitted by name with "
        "A2AAgent(..., private_hosts=[...]))")
    inside = await A2AAgent.connect(f"{cards}/inside", private_hosts=[*LOOPBACK, "10.1.2.3"])
    assert inside.card.endpoint == "http://10.1.2.3/rpc"


async def test_a_remote_that_cannot_be_reached_is_transient(cards: str) -> None:
    dead = await A2AAgent.connect(f"{cards}/dead", private_hosts=LOOPBACK)
    with pytest.raises(RemoteUnreachable) as unreachable:
        await dead.run("hello", make_test_ctx())
    assert str(unreachable.value).startswith(
        f"A2A agent 'dead' at http://127.0.0.1:{DEAD}/ is unreachable: ")
    assert is_transient(unreachable.value)
    port = closed_port()
    where = f"http://127.0.0.1:{port}/.well-known/agent-card.json"
    refused = await refusal(f"http://127.0.0.1:{port}", private_hosts=LOOPBACK)
    assert refused.startswith(f"A2A agent card {where}: it could not be read: ")


def test_without_httpx_making_an_agent_names_the_extra() -> None:
    code = ("import sys; sys.modules['httpx'] = None\n"
            "from agentkit.integrations.a2a import A2AAgent\n"
            "try:\n    A2AAgent('https://agents.example.com')\n"
            "except ImportError as error:\n    print(error)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60, check=True)
    assert result.stdout == ('agentkit.integrations.a2a needs httpx, which is not installed: '
                             'pip install "agentkit-framework[a2a]"\n')
