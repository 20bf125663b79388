"""egress(private_hosts=...): peers inside a company network, named one by one, are
admitted although their addresses are loopback or private; nothing else internal is."""

from __future__ import annotations

import pytest

from agentkit.core.contracts.errors import EgressRefused
from agentkit.core.contracts.types import ToolRequest
from agentkit.core.policies import check_url, egress
from agentkit.core.testing import make_test_ctx
from agentkit.tools import tool


def test_a_named_private_host_is_admitted_and_its_neighbours_are_not() -> None:
    named = ["agents.corp.internal", "127.0.0.1", "*.peers.local"]
    assert check_url("http://127.0.0.1:8000/a2a/x", private_hosts=named) is None
    assert check_url("https://agents.corp.internal/", private_hosts=named) is None
    assert check_url("https://b.peers.local/card", private_hosts=named) is None
    assert check_url("http://127.0.0.2/", private_hosts=named) == (
        "127.0.0.2 is a loopback address")
    assert check_url("http://0x7f.1/", private_hosts=["localhost"]) == (
        "127.0.0.1 is a loopback address")
    assert check_url("http://127.0.0.1/") == "127.0.0.1 is a loopback address"


def test_a_named_private_host_passes_an_allowlist_that_does_not_list_it() -> None:
    assert check_url("http://10.0.0.7/", ["example.com"], private_hosts=["10.0.0.7"]) is None
    assert check_url("https://other.com/", ["example.com"], private_hosts=["10.0.0.7"]) == (
        "host 'other.com' is not on the allowlist ['example.com']")


def test_private_hosts_entries_are_checked_like_an_allowlist() -> None:
    with pytest.raises(ValueError) as bad:
        check_url("http://x/", private_hosts=["exa mple"])
    assert str(bad.value) == ("egress(): private_hosts entry 'exa mple' is not a host name; "
                              "give names such as 'api.example.com' or '*.example.com'")
    with pytest.raises(ValueError) as text:
        egress(private_hosts="10.0.0.7")
    assert str(text.value) == ("egress(): private_hosts must be a list of host names, got the "
                               "string '10.0.0.7'; write ['10.0.0.7']")


async def test_the_egress_layer_admits_only_the_named_private_host() -> None:
    fetched: list[str] = []

    @tool(side_effecting=False, url_arg="url")
    def fetch(url: str) -> str:
        """Fetch a page from a peer service and return its text for the model."""
        fetched.append(url)
        return "ok"

    ctx = make_test_ctx(tool_middleware=[egress(private_hosts=["10.0.0.7"], resolve=True)])
    assert await ctx.invoker.invoke_tool(
        ToolRequest("fetch", {"url": "http://10.0.0.7/"}, fetch), ctx) == "ok"
    with pytest.raises(EgressRefused) as refused:
        await ctx.invoker.invoke_tool(ToolRequest("fetch", {"url": "http://10.0.0.8/"}, fetch),
                                      ctx)
    assert refused.value.reason == "10.0.0.8 is a private address"
    assert fetched == ["http://10.0.0.7/"]
    assert repr(egress(private_hosts=["10.0.0.7"])) == (
        "egress(allow_hosts=None, resolve=False, private_hosts=('10.0.0.7',))")
