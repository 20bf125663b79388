"""The Invoker: middleware chains folded once, list[0] outermost, ending in the tool or model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentkit.core.contracts.errors import ProviderError, ToolNotFoundError, is_transient
from agentkit.core.contracts.ports import ChatHandler, ToolHandler
from agentkit.core.contracts.types import (
    ChatRequest,
    LLMResult,
    Message,
    StreamEvent,
    TextDelta,
    ToolRequest,
    Usage,
)
from agentkit.core.runtime import Invoker, RunContext
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.tools import tool

NOT_CALLABLE = (
    "middleware 42 is not callable; a middleware is `async def mw(request, ctx, call_next)`"
)


def make_echo(log: list[str]) -> Any:
    @tool(side_effecting=False)
    async def echo(text: str) -> str:
        """Return the text it was given, unchanged, so a test can see the call."""
        log.append(f"tool({text})")
        return text.upper()

    return echo


def recording(name: str, log: list[str]) -> Any:
    async def mw(request: Any, ctx: RunContext, call_next: Any) -> Any:
        log.append(f"{name}-in")
        result = await call_next(request, ctx)
        log.append(f"{name}-out")
        return result

    return mw


def echo_request(log: list[str], text: str = "hi") -> ToolRequest:
    return ToolRequest(name="echo", arguments={"text": text}, tool=make_echo(log))


async def test_tool_middlewares_run_with_the_first_outermost() -> None:
    log: list[str] = []
    ctx = make_test_ctx(tool_middleware=[recording("a", log), recording("b", log)])
    assert await ctx.invoker.invoke_tool(echo_request(log), ctx) == "HI"
    assert log == ["a-in", "b-in", "tool(hi)", "b-out", "a-out"]


async def test_with_no_middleware_the_tool_runs_directly() -> None:
    log: list[str] = []
    ctx = make_test_ctx()
    assert await ctx.invoker.invoke_tool(echo_request(log), ctx) == "HI"
    assert log == ["tool(hi)"]


async def test_a_middleware_sees_the_request_and_the_context() -> None:
    log: list[str] = []
    seen: list[tuple[ToolRequest, RunContext]] = []

    async def observe(request: ToolRequest, ctx: RunContext, call_next: ToolHandler) -> Any:
        seen.append((request, ctx))
        return await call_next(request, ctx)

    ctx = make_test_ctx(tool_middleware=[observe])
    request = echo_request(log)
    await ctx.invoker.invoke_tool(request, ctx)
    assert len(seen) == 1
    assert seen[0][0] is request
    assert seen[0][1] is ctx


async def test_a_middleware_may_short_circuit() -> None:
    log: list[str] = []

    async def cached(request: ToolRequest, ctx: RunContext, call_next: ToolHandler) -> Any:
        return "from cache"

    ctx = make_test_ctx(tool_middleware=[recording("outer", log), cached, recording("inner", log)])
    assert await ctx.invoker.invoke_tool(echo_request(log), ctx) == "from cache"
    assert log == ["outer-in", "outer-out"]


async def test_a_middleware_may_re_invoke_the_rest_of_the_chain() -> None:
    log: list[str] = []

    async def twice(request: ToolRequest, ctx: RunContext, call_next: ToolHandler) -> Any:
        first = await call_next(request, ctx)
        second = await call_next(request, ctx)
        return [first, second]

    ctx = make_test_ctx(tool_middleware=[twice, recording("inner", log)])
    assert await ctx.invoker.invoke_tool(echo_request(log), ctx) == ["HI", "HI"]
    assert log == ["inner-in", "tool(hi)", "inner-out", "inner-in", "tool(hi)", "inner-out"]


async def test_a_middleware_may_pass_a_different_request_on() -> None:
    log: list[str] = []

    async def rewrite(request: ToolRequest, ctx: RunContext, call_next: ToolHandler) -> Any:
        return await call_next(
            ToolRequest(name=request.name, arguments={"text": "bye"}, tool=request.tool), ctx
        )

    ctx = make_test_ctx(tool_middleware=[rewrite])
    assert await ctx.invoker.invoke_tool(echo_request(log), ctx) == "BYE"
    assert log == ["tool(bye)"]


async def test_a_request_without_a_tool_is_not_found() -> None:
    ctx = make_test_ctx()
    with pytest.raises(ToolNotFoundError) as info:
        await ctx.invoker.invoke_tool(ToolRequest(name="ghost"), ctx)
    assert str(info.value) == "no tool named 'ghost'. Available tools: []"


async def test_a_generator_of_middlewares_is_not_used_up_into_an_empty_chain() -> None:
    log: list[str] = []
    invoker = Invoker(tool_middleware=(mw for mw in [recording("a", log), recording("b", log)]))
    ctx = make_test_ctx()
    assert len(invoker.tool_middleware) == 2
    assert await invoker.invoke_tool(echo_request(log), ctx) == "HI"
    assert await invoker.invoke_tool(echo_request(log, "again"), ctx) == "AGAIN"
    assert log == [
        "a-in", "b-in", "tool(hi)", "b-out", "a-out",
        "a-in", "b-in", "tool(again)", "b-out", "a-out",
    ]


@pytest.mark.parametrize("chain", ["tool_middleware", "chat_middleware"])
def test_a_middleware_that_is_not_callable_is_refused_at_construction(chain: str) -> None:
    with pytest.raises(TypeError) as info:
        Invoker(**{chain: [42]})
    assert str(info.value) == NOT_CALLABLE


def chat_request() -> ChatRequest:
    return ChatRequest(model="fake", messages=(Message(role="user", content="Say hello"),))


def recording_chat(name: str, log: list[str]) -> Any:
    async def mw(request: ChatRequest, ctx: RunContext, call_next: ChatHandler) -> LLMResult:
        log.append(f"{name}-in")
        result = await call_next(request, ctx)
        log.append(f"{name}-out:{result.content}")
        return result

    return mw


async def test_chat_middlewares_run_first_outermost_and_end_in_the_model() -> None:
    log: list[str] = []
    llm = FakeLLM("hello there")
    chain = [recording_chat("a", log), recording_chat("b", log)]
    ctx = make_test_ctx(llm=llm, chat_middleware=chain)
    request = chat_request()

    result = await ctx.invoker.chat(request, ctx)

    assert result == LLMResult(
        content="hello there",
        usage=Usage(input_tokens=2, output_tokens=2, requests=1),
        finish_reason="stop",
        model="fake",
    )
    assert log == ["a-in", "b-in", "b-out:hello there", "a-out:hello there"]
    assert llm.requests == [request]


async def test_a_chat_middleware_may_short_circuit_the_model() -> None:
    llm = FakeLLM()  # strict: any call would raise

    async def canned(request: ChatRequest, ctx: RunContext, call_next: ChatHandler) -> LLMResult:
        return LLMResult(content="canned")

    ctx = make_test_ctx(llm=llm, chat_middleware=[canned])
    assert await ctx.invoker.chat(chat_request(), ctx) == LLMResult(content="canned")
    assert llm.requests == []


async def test_stream_yields_the_deltas_then_the_final_result() -> None:
    log: list[str] = []
    seen: list[ChatRequest] = []

    async def observe(request: ChatRequest, ctx: RunContext, call_next: ChatHandler) -> LLMResult:
        seen.append(request)
        return await call_next(request, ctx)

    llm = FakeLLM.script([Turn(content="hello big world")])
    ctx = make_test_ctx(llm=llm, chat_middleware=[observe, recording_chat("a", log)])
    request = chat_request()

    events = [event async for event in ctx.invoker.stream(request, ctx)]

    assert events == [
        TextDelta("hello"),
        TextDelta(" big"),
        TextDelta(" world"),
        LLMResult(
            content="hello big world",
            usage=Usage(input_tokens=2, output_tokens=3, requests=1),
            finish_reason="stop",
            model="fake",
        ),
    ]
    assert seen == [request]
    assert log == ["a-in", "a-out:hello big world"]
    assert llm.requests == [request]


async def test_stream_yields_the_result_a_middleware_substitutes() -> None:
    async def canned(request: ChatRequest, ctx: RunContext, call_next: ChatHandler) -> LLMResult:
        await call_next(request, ctx)
        return LLMResult(content="rewritten")

    ctx = make_test_ctx(llm=FakeLLM("two words"), chat_middleware=[canned])
    events = [event async for event in ctx.invoker.stream(chat_request(), ctx)]
    assert events == [TextDelta("two"), TextDelta(" words"), LLMResult(content="rewritten")]


async def test_stream_raises_what_the_model_raised() -> None:
    error = ConnectionError("provider down")
    ctx = make_test_ctx(llm=FakeLLM.script([Turn(error=error)]))
    with pytest.raises(ConnectionError) as info:
        [event async for event in ctx.invoker.stream(chat_request(), ctx)]
    assert info.value is error


class _DropsOnce:
    """A model whose first stream breaks with a dropped connection after ``sent`` deltas."""

    def __init__(self, sent: int) -> None:
        self.sent = sent
        self.streams = 0

    async def chat(self, request: ChatRequest, ctx: RunContext) -> LLMResult:
        raise NotImplementedError

    async def stream(self, request: ChatRequest, ctx: RunContext) -> AsyncIterator[StreamEvent]:
        self.streams += 1
        pieces = ["Hel", "lo"]
        for index, piece in enumerate(pieces):
            if self.streams == 1 and index == self.sent:
                raise ConnectionError("connection reset by peer")
            yield TextDelta(piece)
        yield LLMResult(content="Hello")


async def retry_once(request: ChatRequest, ctx: RunContext, call_next: ChatHandler) -> LLMResult:
    try:
        return await call_next(request, ctx)
    except Exception as error:
        if not is_transient(error):
            raise
        return await call_next(request, ctx)


async def test_a_stream_that_breaks_before_any_delta_can_be_retried() -> None:
    llm = _DropsOnce(sent=0)
    ctx = make_test_ctx(llm=llm, chat_middleware=[retry_once])
    events = [event async for event in ctx.invoker.stream(chat_request(), ctx)]
    assert events == [TextDelta("Hel"), TextDelta("lo"), LLMResult(content="Hello")]
    assert llm.streams == 2


async def test_a_stream_that_breaks_after_a_delta_is_not_retried_into_duplicates() -> None:
    """A retry would deliver the same text twice; the break is reported as permanent."""
    llm = _DropsOnce(sent=1)
    ctx = make_test_ctx(llm=llm, chat_middleware=[retry_once])
    events: list[StreamEvent] = []
    with pytest.raises(ProviderError) as info:
        async for event in ctx.invoker.stream(chat_request(), ctx):
            events.append(event)
    assert events == [TextDelta("Hel")]
    assert llm.streams == 1
    assert str(info.value) == (
        "the model stream broke after 1 delta(s) had been delivered (ConnectionError: "
        "connection reset by peer); retrying would deliver them twice, so it is not retried. "
        "Run the turn again, or use chat(), which can be retried safely"
    )
    assert (info.value.transient, info.value.kind) == (False, "stream_interrupted")
    assert isinstance(info.value.__cause__, ConnectionError)
