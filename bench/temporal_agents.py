"""The agent bench/temporal.py runs: two turns and one tool call, decided from the
transcript so any worker process can take any step."""

from __future__ import annotations

import agentkit
from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ChatRequest, LLMResult, ToolCall
from agentkit.core.runtime.context import RunContext
from agentkit.tools import tool


@tool(side_effecting=False)
async def forecast(city: str) -> str:
    """Return today's weather forecast for a city."""
    return f"{city}: sunny"


class TwoTurns:
    """First turn: one forecast call; second: the answer."""

    async def chat(self, request: ChatRequest, ctx: RunContext) -> LLMResult:
        results = [m for m in request.messages if m.role == "tool"]
        if not results:
            call = ToolCall("c1", "forecast", {"city": "Lisbon"})
            return LLMResult(content="", tool_calls=(call,))
        return LLMResult(content=results[0].content)

    def stream(self, request: ChatRequest, ctx: RunContext) -> object:
        raise NotImplementedError


agent = Agent("bench", "two-turns", "You report the weather.",
              cognition=ReActCognition([forecast]))


def context() -> RunContext:
    return agentkit.make_ctx(TwoTurns())
