"""A run on Temporal keeps what the model thought: reasoning parts and per-call provider
state cross the activity payloads and come back on the next model call."""

from __future__ import annotations

from temporalio.client import Client

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ChatRequest, LLMResult, ReasoningPart, ToolCall
from agentkit.core.runtime.context import RunContext
from agentkit.core.testing import make_test_ctx
from agentkit.integrations.temporal import AgentWorker, TemporalAgents
from agentkit.tools import tool

THOUGHT = ReasoningPart("anthropic", "Count once, then answer.",
                        {"type": "thinking", "signature": "EqQBsig=="})
SIGNED = {"gemini": {"thought_signature": "CiQBsig"}}


@tool(side_effecting=False)
def count(n: int) -> int:
    """Return the integer that comes right after n."""
    return n + 1


class Thinker:
    """A model that thinks before its tool call, then says whether its thought and the
    call's signature came back with the tool result."""

    async def chat(self, request: ChatRequest, ctx: RunContext) -> LLMResult:
        if not any(m.role == "tool" for m in request.messages):
            call = ToolCall("c1", "count", {"n": 1}, provider_state=SIGNED)
            return LLMResult("", (call,), reasoning=(THOUGHT,))
        asked = request.messages[1]
        kept = asked.reasoning == (THOUGHT,) and asked.tool_calls[0].provider_state == SIGNED
        return LLMResult(f"thought kept: {kept}")

    def stream(self, request: ChatRequest, ctx: RunContext) -> object:
        raise NotImplementedError


async def test_reasoning_and_call_state_cross_temporal_payloads(
    client: Client, task_queue: str
) -> None:
    agent = Agent("thinker", "think", "Count.", cognition=ReActCognition([count]))
    agents = TemporalAgents(client, task_queue=task_queue)
    async with AgentWorker(client, task_queue=task_queue, agents=[agent],
                           context=lambda: make_test_ctx(llm=Thinker())):
        result = await agents.run("thinker", "go", run_id="thinking-run")
    assert result.output == "thought kept: True"
    assert result.messages[1].reasoning == (THOUGHT,)
    assert result.messages[1].tool_calls[0].provider_state == SIGNED
