"""Each policy reads the tool's traits: a tool that declares only ``traits`` (and the
Protocol's two flags) is metered, vetted, retried and deduplicated by them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from agentkit.core.contracts.traits import ToolTraits
from agentkit.core.contracts.types import ToolRequest, ToolSchema
from agentkit.core.policies import Budget, EgressRefused, egress, idempotent, meter, retry
from agentkit.core.runtime.context import RunContext
from agentkit.core.testing import make_test_ctx
from agentkit.state.stores.memory import InMemoryStore


class Declared:
    """A tool that declares everything in one ``traits`` value."""

    name = "upload"
    description = "Upload a file to a URL; repeating an upload of one call is safe."
    schema = ToolSchema("upload", "Upload a file to a URL.", {})
    output_schema = None
    side_effecting = True
    requires_approval = False
    traits = ToolTraits(
        side_effecting=True,
        idempotent=True,
        cost_usd=0.5,
        url_paths=(("target",),),
        idempotency_scope="call",
    )

    def __init__(self, failures: int = 0) -> None:
        self.failures = failures
        self.runs = 0

    async def run(self, args: Mapping[str, Any], ctx: RunContext | None) -> str:
        self.runs += 1
        if self.failures:
            self.failures -= 1
            raise TimeoutError("the upload timed out")
        return f"uploaded #{self.runs}"


def request(upload: Declared, target: str, call_id: str = "c1") -> ToolRequest:
    return ToolRequest("upload", {"target": target}, upload, call_id=call_id)


async def test_meter_charges_the_cost_the_traits_declare() -> None:
    budget = Budget(max_cost_usd=1.0)
    ctx = make_test_ctx(tool_middleware=[meter()], budget=budget)
    await ctx.invoker.invoke_tool(request(Declared(), "https://example.com/"), ctx)
    assert budget.spent_usd == 0.5


async def test_egress_vets_the_url_paths_the_traits_declare() -> None:
    upload = Declared()
    ctx = make_test_ctx(tool_middleware=[egress()])
    with pytest.raises(EgressRefused) as error:
        await ctx.invoker.invoke_tool(request(upload, "http://127.0.0.1/"), ctx)
    assert (error.value.argument, upload.runs) == ("target", 0)


async def test_retry_repeats_a_call_the_traits_call_idempotent() -> None:
    upload = Declared(failures=2)
    ctx = make_test_ctx(tool_middleware=[retry(max_attempts=3, backoff=lambda n: 0.0)])
    result = await ctx.invoker.invoke_tool(request(upload, "https://example.com/"), ctx)
    assert (result, upload.runs) == ("uploaded #3", 3)


async def test_idempotent_keys_on_the_call_when_the_traits_scope_it_so() -> None:
    upload = Declared()
    ctx = make_test_ctx(tool_middleware=[idempotent()], store=InMemoryStore())
    first = await ctx.invoker.invoke_tool(request(upload, "https://example.com/"), ctx)
    again = await ctx.invoker.invoke_tool(request(upload, "https://example.com/"), ctx)
    other = await ctx.invoker.invoke_tool(request(upload, "https://example.com/", "c2"), ctx)
    assert (first, again, other) == ("uploaded #1", "uploaded #1", "uploaded #2")
