"""egress(): a host is judged in the form an HTTP client resolves, however it is spelled."""

from __future__ import annotations

import http.server
import ipaddress
import threading
import urllib.request
from collections.abc import Iterator

import httpx2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentkit.core.contracts.types import ToolRequest
from agentkit.core.policies import EgressRefused, check_url, egress
from agentkit.core.testing import make_test_ctx
from agentkit.tools import tool

# Numeric spellings of 127.0.0.1 disguised with Unicode full stops, fullwidth characters
# or invisible code points. A client maps each one to an ASCII host (NFKC, IDNA, the
# ignorable code points dropped) that inet_aton reads as 127.0.0.1.
DISGUISED_LOOPBACK = [
    "0x7f\u30021",  # ideographic full stop
    "0x7f\uff0e1",  # fullwidth full stop
    "0x7f\uff611",  # halfwidth ideographic full stop
    "0x7f\u00ad.1",  # soft hyphen
    "\uff10\uff58\uff17\uff46.\uff11",  # fullwidth 0x7f.1
    "0x7f\u200b.1",  # zero-width space
    "0x7f\u2060.1",  # word joiner
    "0x7f\ufeff.1",  # zero-width no-break space
    "0x7F\u034f.1",  # combining grapheme joiner
    "0x7f.\u00ad1",
    "2130706433\u00ad",
    "\uff12\uff11\uff13\uff10\uff17\uff10\uff16\uff14\uff13\uff13",  # fullwidth decimal
    "0177\u30020\u30020\u30021",  # octal with ideographic full stops
    "127\uff0e0\uff0e0\uff0e1",
    "\uff11\uff12\uff17.1",
    "0x7f\u30021\u3002",  # and a trailing full stop
]


@pytest.mark.parametrize("host", DISGUISED_LOOPBACK)
def test_disguised_numeric_hosts_are_read_as_the_address_they_reach(host: str) -> None:
    assert check_url(f"http://{host}:8080/") == "127.0.0.1 is a loopback address"


def test_other_disguised_internal_hosts_are_refused() -> None:
    assert check_url("http://169\u3002254\u3002169\u3002254/latest/") == (
        "169.254.169.254 is a private address"
    )
    assert check_url("http://0xa\u00ad.1/") == "10.0.0.1 is a private address"
    assert check_url("http://\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54/") == (
        "localhost names this machine or the local network"
    )
    assert check_url("http://local\u200bhost/") == (
        "localhost names this machine or the local network"
    )
    assert check_url("http://printer\u3002local/") == (
        "printer.local names this machine or the local network"
    )


def test_hosts_that_map_to_no_valid_name_are_refused() -> None:
    assert check_url("http://exa\u2028mple.com/") == (
        "host 'exa\\u2028mple.com' is not a valid name: no HTTP client can map it to "
        "an ASCII host of letters, digits and hyphens"
    )
    assert check_url("http://exa$mple\u3002com/") == "host 'exa$mple。com' is not a valid name"


def test_unicode_names_that_map_to_public_hosts_are_allowed() -> None:
    assert check_url("https://b\u00fccher.example/") is None
    assert check_url("https://example\u3002com/") is None
    assert check_url("https://ex\u00adample.com/") is None


