"""ToolMemory: a tool (a search, a lookup, a knowledge-base query) as a memory source.

The tool is called with the query text, the number of items wanted and any fixed
arguments — but only with argument names the tool accepts, checked when the ToolMemory
is built, so recall never trips the unexpected-argument rule. With a context the call
goes through ``ctx.invoker.invoke_tool``, so the tool middlewares (tracing, metering,
audit ...) see it like any other call.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from agentkit.core.contracts.errors import ToolDefinitionError
from agentkit.core.contracts.ports import Tool
from agentkit.core.contracts.traits import traits_of
from agentkit.core.contracts.types import ToolRequest
from agentkit.state.memory.source import MemoryItem
from agentkit.tools.registry import as_registered_tool

if TYPE_CHECKING:
    from agentkit.core.runtime.context import RunContext

__all__ = ["ToolMemory"]

_QUERY_NAMES = ("query", "q", "text", "question", "search")
_COUNT_NAMES = ("k", "top_k", "limit", "max_results", "n")


def _accepted(tool: Tool) -> tuple[str, ...] | None:
    """The argument names ``tool`` takes, or None when it does not say."""
    declared = traits_of(tool).accepted_arguments
    if declared is not None:
        return declared
    schema = tool.schema
    if schema is None:
        return None
    properties = schema.parameters.get("properties")
    return tuple(properties) if isinstance(properties, Mapping) else None


def _item(value: Any, source: str, rank: int) -> MemoryItem:
    default_score = 1.0 / (1 + rank)
    if isinstance(value, MemoryItem):
        return value
    if isinstance(value, str):
        return MemoryItem(value, source, default_score)
    if isinstance(value, Mapping):
        content = value.get("content", value.get("text"))
        if isinstance(content, str):
            score = value.get("score")
            return MemoryItem(
                content,
                str(value.get("source", source)),
                float(score) if isinstance(score, int | float) else default_score,
            )
        return MemoryItem(json.dumps(dict(value), default=str), source, default_score)
    return MemoryItem(str(value), source, default_score)


class ToolMemory:
    """A :class:`MemorySource` that answers a query by calling ``tool``.

    ``query_argument`` names the argument that receives the query text (found among
    ``query``, ``q``, ``text``, ``question``, ``search`` when not given);
    ``k_argument`` the one that receives how many items are wanted (``k``, ``top_k``,
    ``limit``, ``max_results`` or ``n`` when the tool has one; otherwise none is sent and
    the result is cut to ``k``). ``arguments`` are sent with every call.

    The tool may return a string (one item), a :class:`MemoryItem`, a mapping with
    ``content`` or ``text`` (and optionally ``source`` and ``score``), or a list of
    those. Items without a score are scored by rank: 1, 1/2, 1/3 ...
    """

    __slots__ = ("arguments", "k_argument", "query_argument", "source", "tool")

    def __init__(
        self,
        tool: Tool | Callable[..., Any],
        *,
        query_argument: str | None = None,
        k_argument: str | None = None,
        arguments: Mapping[str, Any] | None = None,
        source: str | None = None,
    ) -> None:
        self.tool = as_registered_tool(tool)
        accepted = _accepted(self.tool)
        name = self.tool.name
        fixed = dict(arguments or {})

        def refuse(what: str) -> ToolDefinitionError:
            return ToolDefinitionError(
                f"ToolMemory({name!r}): {what}. The tool accepts {list(accepted or ())}"
            )

        if query_argument is None:
            found = [a for a in _QUERY_NAMES if accepted is not None and a in accepted]
            if not found:
                raise refuse("no argument to put the query in; pass query_argument=")
            query_argument = found[0]
        elif accepted is not None and query_argument not in accepted:
            raise refuse(f"query_argument={query_argument!r} is not one of its arguments")
        if k_argument is None:
            k_argument = next(
                (a for a in _COUNT_NAMES if accepted is not None and a in accepted), None
            )
        elif accepted is not None and k_argument not in accepted:
            raise refuse(f"k_argument={k_argument!r} is not one of its arguments")
        unknown = sorted(a for a in fixed if accepted is not None and a not in accepted)
        if unknown:
            raise refuse(f"arguments= names {unknown}, which it does not accept")
        self.query_argument = query_argument
        self.k_argument = k_argument
        self.arguments = fixed
        self.source = source or name

    async def query(self, text: str, k: int, ctx: RunContext | None) -> tuple[MemoryItem, ...]:
        """Call the tool for ``text`` and return at most ``k`` items."""
        if k < 1:
            return ()
        args: dict[str, Any] = {**self.arguments, self.query_argument: text}
        if self.k_argument is not None:
            args[self.k_argument] = k
        if ctx is None:
            value = await self.tool.run(args, None)
        else:
            request = ToolRequest(self.tool.name, args, self.tool)
            value = await ctx.invoker.invoke_tool(request, ctx)
        return self._items(value)[:k]

    def _items(self, value: Any) -> tuple[MemoryItem, ...]:
        if value is None:
            return ()
        if isinstance(value, str | Mapping | MemoryItem) or not isinstance(value, Iterable):
            return (_item(value, self.source, 0),)
        values: Sequence[Any] = list(value)
        return tuple(_item(v, self.source, rank) for rank, v in enumerate(values))

    def __repr__(self) -> str:
        return f"ToolMemory({self.tool.name!r})"
