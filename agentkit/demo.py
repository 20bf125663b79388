"""The scripted demo ``make demo`` runs: a tool call through the invoker, step by step."""

from __future__ import annotations

import asyncio

from agentkit.core.contracts.types import Scope, ToolRequest
from agentkit.core.policies import idempotent
from agentkit.core.testing import make_test_ctx
from agentkit.tools import ToolArgumentError, ToolRegistry, tool

_sent: list[str] = []


@tool(side_effecting=False, idempotent=True)
def city_population(city: str) -> int:
    """Look up the most recent census population for a named city."""
    return {"lisbon": 545_000, "porto": 231_000}.get(city.lower(), 0)


@tool(side_effecting=True)
def send_report(to: str, body: str) -> str:
    """Email a short report to one recipient and return the delivery status."""
    _sent.append(to)
    return f"queued for {to}"


async def main() -> None:
    registry = ToolRegistry.from_tools([city_population, send_report])
    ctx = make_test_ctx(scope=Scope(org_id=1, domain_id=1), tool_middleware=[idempotent()])
    print("agentkit demo (scripted, offline: no model is called)\n")
    for schema in registry.schemas():
        print(f"advertised: {schema.name}: {schema.parameters}")

    call = ToolRequest(name="city_population", arguments={"city": "Lisbon"},
                       tool=registry.get("city_population"))
    print(f"\n-> {call.name}({dict(call.arguments)})")
    print(f"<- {await ctx.invoker.invoke_tool(call, ctx)}")

    bad = ToolRequest(name="city_population", arguments={"town": "Porto"},
                      tool=registry.get("city_population"))
    print(f"\n-> {bad.name}({dict(bad.arguments)})")
    try:
        await ctx.invoker.invoke_tool(bad, ctx)
    except ToolArgumentError as exc:
        print(f"<- refused before the tool ran: {exc}")

    email = ToolRequest(name="send_report", arguments={"to": "ops@example.com", "body": "hi"},
                        tool=registry.get("send_report"))
    for attempt in (1, 2):
        print(f"\n-> {email.name}({dict(email.arguments)})  [attempt {attempt}]")
        print(f"<- {await ctx.invoker.invoke_tool(email, ctx)} ({email.meta['idempotency']})")
    print(f"\nemails actually sent: {len(_sent)}")


if __name__ == "__main__":
    asyncio.run(main())
