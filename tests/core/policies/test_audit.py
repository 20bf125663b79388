"""audit(): one record per call, with hashes instead of raw values."""

from __future__ import annotations

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import Scope, ToolCall, ToolRequest
from agentkit.core.policies import AuditRecord, audit, egress, idempotent
from agentkit.core.policies._keys import hash_arguments
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.state.stores.memory import InMemoryStore
from agentkit.tools import tool

SECRET = "sk-live-0123456789abcdef"


@tool(side_effecting=True)
def charge_card(card_token: str, amount: int) -> str:
    """Charge a stored card token the given amount in cents and return a receipt id."""
    if amount <= 0:
        raise RuntimeError("the payment processor declined the charge")
    return f"receipt for {amount}"


@tool(side_effecting=False, url_arg="url")
def fetch(url: str) -> str:
    """Fetch a web page and return the first part of its text content."""
    return "page"


async def test_a_run_records_executed_deduped_refused_and_failed_calls_without_raw_values() -> (
    None
):
    log = InMemoryStore()
    llm = FakeLLM.script([
        Turn(tool_calls=(
            ToolCall("c1", "charge_card", {"card_token": SECRET, "amount": 500}),
        )),
        Turn(tool_calls=(
            ToolCall("c2", "charge_card", {"card_token": SECRET, "amount": 500}),  # a repeat
            ToolCall("c3", "fetch", {"url": "http://169.254.169.254/"}),
            ToolCall("c4", "charge_card", {"card_token": SECRET, "amount": "500"}),
            ToolCall("c5", "charge_card", {"card_token": SECRET, "amount": -1}),
        )),
        Turn(content="done"),
    ])
    agent = Agent(name="billing", model="fake", prompt="p",
                  cognition=ReActCognition(tools=[charge_card, fetch], max_concurrency=1))
    ctx = make_test_ctx(llm=llm, scope=Scope(org_id=3, domain_id=9),
                        tool_middleware=[audit(log), egress(), idempotent()])
    result = await agent.run("charge", ctx)
    assert result.output == "done"

    records = await log.list("audit")
    assert all(isinstance(r, AuditRecord) for r in records)
    assert [(r.call_id, r.tool, r.decision, r.error) for r in records] == [
        ("c1", "charge_card", "executed", None),
        ("c2", "charge_card", "deduped", None),
        ("c3", "fetch", "refused", "EgressRefused"),
        ("c4", "charge_card", "refused", "ToolArgumentError"),
        ("c5", "charge_card", "failed", "RuntimeError"),
    ]
    first = records[0]
    assert first.run_id == ctx.correlation_id
    assert first.scope == "org3:dom9"
    assert first.arguments_sha256 == hash_arguments({"card_token": SECRET, "amount": 500})
    assert first.result_sha256 is not None and len(first.result_sha256) == 64
    assert first.arguments is None
    assert records[2].result_sha256 is None
    assert SECRET not in repr(records)
    assert "169.254" not in repr(records)


async def test_include_arguments_keeps_raw_values_when_asked() -> None:
    ctx = make_test_ctx(tool_middleware=[audit(include_arguments=True)])
    request = ToolRequest("charge_card", {"card_token": "tok", "amount": 5}, charge_card)
    await ctx.invoker.invoke_tool(request, ctx)
    (record,) = await ctx.store.list("audit")
    assert dict(record.arguments) == {"card_token": "tok", "amount": 5}


async def test_a_broken_audit_store_never_breaks_the_call() -> None:
    class Broken(InMemoryStore):
        async def append(self, log: str, value: object) -> None:
            raise OSError("disk full")

    ctx = make_test_ctx(tool_middleware=[audit(Broken())])
    request = ToolRequest("charge_card", {"card_token": "tok", "amount": 5}, charge_card)
    assert await ctx.invoker.invoke_tool(request, ctx) == "receipt for 5"


async def test_records_say_whether_the_call_was_side_effecting() -> None:
    llm = FakeLLM.script([
        Turn(tool_calls=(
            ToolCall("c1", "charge_card", {"card_token": "t", "amount": 5}),
            ToolCall("c2", "fetch", {"url": "https://example.com/"}),
        )),
        Turn(content="done"),
    ])
    agent = Agent(name="billing", model="fake", prompt="p",
                  cognition=ReActCognition(tools=[charge_card, fetch], max_concurrency=1))
    ctx = make_test_ctx(llm=llm, tool_middleware=[audit()])
    await agent.run("charge", ctx)

    records = await ctx.store.list("audit")
    assert [(r.tool, r.side_effecting) for r in records] == [
        ("charge_card", True), ("fetch", False),
    ]


def test_audit_log_of_names_where_the_contexts_audit_writes() -> None:
    from agentkit.core.policies import audit_log_of

    own = InMemoryStore()
    assert audit_log_of(make_test_ctx()) is None
    ctx = make_test_ctx(tool_middleware=[audit()])
    assert audit_log_of(ctx) == (ctx.store, "audit")
    assert audit_log_of(make_test_ctx(tool_middleware=[idempotent(), audit(own, log="calls")])) == (
        own, "calls",
    )
