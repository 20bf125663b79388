"""tool.traits: every kind of tool fills one frozen value once, and a tool that only
satisfies the Protocol has its traits read once, on first use."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar

import pytest

from agentkit.agents import Agent
from agentkit.core.contracts.types import ToolRequest, ToolSchema
from agentkit.core.policies import Budget, egress, idempotent, meter, retry
from agentkit.core.testing import make_test_ctx
from agentkit.state.stores.memory import InMemoryStore
from agentkit.tools import (
    FileTool,
    ToolDefinitionError,
    ToolRegistry,
    ToolTraits,
    as_tool,
    ask_human,
    tool,
    traits_of,
)

FILE_ARGUMENTS = (
    "command", "path", "view_range", "file_text", "old_str", "new_str", "insert_line",
    "insert_text", "old_path", "new_path",
)


@tool(side_effecting=True, idempotent=True, requires_approval=True, url_arg="url", cost_usd=0.25)
def fetch_invoice(url: str, copies: int = 1) -> str:
    """Fetch an invoice document from a billing URL and file the given number of copies."""
    return url


@tool(side_effecting=False)
def lookup(q: str) -> str:
    """Look up a word in the project glossary and return its definition."""
    return q


def test_a_function_tool_fills_its_traits_from_the_decorator() -> None:
    assert fetch_invoice.traits == ToolTraits(
        side_effecting=True,
        idempotent=True,
        requires_approval=True,
        cost_usd=0.25,
        url_paths=(("url",),),
        accepted_arguments=("url", "copies"),
    )
    assert lookup.traits == ToolTraits(side_effecting=False, accepted_arguments=("q",))
    assert traits_of(fetch_invoice) is fetch_invoice.traits


def test_the_protocol_flags_read_the_traits_and_assigning_one_updates_them() -> None:
    @tool(side_effecting=False)
    def note(text: str) -> str:
        """Write a short note into the shared scratch pad for later turns."""
        return text

    assert (note.side_effecting, note.idempotent, note.requires_approval) == (False, False, False)
    note.requires_approval = True
    note.side_effecting = True
    assert note.traits == ToolTraits(
        side_effecting=True, requires_approval=True, accepted_arguments=("text",)
    )
    assert ToolRegistry.from_tools([note]).requires_approval("note") is True


def test_file_tool_traits_say_which_calls_only_read() -> None:
    files = FileTool(requires_approval=True)
    traits = files.traits
    assert dataclasses.replace(traits, read_only_call=None) == ToolTraits(
        side_effecting=True,
        requires_approval=True,
        idempotency_scope="call",
        accepted_arguments=FILE_ARGUMENTS,
    )
    assert traits.is_read_only_call({"command": "view", "path": "/memories"}) is True
    assert traits.is_read_only_call({"command": "delete", "path": "/memories/a"}) is False
    assert files.is_read_only_call({"command": "view"}) is True
    assert (files.side_effecting, files.requires_approval) == (True, True)
    assert FileTool().traits.requires_approval is False


def test_ask_human_traits_say_it_asks_a_person() -> None:
    assert ask_human.traits == ToolTraits(
        side_effecting=False, asks_human=True, accepted_arguments=("question",)
    )


def test_an_agent_as_a_tool_has_the_traits_as_tool_was_given() -> None:
    helper = Agent(name="helper", model="fake", prompt="You help.")
    delegate = as_tool(
        helper, name="helper", description="Delegate a sub-task to the helper agent.",
        side_effecting=True, idempotent=True,
    )
    assert delegate.traits == ToolTraits(
        side_effecting=True, idempotent=True, accepted_arguments=("task",)
    )


def test_a_non_side_effecting_tool_only_reads_whatever_its_arguments() -> None:
    assert lookup.traits.is_read_only_call({"q": "x"}) is True
    assert fetch_invoice.traits.is_read_only_call({"url": "https://x.test"}) is False


class Plain:
    """A third-party tool: only the Protocol's attributes and a few optional ones, each
    counted as it is read."""

    name = "plain"
    description = "A third-party tool that declares its flags as attributes."
    schema = ToolSchema("plain", "A third-party tool that declares its flags.", {})
    output_schema = None

    def __init__(self) -> None:
        self.reads = 0
        self.runs = 0

    @property
    def side_effecting(self) -> bool:
        self.reads += 1
        return True

    @property
    def requires_approval(self) -> bool:
        self.reads += 1
        return False

    @property
    def idempotent(self) -> bool:
        self.reads += 1
        return True

    @property
    def cost_usd(self) -> float:
        self.reads += 1
        return 0.5

    @property
    def url_arg(self) -> str:
        self.reads += 1
        return "target.url"

    async def run(self, args: Mapping[str, Any], ctx: Any) -> str:
        self.runs += 1
        return "done"


async def test_a_protocol_only_tools_traits_are_read_once() -> None:
    plain = Plain()
    budget = Budget(max_cost_usd=5.0)
    ctx = make_test_ctx(
        tool_middleware=[meter(), egress(), retry(), idempotent()],
        budget=budget,
        store=InMemoryStore(),
    )
    for n in range(3):
        request = ToolRequest("plain", {"target": {"url": "https://example.com"}, "n": n}, plain)
        assert await ctx.invoker.invoke_tool(request, ctx) == "done"

    assert traits_of(plain) == ToolTraits(
        side_effecting=True, idempotent=True, cost_usd=0.5, url_paths=(("target", "url"),)
    )
    assert traits_of(plain) is traits_of(plain)
    assert plain.reads == 5  # each attribute once, for three calls through four policies
    assert (plain.runs, budget.spent_usd) == (3, 1.5)


@dataclasses.dataclass
class Unhashable:
    """A third-party tool that is a plain (unhashable) dataclass."""

    name: str = "unhashable"
    description: str = "A third-party tool that cannot be hashed or weakly referenced."
    schema: ToolSchema | None = None
    output_schema: Any = None
    side_effecting: bool = False
    requires_approval: bool = True

    async def run(self, args: Mapping[str, Any], ctx: Any) -> str:
        return "ok"


def test_an_unhashable_tools_traits_are_read_once_too() -> None:
    odd = Unhashable()
    first = traits_of(odd)
    assert first == ToolTraits(side_effecting=False, requires_approval=True)
    assert traits_of(odd) is first


def test_a_tool_whose_traits_are_not_tool_traits_is_refused() -> None:
    class Wrong(Unhashable):
        traits: ClassVar[dict[str, bool]] = {"side_effecting": True}

    with pytest.raises(ToolDefinitionError) as error:
        traits_of(Wrong())
    assert str(error.value) == (
        "tool 'unhashable': traits must be a ToolTraits, got {'side_effecting': True}"
    )


def test_a_protocol_only_tool_with_a_bad_idempotency_scope_is_refused() -> None:
    class Scoped(Unhashable):
        idempotency_scope = "request"

    with pytest.raises(ToolDefinitionError) as error:
        traits_of(Scoped())
    assert str(error.value) == (
        "tool 'unhashable': idempotency_scope must be one of ['arguments', 'call'], "
        "got 'request'"
    )


def test_traits_check_their_fields() -> None:
    with pytest.raises(ToolDefinitionError) as error:
        ToolTraits(side_effecting=True, cost_usd=-1)
    assert str(error.value) == "ToolTraits(cost_usd=...) must be a non-negative number, got -1"
    with pytest.raises(ToolDefinitionError) as error:
        ToolTraits(side_effecting="yes")  # type: ignore[arg-type]
    assert str(error.value) == "ToolTraits(side_effecting=...) must be True or False, got 'yes'"
