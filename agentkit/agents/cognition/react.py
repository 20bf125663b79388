"""ReActCognition: the tool loop: the model asks for tools, they run, it reads the results."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from agentkit.agents.guarding import check_calls
from agentkit.agents.recovery import settle_interrupted
from agentkit.agents.run import AgentRun
from agentkit.core.contracts.ports import Tool
from agentkit.tools.registry import ToolRegistry

__all__ = ["ReActCognition"]


class ReActCognition:
    """Reason and act: each turn advertises the tools; the calls the model makes run
    concurrently (bounded) through ``ctx.invoker.invoke_tool``; every failure comes back
    as a tool result the model reads next turn; the loop ends when the model answers
    without calling a tool, or after ``max_iterations`` model calls.

    If any call of a turn must wait for a human (see ``should_gate``), none of that
    turn's calls run: the run suspends with all of them held.
    """

    __slots__ = ("max_concurrency", "max_iterations", "tools")

    def __init__(
        self,
        tools: ToolRegistry | Iterable[Tool | Callable[..., Any]] = (),
        *,
        max_iterations: int = 10,
        max_concurrency: int = 8,
    ) -> None:
        if max_iterations < 1:
            raise ValueError(f"max_iterations must be at least 1, got {max_iterations}")
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency}")
        self.tools = tools if isinstance(tools, ToolRegistry) else ToolRegistry.from_tools(tools)
        self.max_iterations = max_iterations
        self.max_concurrency = max_concurrency

    async def advance(self, run: AgentRun) -> None:
        """Drive ``run`` from wherever it stands until it completes, suspends or runs out
        of iterations."""
        tools = self.tools
        if run.interrupted and await settle_interrupted(run, tools):
            return
        while True:
            if run.open_calls:
                await check_calls(run, tools)  # before a person or a tool sees them
                if not run.pending:
                    pending = run.gate(tools)
                    if pending:
                        await run.suspend(pending)
                        return
                await run.answer_open_calls(tools, self.max_concurrency)
                if run.status == "suspended":
                    return  # a person decides (here or in a sub-run): see answer_open_calls
            if run.steps >= self.max_iterations:
                await run.stop("max_iterations")
                return
            result = await run.call_model(tools.schemas())
            if not result.tool_calls and await run.finish_with(result.content):
                return

    def __repr__(self) -> str:
        return (
            f"ReActCognition(tools={list(self.tools.names())}, "
            f"max_iterations={self.max_iterations})"
        )
