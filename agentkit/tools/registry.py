"""ToolRegistry: name to tool, the schemas to advertise, and which names need approval."""

from __future__ import annotations

import inspect
import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from agentkit.core.contracts.errors import ToolDefinitionError, ToolNotFoundError
from agentkit.core.contracts.ports import Tool
from agentkit.core.contracts.traits import traits_of
from agentkit.core.contracts.types import ToolSchema
from agentkit.tools.function_tool import FunctionTool

__all__ = ["ToolRegistry", "is_bare_function_tool"]

# Tools made here from plain functions, and the functions already warned about: a
# weak set each, so neither keeps a function (or a module's worth of closures) alive.
_bare_tools: weakref.WeakSet[FunctionTool] = weakref.WeakSet()
_warned: weakref.WeakSet[Any] = weakref.WeakSet()

_TOOL_ATTRIBUTES = (
    "name",
    "description",
    "schema",
    "output_schema",
    "side_effecting",
    "requires_approval",
    "run",
)


def as_registered_tool(candidate: Tool | Callable[..., Any]) -> Tool:
    """A Tool as it is, a plain function through ``FunctionTool.from_callable``;
    anything half-shaped is refused here rather than failing later inside a run."""
    if isinstance(candidate, Tool):
        if not inspect.iscoroutinefunction(candidate.run):
            raise ToolDefinitionError(
                f"{candidate!r} is not a Tool: its run must be `async def run(args, ctx)`"
            )
        return candidate
    looks_like_tool = any(hasattr(candidate, a) for a in ("run", "schema", "side_effecting"))
    if inspect.isroutine(candidate) or (callable(candidate) and not looks_like_tool):
        tool = FunctionTool.from_callable(candidate)
        _bare_tools.add(tool)
        return tool
    missing = [a for a in _TOOL_ATTRIBUTES if not hasattr(candidate, a)]
    raise ToolDefinitionError(
        f"{candidate!r} is not a Tool: missing {missing}. A tool has name, description, "
        "schema, output_schema, side_effecting, requires_approval and "
        "`async def run(args, ctx)`; a plain function is wrapped with FunctionTool.from_callable"
    )


def is_bare_function_tool(tool: object) -> bool:
    """True for a tool a registry made from a plain function (``side_effecting=False``
    because nothing declared otherwise)."""
    try:
        return tool in _bare_tools
    except TypeError:
        return False


def _warn_bare_function(fn: object, name: str) -> None:
    """Warn, once per function, that a plain function is taken as read-only."""
    try:
        if fn in _warned:
            return
        _warned.add(fn)
    except TypeError:  # not weakly referenceable (a builtin, say): warn every time
        pass
    qualname = getattr(fn, "__qualname__", name)
    warnings.warn(
        f"tool {name!r} is the plain function {qualname}, so it is treated as "
        "side_effecting=False: its calls may be cached and are never paused for approval "
        "under autonomy='gated'. Declare what it does with @tool(side_effecting=True) or "
        "@tool(side_effecting=False)",
        UserWarning,
        stacklevel=_caller_level(),
    )


def _caller_level() -> int:
    """The stack level of the first frame outside agentkit, so the warning points at
    the user's ``ReActCognition(tools=[...])`` line."""
    frame = inspect.currentframe()
    level = 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith("agentkit."):
        frame = frame.f_back
        level += 1
    return level - 1


class ToolRegistry:
    """The tools one agent may call, by name.

    Registration refuses a second tool under a taken name unless ``replace=True``:
    a silent swap would change what runs behind a name the model already knows.
    """

    __slots__ = ("_schemas", "_tools", "guarded")

    def __init__(self) -> None:
        self._tools: dict[str, Tool] = {}
        # schemas() is asked on every model call of a run; kept until a registration.
        self._schemas: tuple[ToolSchema, ...] | None = None
        self.guarded: frozenset[str] = frozenset()
        """The names of the tools that declare guardrails of their own: a run looks no
        further for a call of any other tool."""

    @classmethod
    def from_tools(cls, tools: Iterable[Tool | Callable[..., Any]]) -> ToolRegistry:
        """A registry holding ``tools`` (Tools and plain functions, mixed)."""
        registry = cls()
        for item in tools:
            registry.register(item)
        return registry

    def register(self, tool: Tool | Callable[..., Any], replace: bool = False) -> Tool:
        """Add ``tool``; a plain callable goes through ``FunctionTool.from_callable``
        (``side_effecting=False``). Returns the registered Tool."""
        registered = as_registered_tool(tool)
        if registered is not tool and is_bare_function_tool(registered):
            # A tool the model can call, whose effects nobody declared.
            _warn_bare_function(tool, registered.name)
        if registered.name in self._tools and not replace:
            raise ValueError(
                f"ToolRegistry: tool {registered.name!r} already registered. "
                "Pass replace=True to swap deliberately."
            )
        self._tools[registered.name] = registered
        self._schemas = None
        if bool(traits_of(registered).guardrails) != (registered.name in self.guarded):
            self.guarded = self.guarded ^ {registered.name}  # rare: copied only then
        return registered

    def get(self, name: str) -> Tool:
        """The tool called ``name``; :class:`ToolNotFoundError` lists the names there are."""
        try:
            return self._tools[name]
        except KeyError:
            raise ToolNotFoundError(name, sorted(self._tools)) from None

    def schemas(self) -> tuple[ToolSchema, ...]:
        """The advertised schemas in name order (a stable, cacheable prompt prefix);
        tools whose schema is None are callable but not listed."""
        if self._schemas is None:
            self._schemas = tuple(
                schema
                for name in sorted(self._tools)
                if (schema := self._tools[name].schema) is not None
            )
        return self._schemas

    def requires_approval(self, name: str) -> bool:
        """True when the tool called ``name`` declares ``requires_approval=True``."""
        return traits_of(self.get(name)).requires_approval

    def names(self) -> tuple[str, ...]:
        """Every registered name, sorted."""
        return tuple(sorted(self._tools))

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __iter__(self) -> Iterator[Tool]:
        return iter([self._tools[n] for n in sorted(self._tools)])

    def __len__(self) -> int:
        return len(self._tools)

    def __repr__(self) -> str:
        return f"ToolRegistry({list(self.names())})"
