"""meter() and Budget: ceilings checked before a call, usage charged after, exactly."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import (
    ChatRequest,
    Message,
    ModelSettings,
    ToolCall,
    ToolRequest,
    Usage,
)
from agentkit.core.policies import (
    DEFAULT_PRICES,
    Budget,
    BudgetExceeded,
    ModelPrice,
    PriceTable,
    meter,
)
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.tools import tool

ran: list[int] = []


@tool(side_effecting=False, cost_usd=0.01)
async def charged(n: int) -> int:
    """Do one unit of paid work and return the number it was given."""
    ran.append(n)
    await asyncio.sleep(0)
    return n


async def test_two_hundred_concurrent_calls_are_charged_exactly() -> None:
    ran.clear()
    budget = Budget(max_cost_usd=10.0)
    ctx = make_test_ctx(tool_middleware=[meter()], budget=budget)
    await asyncio.gather(*(
        ctx.invoker.invoke_tool(ToolRequest("charged", {"n": i}, charged), ctx)
        for i in range(200)
    ))
    assert len(ran) == 200
    assert budget.calls == 200
    assert budget.in_flight == 0
    assert budget.reserved_usd == pytest.approx(0.0, abs=1e-12)
    assert budget.spent_usd == pytest.approx(2.0)


async def test_the_call_that_would_cross_the_ceiling_is_refused_and_nothing_after_runs() -> None:
    ran.clear()
    budget = Budget(max_cost_usd=1.0)
    ctx = make_test_ctx(tool_middleware=[meter()], budget=budget)
    results = await asyncio.gather(
        *(ctx.invoker.invoke_tool(ToolRequest("charged", {"n": i}, charged), ctx)
          for i in range(200)),
        return_exceptions=True,
    )
    refused = [r for r in results if isinstance(r, BudgetExceeded)]
    assert len(ran) == 100
    assert len(refused) == 100
    assert budget.spent_usd == pytest.approx(1.0)
    assert budget.spent_usd <= budget.max_cost_usd  # never silently over
    assert str(refused[0]) == (
        "budget exceeded: tool call 'charged' refused: cost_usd would reach 1.01 over the "
        "ceiling of 1"
    )


async def test_max_calls_counts_model_and_tool_calls() -> None:
    budget = Budget(max_calls=2)
    ctx = make_test_ctx(tool_middleware=[meter()], budget=budget)
    for i in range(2):
        await ctx.invoker.invoke_tool(ToolRequest("charged", {"n": i}, charged), ctx)
    with pytest.raises(BudgetExceeded) as info:
        await ctx.invoker.invoke_tool(ToolRequest("charged", {"n": 9}, charged), ctx)
    assert (info.value.limit, info.value.ceiling, info.value.would_be) == ("calls", 2, 3)


async def test_max_concurrency_refuses_the_call_over_the_cap() -> None:
    gate = asyncio.Event()

    @tool(side_effecting=False)
    async def slow(n: int) -> int:
        """Wait until released, then return the number it was given."""
        await gate.wait()
        return n

    budget = Budget(max_concurrency=2)
    ctx = make_test_ctx(tool_middleware=[meter()], budget=budget)
    first = asyncio.ensure_future(ctx.invoker.invoke_tool(ToolRequest("slow", {"n": 1}, slow), ctx))
    second = asyncio.ensure_future(
        ctx.invoker.invoke_tool(ToolRequest("slow", {"n": 2}, slow), ctx)
    )
    await asyncio.sleep(0)
    with pytest.raises(BudgetExceeded) as info:
        await ctx.invoker.invoke_tool(ToolRequest("slow", {"n": 3}, slow), ctx)
    assert info.value.limit == "concurrency"
    gate.set()
    assert await asyncio.gather(first, second) == [1, 2]


async def test_model_calls_reserve_their_worst_case_and_charge_the_real_cost() -> None:
    prices = PriceTable({"m": ModelPrice(input=1_000_000.0, output=1_000_000.0)})  # $1/token
    llm = FakeLLM.script([Turn(content="hi", usage=Usage(input_tokens=3, output_tokens=2))])
    budget = Budget(max_cost_usd=100.0)
    ctx = make_test_ctx(llm=llm, chat_middleware=[meter(prices)], budget=budget)
    request = ChatRequest(
        model="m", messages=(Message("user", "x" * 40),), settings=ModelSettings(max_tokens=50)
    )
    await ctx.invoker.chat(request, ctx)
    assert budget.spent_usd == pytest.approx(5.0)
    assert budget.reserved_usd == pytest.approx(0.0)
    too_big = ChatRequest(
        model="m", messages=(Message("user", "x" * 40),), settings=ModelSettings(max_tokens=200)
    )
    with pytest.raises(BudgetExceeded) as info:
        await ctx.invoker.chat(too_big, ctx)
    assert info.value.limit == "cost_usd"
    assert len(llm.requests) == 1  # the refused call never reached the model


def test_price_table_matches_ids_and_snapshots_and_can_be_overridden() -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000)
    assert DEFAULT_PRICES.cost("claude-sonnet-4-5", usage) == pytest.approx(18.0)
    assert DEFAULT_PRICES.cost("anthropic:claude-sonnet-4-5", usage) == pytest.approx(18.0)
    assert DEFAULT_PRICES.cost("gpt-4o-mini-2024-07-18", usage) == pytest.approx(0.75)
    assert DEFAULT_PRICES.cost("unknown-model", usage) == 0.0
    custom = DEFAULT_PRICES.with_prices({"gpt-4o-mini": ModelPrice(1.0, 1.0)})
    assert custom.cost("gpt-4o-mini", usage) == pytest.approx(2.0)
    cached = Usage(cache_read_tokens=1_000_000, cache_write_tokens=1_000_000)
    assert DEFAULT_PRICES.cost("claude-sonnet-4-5", cached) == pytest.approx(0.3 + 3.75)


async def test_an_agent_run_over_budget_stops_with_budget_exceeded() -> None:
    ran.clear()
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "charged", {"n": 1}), ToolCall("c2", "charged", {"n": 2}))),
        Turn(content="never reached"),
    ])
    agent = Agent(name="a", model="fake", prompt="p",
                  cognition=ReActCognition(tools=[charged], max_concurrency=1))
    ctx = make_test_ctx(llm=llm, tool_middleware=[meter()], chat_middleware=[meter()],
                        budget=Budget(max_calls=2))
    result = await agent.run("go", ctx)
    assert result.stop_reason == "budget_exceeded"
    assert isinstance(result.evals["error"], BudgetExceeded)
    assert ran == [1]
    assert len(llm.requests) == 1


async def test_a_model_without_a_price_is_refused_under_a_money_ceiling() -> None:
    from agentkit.core.policies import UnpricedModel

    llm = FakeLLM("hi")
    ctx = make_test_ctx(llm=llm, chat_middleware=[meter()], budget=Budget(max_cost_usd=1.0))
    with pytest.raises(UnpricedModel) as info:
        await ctx.invoker.chat(ChatRequest(model="mystery-model", messages=()), ctx)
    assert str(info.value).startswith(
        "model call to 'mystery-model' refused: the run has a cost ceiling but no price is known"
    )
    assert llm.requests == []
    unbounded = make_test_ctx(llm=llm, chat_middleware=[meter()], budget=Budget(max_calls=5))
    assert (await unbounded.invoker.chat(ChatRequest(model="mystery-model", messages=()),
                                         unbounded)).content == "hi"


async def test_a_model_call_reserves_its_prompt_at_the_cache_write_price_when_dearer() -> None:
    """With prompt caching the prompt may be billed as a 1.25x cache write; the
    reservation covers that, so the budget is not crossed by the write premium."""
    prices = PriceTable({"m": ModelPrice(input=1_000_000.0, output=0.0,
                                         cache_write=1_250_000.0)})  # $1 and $1.25 a token
    llm = FakeLLM.script([Turn(content="hi", usage=Usage(cache_write_tokens=11))])
    # 40 characters estimate to 11 prompt tokens: $11 as input, $13.75 as a cache write.
    request = ChatRequest(
        model="m", messages=(Message("user", "x" * 40),), settings=ModelSettings(max_tokens=1)
    )
    budget = Budget(max_cost_usd=13.0)
    ctx = make_test_ctx(llm=llm, chat_middleware=[meter(prices)], budget=budget)
    with pytest.raises(BudgetExceeded) as info:
        await ctx.invoker.chat(request, ctx)
    assert info.value.limit == "cost_usd"
    roomy = Budget(max_cost_usd=14.0)
    ctx = make_test_ctx(llm=llm, chat_middleware=[meter(prices)], budget=roomy)
    await ctx.invoker.chat(request, ctx)
    assert roomy.spent_usd == pytest.approx(13.75)


async def test_a_ceiling_holds_o3_pro_to_its_own_price_not_o3s() -> None:
    """o3-pro costs ten times o3: a ceiling that admits an o3 call refuses the same
    call to o3-pro, and refuses gpt-5-pro, which has no price, outright."""
    from agentkit.core.policies import UnpricedModel

    request = ChatRequest(model="o3", messages=(Message("user", "hi"),),
                          settings=ModelSettings(max_tokens=10_000))
    llm = FakeLLM.script([Turn("fine")])
    budget = Budget(max_cost_usd=0.10)  # o3: at most $0.08 of output; o3-pro: $0.80
    ctx = make_test_ctx(llm=llm, chat_middleware=[meter()], budget=budget)
    assert (await ctx.invoker.chat(request, ctx)).content == "fine"
    with pytest.raises(BudgetExceeded) as info:
        await ctx.invoker.chat(dataclasses.replace(request, model="o3-pro"), ctx)
    assert (info.value.limit, info.value.what) == ("cost_usd", "model call to 'o3-pro'")
    with pytest.raises(UnpricedModel) as unpriced:
        await ctx.invoker.chat(dataclasses.replace(request, model="gpt-5-pro"), ctx)
    assert unpriced.value.model == "gpt-5-pro"
    assert len(llm.requests) == 1


def test_metered_says_whether_the_contexts_chat_chain_enforces_a_budget() -> None:
    from agentkit import make_ctx
    from agentkit.core.policies import meter, metered

    assert metered(make_ctx(FakeLLM("hi")))
    assert not metered(make_test_ctx())
    assert metered(make_test_ctx(chat_middleware=[meter()]))
    assert not metered(make_test_ctx(tool_middleware=[meter()]))  # model calls unmetered
