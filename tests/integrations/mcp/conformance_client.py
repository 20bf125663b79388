"""The client the MCP conformance suite drives: agentkit's MCP client inside an agent.

The suite starts a test server per scenario and runs ``python conformance_client.py
URL`` with ``MCP_CONFORMANCE_SCENARIO`` (and, for some auth scenarios,
``MCP_CONFORMANCE_CONTEXT``) in the environment. Every scenario connects with
``connect_http``, lists the tools and has a FakeLLM-scripted agent call them; a tool
that asks a person (elicitation) suspends the run, which is resumed with an accepted,
empty form, so the schema's defaults fill it in. OAuth scenarios use the official
SDK's OAuth client provider, with a headless browser step: the authorization URL is
fetched and the code taken from its redirect; cross-app access (SEP-990) uses the SDK's
identity-assertion provider, with the enterprise identity provider's token exchange done
here (the SDK leaves that leg to the application).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import warnings
from typing import Any
from urllib.parse import parse_qs, urlparse

import httpx2
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
)
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from mcp.shared.exceptions import MCPDeprecationWarning

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ToolCall
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.integrations.mcp import MCPTool, connect_http

ARGUMENTS: dict[str, dict[str, Any]] = {"add_numbers": {"a": 5, "b": 3}}
REDIRECT = "http://127.0.0.1:3030/callback"
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"
"""Where this client would publish its metadata document (SEP-991), used as its client
id by authorization servers that accept one instead of dynamic registration."""


class _Tokens:
    """In-memory token storage for one run of the script."""

    def __init__(self, client: OAuthClientInformationFull | None = None) -> None:
        self.tokens: OAuthToken | None = None
        self.client = client

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class _HeadlessBrowser:
    """Plays the user's browser: opens the authorization URL, reads the code from the
    redirect the authorization server answers with."""

    def __init__(self) -> None:
        self.result: AuthorizationCodeResult | None = None

    async def open(self, url: str) -> None:
        async with httpx2.AsyncClient(follow_redirects=False) as http:
            response = await http.get(url)
        location = response.headers.get("location", "")
        query = parse_qs(urlparse(location).query)
        if "code" not in query:
            raise RuntimeError(f"the authorization server did not redirect with a code: "
                               f"{response.status_code} {location!r}")
        self.result = AuthorizationCodeResult(
            code=query["code"][0],
            state=query.get("state", [None])[0],
            iss=query.get("iss", [None])[0],
        )

    async def callback(self) -> AuthorizationCodeResult:
        if self.result is None:
            raise RuntimeError("no authorization code was received")
        return self.result


def oauth(url: str, scenario: str, context: dict[str, Any]) -> httpx2.Auth:
    if scenario.startswith("auth/client-credentials-"):
        return machine_to_machine(url, context)
    if "idp_id_token" in context:
        return cross_app_access(url, context)
    browser = _HeadlessBrowser()
    client = None
    if "client_id" in context:  # pre-registered with the authorization server
        client = OAuthClientInformationFull(
            client_id=context["client_id"],
            client_secret=context.get("client_secret"),
            redirect_uris=[REDIRECT],  # type: ignore[list-item]
            token_endpoint_auth_method="client_secret_basic",
        )
    metadata = OAuthClientMetadata(
        client_name="agentkit conformance client",
        redirect_uris=[REDIRECT],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
    )
    return OAuthClientProvider(
        url, metadata, _Tokens(client),
        redirect_handler=browser.open, callback_handler=browser.callback,
        client_metadata_url=CLIENT_METADATA_URL,
    )


def machine_to_machine(url: str, context: dict[str, Any]) -> OAuthClientProvider:
    """The client-credentials grant (no person involved): a client secret, or a JWT
    signed with the client's private key."""
    if "private_key_pem" in context:
        signer = SignedJWTParameters(
            issuer=context["client_id"],
            subject=context["client_id"],
            signing_key=context["private_key_pem"],
            signing_algorithm=context.get("signing_algorithm", "RS256"),
        )
        return PrivateKeyJWTOAuthProvider(
            url, _Tokens(), context["client_id"], signer.create_assertion_provider()
        )
    return ClientCredentialsOAuthProvider(
        url, _Tokens(), context["client_id"], context["client_secret"], "client_secret_basic"
    )


TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG = "urn:ietf:params:oauth:token-type:id-jag"


def cross_app_access(url: str, context: dict[str, Any]) -> httpx2.Auth:
    """Enterprise-managed authorization (SEP-990): the user's ID token from the
    enterprise identity provider is exchanged there (RFC 8693) for an identity assertion
    grant (ID-JAG) naming the MCP authorization server and the MCP server; the SDK's
    provider presents it to that authorization server (RFC 7523 jwt-bearer grant)."""

    async def id_jag(audience: str, resource: str) -> str:
        async with httpx2.AsyncClient() as http:
            response = await http.post(context["idp_token_endpoint"], data={
                "grant_type": TOKEN_EXCHANGE,
                "subject_token": context["idp_id_token"],
                "subject_token_type": ID_TOKEN,
                "requested_token_type": ID_JAG,
                "audience": audience,
                "resource": resource,
                "client_id": context["idp_client_id"],
            })
        response.raise_for_status()
        grant = response.json()
        if grant.get("issued_token_type") != ID_JAG:
            raise RuntimeError(f"the identity provider issued no ID-JAG: {grant!r}")
        return str(grant["access_token"])

    return IdentityAssertionOAuthProvider(
        url, _Tokens(), context["client_id"], context["client_secret"],
        issuer=authorization_server(url), assertion_provider=id_jag,
        token_endpoint_auth_method="client_secret_basic",
    )


def authorization_server(url: str) -> str:
    """The MCP authorization server's issuer. A deployment configures it (the SDK's
    provider never lets the resource server choose where the grant and client secret
    go); the suite's context does not carry it, so this script reads it from the
    server's protected resource metadata (RFC 9728 well-known URL)."""
    parts = urlparse(url)
    metadata = f"{parts.scheme}://{parts.netloc}/.well-known/oauth-protected-resource{parts.path}"
    response = httpx2.get(metadata)
    response.raise_for_status()
    return str(response.json()["authorization_servers"][0])


async def main(url: str, scenario: str) -> None:
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    auth = oauth(url, scenario, context) if scenario.startswith("auth/") else None
    async with connect_http(url, auth=auth, timeout=20, call_timeout=20) as session:
        tools = await session.list_tools()
        if tools:
            await use(tools)


async def use(tools: list[MCPTool]) -> None:
    calls = tuple(
        ToolCall(f"c{i}", tool.name, ARGUMENTS.get(tool.remote_name, {}))
        for i, tool in enumerate(tools)
    )
    llm = FakeLLM.script([Turn(tool_calls=calls), Turn(content="done")])
    agent = Agent(name="conformance", model="fake", prompt="Call every tool.",
                  cognition=ReActCognition(tools=tools))
    ctx = make_test_ctx(llm=llm)
    result = await agent.run("Call every tool.", ctx)
    while result.stop_reason == "suspended":
        questions = result.evals["suspended"].questions
        decisions = {call_id: {"action": "accept", "content": {}} for call_id in questions}
        result = await agent.resume(result.run_id, decisions, ctx)
    for message in result.messages:
        if message.role == "tool":
            print(f"{message.name}: {message.content}")
    if result.stop_reason != "complete":
        raise SystemExit(f"the run stopped: {result.stop_reason}")


if __name__ == "__main__":
    warnings.simplefilter("ignore", MCPDeprecationWarning)  # the issuer= the suite can't give
    asyncio.run(main(sys.argv[-1], os.environ.get("MCP_CONFORMANCE_SCENARIO", "")))
