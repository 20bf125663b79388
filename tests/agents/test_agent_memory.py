"""Agent(memory=...): the memory is queried with the task when a run starts or resumes,
and what it returns is in the system prompt of every model request of that run."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from agentkit.agents import Agent, Skill
from agentkit.agents.agent import memory_prompt
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ToolCall
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.state.memory import FileMemory, MemoryItem
from agentkit.tools import InMemoryFiles, tool

RECALLED = (
    "Notes recalled from your memory for this task (they may be out of date):\n"
    "<memories>\n"
    '<memory source="/memories/prefs.md">\nThe user drinks green tea.\n</memory>\n'
    "</memories>"
)


class Recorder:
    """A memory source that records its queries and answers from a fixed list."""

    def __init__(self, *items: MemoryItem) -> None:
        self.items = items
        self.queries: list[tuple[str, int]] = []

    async def query(self, text: str, k: int, ctx: Any) -> Sequence[MemoryItem]:
        self.queries.append((text, k))
        return self.items


def notes() -> FileMemory:
    return FileMemory(InMemoryFiles({
        "/memories/prefs.md": "The user drinks green tea.",
        "/memories/deploys.md": "Deploys need a green CI run.",
    }))


async def test_recalled_notes_join_the_system_prompt() -> None:
    llm = FakeLLM("Green tea, as usual.")
    agent = Agent("barista", "fake", "You make drinks.", memory=notes())

    result = await agent.run("What tea does the user like?", make_test_ctx(llm=llm))

    assert result.output == "Green tea, as usual."
    assert llm.requests[0].system == "You make drinks.\n\n" + RECALLED


async def test_every_request_of_the_run_carries_them() -> None:
    @tool(side_effecting=False)
    def brew(kind: str) -> str:
        """Brew one cup of the named kind of tea and report when it is ready."""
        return f"{kind} ready"

    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "brew", {"kind": "green"}),)),
        Turn(content="Your green tea is ready."),
    ])
    agent = Agent("barista", "fake", "You make drinks.", ReActCognition([brew]),
                  memory=notes())

    await agent.run("Make the user's usual tea", make_test_ctx(llm=llm))

    assert [r.system for r in llm.requests] == ["You make drinks.\n\n" + RECALLED] * 2


async def test_no_memory_and_no_match_leave_the_prompt_alone() -> None:
    for memory in (None, Recorder()):
        llm = FakeLLM("ok")
        await Agent("a", "fake", "Be brief.", memory=memory).run("hi", make_test_ctx(llm=llm))
        assert llm.requests[0].system == "Be brief."


async def test_the_task_and_memory_k_are_the_query() -> None:
    memory = Recorder(*(MemoryItem(f"fact {i}", f"s{i}") for i in range(9)))
    llm = FakeLLM("ok")

    await Agent("a", "fake", "", memory=memory, memory_k=2).run("the task", make_test_ctx(llm=llm))

    assert memory.queries == [("the task", 2)]
    assert llm.requests[0].system == (
        "Notes recalled from your memory for this task (they may be out of date):\n<memories>\n"
        '<memory source="s0">\nfact 0\n</memory>\n<memory source="s1">\nfact 1\n</memory>\n'
        "</memories>"
    )


async def test_a_resumed_run_recalls_again_from_its_task() -> None:
    @tool(side_effecting=True)
    def order(kind: str) -> str:
        """Order a box of the named tea from the shop, charged to the team card."""
        return f"ordered {kind}"

    memory = Recorder(MemoryItem("The user drinks green tea.", "/memories/prefs.md"))
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "order", {"kind": "green"}),)),
        Turn(content="Ordered."),
    ])
    agent = Agent("buyer", "fake", "You buy things.", ReActCognition([order]), memory=memory)
    ctx = make_test_ctx(llm=llm, autonomy="gated", correlation_id="run-7")

    assert (await agent.run("Order the user's tea", ctx)).stop_reason == "suspended"
    later = make_test_ctx(llm=llm, store=ctx.store, autonomy="gated")
    result = await agent.resume("run-7", {"c1": "approve"}, later)

    assert result.output == "Ordered."
    assert memory.queries == [("Order the user's tea", 5)] * 2
    assert llm.requests[1].system == "You buy things.\n\n" + RECALLED


async def test_recall_is_observed() -> None:
    seen: list[tuple[str, dict[str, Any]]] = []
    ctx = make_test_ctx(llm=FakeLLM("ok"), observer=lambda kind, data: seen.append((kind, data)))

    await Agent("a", "fake", "p", memory=notes()).run("tea", ctx)

    recalled = [data for kind, data in seen if kind == "memory.recalled"]
    assert recalled == [{"run_id": ctx.correlation_id, "depth": 0, "agent": "a",
                         "sources": ["/memories/prefs.md"]}]


async def test_a_skill_hands_its_memory_to_its_agent() -> None:
    skill = Skill("barista", "Makes the user's usual drink.", "You make drinks.",
                  memory=notes())
    llm = FakeLLM("Green tea.")

    agent = skill.as_agent("fake")
    await agent.run("Which tea?", make_test_ctx(llm=llm))

    assert agent.memory is skill.memory
    assert llm.requests[0].system == "You make drinks.\n\n" + RECALLED


def test_memory_must_be_a_memory_source() -> None:
    with pytest.raises(TypeError, match=r"Agent\(memory=...\) takes a memory source"):
        Agent("a", "fake", "p", memory="notes.md")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="memory_k must be at least 1, got 0"):
        Agent("a", "fake", "p", memory=notes(), memory_k=0)


def test_sources_are_quoted_in_the_prompt() -> None:
    assert memory_prompt([MemoryItem("x", 'a"<b')]) == (
        "Notes recalled from your memory for this task (they may be out of date):\n"
        '<memories>\n<memory source="a&quot;&lt;b">\nx\n</memory>\n</memories>'
    )
    assert memory_prompt([]) == ""