def test_allowlist_compares_the_host_a_client_resolves() -> None:
    # httpx (IDNA 2008) connects to xn--strae-oqa.de, not to strasse.de.
    assert check_url("https://stra\u00dfe.de/", ["strasse.de"]) == (
        "host 'straße.de' resolves as 'xn--strae-oqa.de', which is not on the allowlist "
        "['strasse.de']"
    )
    # An entry in either spelling stands for the name: each client reaches, for the
    # URL, the host it reaches for the listed name (httpx xn--strae-oqa.de, urllib
    # strasse.de), so the URL is admitted.
    assert check_url("https://stra\u00dfe.de/", ["stra\u00dfe.de"]) is None
    assert check_url("https://stra\u00dfe.de/", ["xn--strae-oqa.de"]) is None
    # The ASCII name strasse.de is another host for every client, whichever spelling
    # of straße.de is listed.
    for entry in ("stra\u00dfe.de", "xn--strae-oqa.de"):
        assert check_url("https://strasse.de/", [entry]) == (
            "host 'strasse.de' is not on the allowlist ['xn--strae-oqa.de']"
        )
    both = ["stra\u00dfe.de", "strasse.de"]
    assert check_url("https://stra\u00dfe.de/", both) is None
    assert check_url("https://xn--strae-oqa.de/", ["stra\u00dfe.de"]) is None
    assert check_url("https://B\u00dcCHER.example/", ["b\u00fccher.example"]) is None
    assert check_url("https://xn--bcher-kva.example/", ["*.example"]) is None
    assert check_url("https://api\u3002example\u3002com/", ["api.example.com"]) is None
    assert check_url("https://docs.b\u00fccher.example/", ["*.b\u00fccher.example"]) is None


@pytest.mark.parametrize(
    ("url", "entry"),
    [("https://stra\u00dfe.de/docs", "xn--strae-oqa.de"),
     ("https://xn--strae-oqa.de/docs", "stra\u00dfe.de"),
     ("https://stra\u00dfe.de/docs", "stra\u00dfe.de")],
)
async def test_an_httpx_client_reaches_the_listed_host_in_either_spelling(
    url: str, entry: str
) -> None:
    """The allowlist and the URL are compared in the form the client resolves: httpx
    sends both spellings of straße.de to xn--strae-oqa.de, the listed host."""
    reached: list[bytes] = []

    def handler(request: httpx2.Request) -> httpx2.Response:
        reached.append(request.url.raw_host)
        return httpx2.Response(200, text="reached")

    @tool(side_effecting=False, url_arg="url")
    async def fetch(url: str) -> str:
        """Fetch a web page with httpx and return its text content."""
        async with httpx2.AsyncClient(transport=httpx2.MockTransport(handler)) as client:
            return (await client.get(url)).text

    ctx = make_test_ctx(tool_middleware=[egress(allow_hosts=[entry])])
    assert await ctx.invoker.invoke_tool(ToolRequest("fetch", {"url": url}, fetch), ctx) == (
        "reached")
    assert reached == [b"xn--strae-oqa.de"]


def test_allowlist_entries_may_be_public_addresses() -> None:
    allow = ["93.184.216.34", "2606:4700:4700::1111"]
    assert check_url("http://93.184.216.34/", allow) is None
    assert check_url("http://[2606:4700:4700::1111]/", allow) is None
    assert check_url("http://93.184.216.35/", allow) == (
        "host '93.184.216.35' is not on the allowlist ['93.184.216.34', '2606:4700:4700::1111']"
    )


def test_an_allowlist_entry_that_is_no_host_name_is_a_definition_error() -> None:
    with pytest.raises(ValueError) as info:
        egress(allow_hosts=["exa mple.com"])
    assert str(info.value) == (
        "egress(): allow_hosts entry 'exa mple.com' is not a host name; give names such "
        "as 'api.example.com' or '*.example.com'"
    )


class _Counter(http.server.BaseHTTPRequestHandler):
    hits: list[str]

    def do_GET(self) -> None:
        self.hits.append(self.path)
        body = b"reached"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def local_server() -> Iterator[tuple[int, list[str]]]:
    hits: list[str] = []
    handler = type("Handler", (_Counter,), {"hits": hits})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], hits
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@tool(side_effecting=False, url_arg="url")
async def fetch_with_httpx(url: str) -> str:
    """Fetch a web page with httpx and return its text content."""
    async with httpx2.AsyncClient(timeout=5, trust_env=False) as client:
        return (await client.get(url)).text


