"""egress(): internal targets in every spelling are refused before the tool runs."""

from __future__ import annotations

import pytest

from agentkit.core.contracts.types import ToolRequest
from agentkit.core.policies import EgressRefused, check_url, egress
from agentkit.core.testing import make_test_ctx
from agentkit.tools import tool

# Every one of these reaches this machine or a private network when an HTTP client
# follows it.
INTERNAL_TARGETS = [
    "http://127.0.0.1/",
    "http://127.0.0.1:8080/admin",
    "http://127.1/",
    "http://127.0.1/",
    "http://2130706433/",
    "http://0x7f000001/",
    "http://0x7f.0x0.0x0.0x1/",
    "http://0x7f.1/",
    "http://0177.0.0.1/",
    "http://017700000001/",
    "http://127.000.000.001/",
    "http://0/",
    "http://0.0.0.0/",
    "http://10.0.0.1/",
    "http://10.255.255.255/",
    "http://172.16.0.1/",
    "http://172.31.255.254/",
    "http://192.168.1.1/",
    "http://3232235777/",
    "http://0xc0a80101/",
    "http://169.254.169.254/latest/meta-data/",
    "http://0xa9fea9fe/",
    "http://100.64.0.1/",
    "http://224.0.0.1/",
    "http://240.0.0.1/",
    "http://255.255.255.255/",
    "http://[::1]/",
    "http://[0:0:0:0:0:0:0:1]/",
    "http://[::]/",
    "http://[::ffff:127.0.0.1]/",
    "http://[::ffff:7f00:1]/",
    "http://[::ffff:10.0.0.1]/",
    "http://[::ffff:169.254.169.254]/",
    "http://[64:ff9b::7f00:1]/",
    "http://[2002:7f00:1::]/",
    "http://[fe80::1%25eth0]/",
    "http://[fc00::1]/",
    "http://[fd12:3456::1]/",
    "http://[ff02::1]/",
    "http://localhost/",
    "http://LOCALHOST/",
    "http://localhost./",
    "http://api.localhost/",
    "http://localhost.localdomain/",
    "http://printer.local/",
    "http://user:pass@127.0.0.1/",
    "http://example.com@127.0.0.1/",
    "https://127.0.0.1:443/",
]

NOT_HTTP = [
    "file:///etc/passwd",
    "gopher://example.com/",
    "ftp://example.com/",
    "javascript:alert(1)",
    "//example.com/path",
    "example.com",
    "http:///nohost",
    "http://exa mple.com/",
    "http://127.0.0.1\\@example.com/",
    "http://example.com\x00.evil/",
    "http://example.com:99999/",
]

PUBLIC_TARGETS = [
    "https://example.com/",
    "http://example.com:8080/path?q=1",
    "https://sub.example.co.uk/a/b",
    "http://93.184.216.34/",
    "http://[2606:4700:4700::1111]/",
    "https://xn--bcher-kva.example/",
    "https://bücher.example/",
]


def test_the_internal_corpus_is_large_enough() -> None:
    assert len(INTERNAL_TARGETS) >= 30


@pytest.mark.parametrize("url", INTERNAL_TARGETS)
def test_internal_targets_are_refused(url: str) -> None:
    assert check_url(url) is not None


@pytest.mark.parametrize("url", NOT_HTTP)
def test_non_http_or_malformed_targets_are_refused(url: str) -> None:
    assert check_url(url) is not None


@pytest.mark.parametrize("url", PUBLIC_TARGETS)
def test_public_targets_are_allowed(url: str) -> None:
    assert check_url(url) is None


def test_reasons_say_what_is_wrong() -> None:
    assert check_url("http://0x7f.1/") == "127.0.0.1 is a loopback address"
    assert check_url("http://[::ffff:10.0.0.1]/") == (
        "10.0.0.1 is a private address (embedded in ::ffff:a00:1)"
    )
    assert check_url("ftp://example.com/") == "scheme 'ftp' is not allowed; only http and https are"
    assert check_url("http://localhost/") == "localhost names this machine or the local network"
    assert check_url(42) == "expected a URL string, got int"


def test_allowlist_admits_listed_hosts_and_subdomain_wildcards_only() -> None:
    allow = ["api.example.com", "*.trusted.org"]
    assert check_url("https://api.example.com/v1", allow) is None
    assert check_url("https://docs.trusted.org/", allow) is None
    assert check_url("https://trusted.org/", allow) == (
        "host 'trusted.org' is not on the allowlist ['api.example.com', '*.trusted.org']"
    )
    assert check_url("https://example.com/", allow) is not None
    assert check_url("http://127.0.0.1/", ["127.0.0.1"]) == "127.0.0.1 is a loopback address"


fetched: list[str] = []


@tool(side_effecting=False, url_arg="url")
async def fetch(url: str) -> str:
    """Fetch a web page and return the first part of its text content."""
    fetched.append(url)
    return f"page at {url}"


@pytest.mark.parametrize("url", INTERNAL_TARGETS)
async def test_internal_targets_never_reach_the_tool_body(url: str) -> None:
    fetched.clear()
    ctx = make_test_ctx(tool_middleware=[egress()])
    with pytest.raises(EgressRefused) as info:
        await ctx.invoker.invoke_tool(ToolRequest("fetch", {"url": url}, fetch), ctx)
    assert fetched == []
    assert info.value.tool == "fetch"
    assert info.value.argument == "url"
    assert str(info.value).startswith(f"tool 'fetch' call refused: argument 'url' = {url!r}")


async def test_public_targets_run_and_allowlists_apply_through_the_chain() -> None:
    fetched.clear()
    ctx = make_test_ctx(tool_middleware=[egress(allow_hosts=["example.com"])])
    ok = ToolRequest("fetch", {"url": "https://example.com/"}, fetch)
    assert await ctx.invoker.invoke_tool(ok, ctx) == "page at https://example.com/"
    with pytest.raises(EgressRefused):
        await ctx.invoker.invoke_tool(
            ToolRequest("fetch", {"url": "https://other.com/"}, fetch), ctx
        )
    assert fetched == ["https://example.com/"]


async def test_tools_without_url_arg_are_not_checked() -> None:
    @tool(side_effecting=False)
    def echo(text: str) -> str:
        """Return the text it was given, unchanged, for testing chains."""
        return text

    ctx = make_test_ctx(tool_middleware=[egress()])
    request = ToolRequest("echo", {"text": "http://127.0.0.1/"}, echo)
    assert await ctx.invoker.invoke_tool(request, ctx) == "http://127.0.0.1/"


def test_url_arg_must_name_a_parameter() -> None:
    from agentkit.tools import ToolDefinitionError

    with pytest.raises(ToolDefinitionError) as info:

        @tool(side_effecting=False, url_arg="link")
        def get(url: str) -> str:
            """Fetch a web page and return the first part of its text content."""
            return url

    assert str(info.value) == "tool 'get': url_arg='link' names no parameter; parameters: ['url']"


def test_egress_refusal_is_a_model_error_that_is_never_retried() -> None:
    from agentkit.core.contracts.errors import ModelCallError
    from agentkit.core.policies import is_transient

    error = EgressRefused("fetch", "url", "http://127.0.0.1/", "loopback")
    assert isinstance(error, ModelCallError)
    assert not is_transient(error)
