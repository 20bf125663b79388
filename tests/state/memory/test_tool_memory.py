"""ToolMemory turns a tool into a memory source, sending only arguments the tool accepts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from agentkit.core.contracts.types import ToolRequest, ToolSchema
from agentkit.core.testing import FakeLLM, make_test_ctx
from agentkit.state.memory import MemoryItem, MemorySource, ToolMemory
from agentkit.tools import ToolDefinitionError, tool

KB = ["Deploys happen on Tuesdays.", "Rollbacks need two approvers.", "CI must be green."]


@tool(side_effecting=False)
def search(query: str) -> list[str]:
    """Search the team knowledge base for passages matching a free-text query."""
    return [p for p in KB if any(w in p.lower() for w in query.lower().split())]


@tool(side_effecting=False)
def top_k_search(q: str, k: int = 10, team: str = "all") -> list[dict[str, Any]]:
    """Search the knowledge base and return the k best passages with their scores."""
    return [{"text": p, "score": 0.9 - i / 10, "source": f"kb/{team}/{i}"}
            for i, p in enumerate(KB[:k])]


async def test_a_tool_without_k_gets_only_the_query() -> None:
    """The @tool binder rejects unknown arguments; ToolMemory never sends one."""
    memory = ToolMemory(search)

    assert isinstance(memory, MemorySource)
    assert (memory.query_argument, memory.k_argument) == ("query", None)
    assert await memory.query("deploys rollbacks", 5, None) == (
        MemoryItem("Deploys happen on Tuesdays.", "search", 1.0),
        MemoryItem("Rollbacks need two approvers.", "search", 0.5),
    )
    assert len(await memory.query("deploys rollbacks", 1, None)) == 1


async def test_k_and_fixed_arguments_go_to_a_tool_that_takes_them() -> None:
    memory = ToolMemory(top_k_search, arguments={"team": "infra"})

    assert (memory.query_argument, memory.k_argument) == ("q", "k")
    assert await memory.query("anything", 2, None) == (
        MemoryItem("Deploys happen on Tuesdays.", "kb/infra/0", 0.9),
        MemoryItem("Rollbacks need two approvers.", "kb/infra/1", 0.8),
    )


def test_names_the_tool_does_not_accept_are_refused_up_front() -> None:
    with pytest.raises(ToolDefinitionError) as caught:
        ToolMemory(search, arguments={"limit": 3})
    assert str(caught.value) == (
        "ToolMemory('search'): arguments= names ['limit'], which it does not accept. "
        "The tool accepts ['query']"
    )
    with pytest.raises(ToolDefinitionError, match="query_argument='topic' is not one of"):
        ToolMemory(search, query_argument="topic")
    with pytest.raises(ToolDefinitionError, match="k_argument='n' is not one of"):
        ToolMemory(search, k_argument="n")


def test_a_tool_with_no_query_argument_needs_one_named() -> None:
    @tool(side_effecting=False)
    def lookup(topic: str) -> str:
        """Look up the team's standing notes about one topic by its name."""
        return f"notes on {topic}"

    with pytest.raises(ToolDefinitionError, match="no argument to put the query in"):
        ToolMemory(lookup)
    assert ToolMemory(lookup, query_argument="topic").query_argument == "topic"


async def test_a_plain_function_works_too() -> None:
    def recall(query: str, limit: int) -> str:
        """Recall what the team wrote down about a query, newest first."""
        return f"{limit} notes about {query}"

    memory = ToolMemory(recall, source="notes")

    assert memory.k_argument == "limit"
    assert await memory.query("tea", 3, None) == (MemoryItem("3 notes about tea", "notes", 1.0),)


class _Opaque:
    """A duck-typed tool that does not say what it accepts."""

    name = "opaque"
    description = "An opaque retrieval tool that accepts whatever it is given."
    schema: ToolSchema | None = None
    output_schema = None
    side_effecting = False
    requires_approval = False

    def __init__(self) -> None:
        self.seen: list[Mapping[str, Any]] = []

    async def run(self, args: Mapping[str, Any], ctx: Any) -> Any:
        self.seen.append(dict(args))
        return [MemoryItem("kept", "opaque", 0.7), {"content": "c"}, {"other": 1}, 42, None]


async def test_results_of_every_shape_become_items() -> None:
    opaque = _Opaque()
    memory = ToolMemory(opaque, query_argument="text", k_argument="n")

    assert await memory.query("x", 10, None) == (
        MemoryItem("kept", "opaque", 0.7),
        MemoryItem("c", "opaque", 0.5),
        MemoryItem('{"other": 1}', "opaque", 1 / 3),
        MemoryItem("42", "opaque", 0.25),
        MemoryItem("None", "opaque", 0.2),
    )
    assert opaque.seen == [{"text": "x", "n": 10}]
    assert await ToolMemory(_Opaque(), query_argument="q").query("x", 0, None) == ()


async def test_with_a_context_the_call_goes_through_the_invoker() -> None:
    seen: list[str] = []

    async def record(request: ToolRequest, ctx: Any, call_next: Any) -> Any:
        seen.append(f"{request.name}:{dict(request.arguments)}")
        return await call_next(request, ctx)

    ctx = make_test_ctx(llm=FakeLLM(), tool_middleware=[record])
    items = await ToolMemory(search).query("green", 3, ctx)

    assert items == (MemoryItem("CI must be green.", "search", 1.0),)
    assert seen == ["search:{'query': 'green'}"]


async def test_nothing_found_is_no_items() -> None:
    @tool(side_effecting=False)
    def empty(query: str) -> None:
        """Search a knowledge base that happens to be completely empty."""

    assert await ToolMemory(empty).query("x", 3, None) == ()
