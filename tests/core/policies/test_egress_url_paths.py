"""egress(): URLs inside structured arguments, and tools with several URL arguments."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypedDict

import pydantic
import pytest

from agentkit.core.contracts.types import ToolRequest
from agentkit.core.policies import EgressRefused, egress
from agentkit.core.testing import make_test_ctx
from agentkit.tools import ToolArgumentError, ToolDefinitionError, tool

ran: list[Any] = []


@dataclass(frozen=True)
class Request:
    url: str
    method: str = "GET"


@dataclass(frozen=True)
class Job:
    name: str
    request: Request | None = None


class Target(TypedDict):
    url: str


class Mirror(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(populate_by_name=True)

    address: str = pydantic.Field(alias="href")


@tool(side_effecting=False, url_arg="request.url")
def send(request: Request) -> str:
    """Send one HTTP request and return the status line of the response."""
    ran.append(request)
    return f"{request.method} {request.url}"


@tool(side_effecting=False, url_arg=("source", "job.request.url", "target.url", "mirror.href"))
def copy(
    source: str, job: Job, target: Target | None = None, mirror: Mirror | None = None
) -> str:
    """Copy a document from a source URL to the targets named in the job."""
    ran.append(source)
    return "copied"


@tool(side_effecting=False, url_arg="urls")
def fetch_all(urls: list[str]) -> int:
    """Fetch every page in the list and return how many were fetched."""
    ran.append(urls)
    return len(urls)


async def call(t: Any, arguments: dict[str, Any]) -> Any:
    ran.clear()
    ctx = make_test_ctx(tool_middleware=[egress()])
    return await ctx.invoker.invoke_tool(ToolRequest(t.name, arguments, t), ctx)


async def test_a_url_inside_a_dataclass_argument_is_checked() -> None:
    with pytest.raises(EgressRefused) as info:
        await call(send, {"request": {"url": "http://169.254.169.254/", "method": "GET"}})
    assert str(info.value) == (
        "tool 'send' call refused: argument 'request.url' = 'http://169.254.169.254/' is not "
        "allowed: 169.254.169.254 is a private address"
    )
    assert info.value.argument == "request.url"
    assert ran == []
    assert await call(send, {"request": {"url": "https://example.com/"}}) == (
        "GET https://example.com/"
    )


async def test_a_structured_value_passed_as_an_instance_is_checked() -> None:
    with pytest.raises(EgressRefused) as info:
        await call(send, {"request": Request(url="http://0x7f.1/")})
    assert info.value.reason == "127.0.0.1 is a loopback address"
    assert ran == []


SAFE = {"source": "https://a.example/", "job": {"name": "j"}}


@pytest.mark.parametrize(
    ("arguments", "argument"),
    [
        ({**SAFE, "source": "http://[::1]/"}, "source"),
        ({**SAFE, "job": {"name": "j", "request": {"url": "http://0/"}}}, "job.request.url"),
        ({**SAFE, "target": {"url": "http://10.1/"}}, "target.url"),
        ({**SAFE, "mirror": {"href": "http://localhost/"}}, "mirror.href"),
        ({**SAFE, "mirror": {"address": "http://localhost/"}}, "mirror.address"),
    ],
)
async def test_every_named_url_argument_is_checked(
    arguments: dict[str, Any], argument: str
) -> None:
    with pytest.raises(EgressRefused) as info:
        await call(copy, arguments)
    assert info.value.argument == argument
    assert ran == []
    assert await call(copy, SAFE) == "copied"


async def test_absent_optional_structures_hold_no_url() -> None:
    assert await call(copy, {"source": "https://a.example/", "job": {"name": "j"}}) == "copied"
    assert await call(
        copy,
        {"source": "https://a.example/", "job": {"name": "j", "request": None}, "mirror": None},
    ) == "copied"


async def test_each_url_of_an_array_argument_is_checked() -> None:
    with pytest.raises(EgressRefused) as info:
        await call(fetch_all, {"urls": ["https://example.com/", "http://192.168.0.1/"]})
    assert str(info.value) == (
        "tool 'fetch_all' call refused: argument 'urls' = 'http://192.168.0.1/' is not "
        "allowed: 192.168.0.1 is a private address"
    )
    assert await call(fetch_all, {"urls": ["https://example.com/", "https://example.org/"]}) == 2


async def test_a_malformed_structure_is_left_to_the_argument_check() -> None:
    with pytest.raises(ToolArgumentError) as info:
        await call(send, {"request": "http://127.0.0.1/"})
    assert str(info.value) == (
        "tool 'send' call rejected: invalid argument(s): request: expected an object for "
        "Request, got string 'http://127.0.0.1/'. Accepted arguments: ['request']"
    )
    assert ran == []


def test_url_arg_paths_must_name_fields() -> None:
    with pytest.raises(ToolDefinitionError) as info:

        @tool(side_effecting=False, url_arg="request.uri")
        def get(request: Request) -> str:
            """Send one HTTP request and return the status line of the response."""
            return request.url

    assert str(info.value) == (
        "tool 'get': url_arg='request.uri' names no field 'uri' of Request; its fields: "
        "['url', 'method']"
    )


def test_url_arg_paths_go_through_structures_only() -> None:
    with pytest.raises(ToolDefinitionError) as info:

        @tool(side_effecting=False, url_arg="limit.url")
        def get(url: str, limit: int) -> str:
            """Fetch a web page and return the first part of its text content."""
            return url

    assert str(info.value) == (
        "tool 'get': url_arg='limit.url' goes into 'limit', which is int, not a dataclass, "
        "TypedDict, attrs class or Pydantic model with fields"
    )


def test_url_arg_must_be_names() -> None:
    with pytest.raises(ToolDefinitionError) as info:

        @tool(side_effecting=False, url_arg=["url", ""])  # type: ignore[arg-type]
        def get(url: str) -> str:
            """Fetch a web page and return the first part of its text content."""
            return url

    assert str(info.value) == (
        "tool 'get': url_arg= takes an argument name, a dotted path such as 'request.url', "
        "or a tuple of them; got ['url', '']"
    )


def test_the_tool_reports_its_url_paths() -> None:
    assert send.url_arg == "request.url"
    assert send.url_paths == (("request", "url"),)
    assert copy.url_paths == (
        ("source",),
        ("job", "request", "url"),
        ("target", "url"),
        ("mirror", "href"),
        ("mirror", "address"),
    )


class Link(pydantic.BaseModel):
    href: str = pydantic.Field(validation_alias=pydantic.AliasChoices("href", "url"))


def test_a_field_filled_under_alias_choices_cannot_be_a_url_path() -> None:
    with pytest.raises(ToolDefinitionError) as info:

        @tool(side_effecting=False, url_arg="link.href")
        def follow(link: Link) -> str:
            """Follow a link and return the first part of the page it points at."""
            return link.href

    assert str(info.value) == (
        "tool 'follow': url_arg='link.href': field 'href' of Link is filled through an "
        "AliasPath or AliasChoices, which egress() cannot follow; give it a plain alias"
    )


@tool(side_effecting=False, url_arg="batch.url")
def send_batch(batch: list[Request]) -> int:
    """Send several HTTP requests and return how many were sent."""
    ran.append(batch)
    return len(batch)


async def test_a_path_through_an_array_checks_every_item() -> None:
    assert send_batch.url_paths == (("batch", "url"),)
    with pytest.raises(EgressRefused) as info:
        await call(send_batch, {"batch": [{"url": "https://a.example/"}, {"url": "http://0/"}]})
    assert (info.value.argument, info.value.url) == ("batch.url", "http://0/")
    assert ran == []
    assert await call(send_batch, {"batch": [{"url": "https://a.example/"}]}) == 1