@tool(side_effecting=False, url_arg="url")
def fetch_with_urllib(url: str) -> str:
    """Fetch a web page with urllib and return its text content."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=5) as response:
        return str(response.read().decode())


async def test_disguised_loopback_reaches_a_local_server_without_egress(
    local_server: tuple[int, list[str]],
) -> None:
    """The spellings are real: unguarded, httpx and urllib follow them to 127.0.0.1."""
    port, hits = local_server
    ctx = make_test_ctx()
    for fetch, host in (
        (fetch_with_httpx, "0x7f\u30021"),
        (fetch_with_httpx, "0x7f\uff0e1"),
        (fetch_with_urllib, "0x7f\u00ad.1"),
        (fetch_with_urllib, "2130706433\u00ad"),
    ):
        request = ToolRequest(fetch.name, {"url": f"http://{host}:{port}/x"}, fetch)
        assert await ctx.invoker.invoke_tool(request, ctx) == "reached"
    assert hits == ["/x", "/x", "/x", "/x"]


@pytest.mark.parametrize("fetch", [fetch_with_httpx, fetch_with_urllib])
async def test_egress_refuses_every_disguised_loopback_before_a_request_is_made(
    local_server: tuple[int, list[str]], fetch: object
) -> None:
    port, hits = local_server
    ctx = make_test_ctx(tool_middleware=[egress()])
    for host in DISGUISED_LOOPBACK:
        url = f"http://{host}:{port}/x"
        with pytest.raises(EgressRefused) as info:
            await ctx.invoker.invoke_tool(ToolRequest("fetch", {"url": url}, fetch), ctx)
        assert info.value.reason == "127.0.0.1 is a loopback address"
    assert hits == []


_DOTS = [".", "\u3002", "\uff0e", "\uff61"]
_INVISIBLE = ["", "\u00ad", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u034f", "\ufe0f"]


def _fullwidth(c: str) -> str:
    return chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c


@st.composite
def disguised_internal_hosts(draw: st.DrawFn) -> tuple[str, str]:
    """An internal IPv4 address in a numeric notation, disguised character by character."""
    address = draw(
        st.sampled_from(["127.0.0.1", "10.1.2.3", "169.254.169.254", "192.168.0.1", "0.0.0.0"])
    )
    octets = [int(o) for o in address.split(".")]
    value = int(ipaddress.IPv4Address(address))
    notation = draw(st.sampled_from(["dotted", "hex", "octal", "decimal", "short"]))
    if notation == "dotted":
        parts = [str(o) for o in octets]
    elif notation == "hex":
        parts = [hex(o) for o in octets]
    elif notation == "octal":
        parts = ["0" + oct(o)[2:] for o in octets]
    elif notation == "decimal":
        parts = [str(value)]
    else:
        parts = [str(octets[0]), str(value & 0xFFFFFF)]
    text = ""
    for index, part in enumerate(parts):
        if index:
            text += draw(st.sampled_from(_DOTS))
        for c in part:
            text += _fullwidth(c) if draw(st.booleans()) else c
            text += draw(st.sampled_from(_INVISIBLE))
    return text, address


@settings(max_examples=300, deadline=None)
@given(disguised_internal_hosts())
def test_fuzzed_disguises_of_internal_addresses_are_all_refused(case: tuple[str, str]) -> None:
    host, address = case
    why = check_url(f"http://{host}/")
    assert why is not None
    assert why.startswith(f"{address} is ")


@pytest.mark.parametrize(
    "url",
    [
        "http://" + "a." * 100_000 + "localhost/",
        "http://" + "a" * 100_000 + "/",
        "http://\u00e9" + "a" * 100_000 + "/",
        "http://127.0.0.1/" + "p" * 100_000,
        "gopher" * 100_000 + "://example.com/",
    ],
)
async def test_refusals_quote_long_urls_in_bounded_form(url: str) -> None:
    ctx = make_test_ctx(tool_middleware=[egress()])
    with pytest.raises(EgressRefused) as info:
        await ctx.invoker.invoke_tool(ToolRequest("fetch", {"url": url}, fetch_with_urllib), ctx)
    assert info.value.url == url
    assert len(str(info.value)) < 1_000
