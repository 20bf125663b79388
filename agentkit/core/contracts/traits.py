"""ToolTraits: what a tool declares about itself, as one frozen value.

Every part of agentkit that treats tools differently by what they do — approval gating,
idempotency, retries, egress checks, metering, crash recovery, the MCP server, Temporal,
``agentkit tools inspect`` — reads these fields instead of probing the tool object.

agentkit's own tools (``FunctionTool``, ``FileTool``, ``ask_human``, MCP tools, agents
wrapped by ``as_tool``) fill ``tool.traits`` once, when they are built. A third-party
tool that only satisfies the :class:`~agentkit.core.contracts.ports.Tool` Protocol may
leave it out: :func:`traits_of` then reads its declarations from its attributes the
first time it is asked, and remembers the answer for that tool object.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from agentkit.core.contracts.errors import ToolDefinitionError

__all__ = ["IdempotencyScope", "ToolTraits", "is_seconds", "traits_of"]

IdempotencyScope = Literal["arguments", "call"]
"""What ``idempotent()`` keys a replay on: the arguments alone, or also the call id."""

_SCOPES = ("arguments", "call")



def is_seconds(value: object) -> bool:
    """Whether ``value`` is a timeout: None (no limit) or a finite positive number of
    seconds (not a bool). One test for every ``timeout=`` agentkit takes."""
    if value is None:
        return True
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return 0 < value < math.inf


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolTraits:
    """A tool's declarations: what it does to the world and how it may be called."""

    side_effecting: bool
    """The tool changes the world: gated under ``autonomy="gated"``, never memoized,
    deduplicated by ``idempotent()``."""
    idempotent: bool = False
    """Running a call twice has the effect of running it once, so a retry or a crash
    recovery may repeat it."""
    requires_approval: bool = False
    """Every call waits for a person's approval, under any autonomy."""
    asks_human: bool = False
    """A call is a question for a person (``ask_human``): the run suspends for the answer."""
    cost_usd: float = 0.0
    """What one call costs, charged by ``meter()`` against the run's budget."""
    url_paths: tuple[tuple[str, ...], ...] = ()
    """Key paths to the arguments holding URLs the tool fetches, vetted by ``egress()``
    (``(("request", "url"),)`` for ``url_arg="request.url"``)."""
    idempotency_scope: IdempotencyScope = "arguments"
    """``"call"`` when a repeated call with the same arguments is a new action, so
    ``idempotent()`` replays only a retry of the same model call."""
    accepted_arguments: tuple[str, ...] | None = None
    """The argument names the model may send, or None when the tool does not say."""
    read_only_call: Callable[[Mapping[str, Any]], bool] | None = None
    """For a side-effecting tool some of whose calls only read (FileTool's ``view``):
    tells such a call by its arguments."""
    timeout: float | None = None
    """Seconds a call may run before it is given up on
    (:class:`~agentkit.core.contracts.errors.ToolTimeout`); None: the run's default
    (``Agent(tool_timeout=)``), if any."""
    guardrails: tuple[Any, ...] = ()
    """The tool's own guardrails (``agentkit.core.guardrails.Guardrail`` values), checked
    after the agent's ``tool_guardrails`` on each call's arguments and on its result."""

    def __post_init__(self) -> None:
        for name in ("side_effecting", "idempotent", "requires_approval", "asks_human"):
            if not isinstance(getattr(self, name), bool):
                raise ToolDefinitionError(
                    f"ToolTraits({name}=...) must be True or False, got {getattr(self, name)!r}"
                )
        cost = self.cost_usd
        if not isinstance(cost, int | float) or isinstance(cost, bool) or not cost >= 0:
            raise ToolDefinitionError(
                f"ToolTraits(cost_usd=...) must be a non-negative number, got {cost!r}"
            )
        timeout = self.timeout
        if not is_seconds(timeout):
            raise ToolDefinitionError(
                f"ToolTraits(timeout=...) must be a positive number of seconds or None, "
                f"got {timeout!r}"
            )
        if self.idempotency_scope not in _SCOPES:
            raise ToolDefinitionError(
                f"ToolTraits(idempotency_scope=...) must be one of {list(_SCOPES)}, "
                f"got {self.idempotency_scope!r}"
            )

    def is_read_only_call(self, arguments: Mapping[str, Any]) -> bool:
        """True when this call changes nothing: the tool is not side-effecting, or it
        tells that this particular call only reads."""
        if not self.side_effecting:
            return True
        reads_only = self.read_only_call
        return reads_only is not None and bool(reads_only(arguments))


# Traits read from tools that do not declare them, by tool object. Weak where the tool
# allows it, so a registry's tools are not kept alive by having been called once; a tool
# that cannot be weakly referenced (or hashed) is kept, with its traits, by id.
_derived: weakref.WeakKeyDictionary[Any, ToolTraits] = weakref.WeakKeyDictionary()
_derived_by_id: dict[int, tuple[Any, ToolTraits]] = {}
# Whether a tool class declares ``traits``, asked once per class: this sits on every
# tool call's path, where a subscript costs less than hasattr().
_declares: dict[type, bool] = {}


def traits_of(tool: Any) -> ToolTraits:
    """The traits of ``tool``: its ``traits`` when its class declares them, else read
    once from the attributes a tool may have and remembered for that object.

    The attributes read are the Protocol's ``side_effecting`` and ``requires_approval``
    and the optional ``idempotent``, ``asks_human``, ``cost_usd``, ``url_paths`` (or
    ``url_arg``: a name, a dotted path or several), ``idempotency_scope``,
    ``accepted_arguments`` and ``is_read_only_call(arguments)`` (not ``timeout``: an
    attribute of that name may mean anything on a tool that does not declare traits).
    They are read the first time; a tool whose declarations change afterwards declares
    ``traits`` instead.
    Raises :class:`ToolDefinitionError` for a declaration of the wrong kind.
    """
    cls = type(tool)
    try:
        declares = _declares[cls]
    except KeyError:
        # The class, not the object: a wrapper that forwards attribute access to another
        # tool (``__getattr__``) declares its own attributes, not the wrapped tool's traits.
        declares = _declares[cls] = hasattr(cls, "traits")
    if declares:
        declared = tool.traits
        if type(declared) is ToolTraits or isinstance(declared, ToolTraits):
            return declared
        raise ToolDefinitionError(
            f"tool {_name(tool)!r}: traits must be a ToolTraits, got {declared!r}"
        )
    try:
        found = _derived.get(tool)
    except TypeError:  # unhashable, or not weakly referenceable
        entry = _derived_by_id.get(id(tool))
        found = None if entry is None else entry[1]
        if found is None:
            found = _derive(tool)
            _derived_by_id[id(tool)] = (tool, found)
        return found
    if found is None:
        found = _derive(tool)
        _derived[tool] = found
    return found


def _name(tool: Any) -> str:
    return str(getattr(tool, "name", type(tool).__name__))


def _derive(tool: Any) -> ToolTraits:
    """Read the traits of a tool that only satisfies the Protocol from its attributes."""
    scope: IdempotencyScope = getattr(tool, "idempotency_scope", "arguments")
    if scope not in _SCOPES:
        raise ToolDefinitionError(
            f"tool {_name(tool)!r}: idempotency_scope must be one of {list(_SCOPES)}, "
            f"got {scope!r}"
        )
    accepted = getattr(tool, "accepted_arguments", None)
    reads_only = getattr(tool, "is_read_only_call", None)
    cost = getattr(tool, "cost_usd", 0.0) or 0.0
    try:
        return ToolTraits(
            side_effecting=bool(getattr(tool, "side_effecting", False)),
            idempotent=bool(getattr(tool, "idempotent", False)),
            requires_approval=bool(getattr(tool, "requires_approval", False)),
            asks_human=bool(getattr(tool, "asks_human", False)),
            cost_usd=float(cost),
            url_paths=_url_paths(tool),
            idempotency_scope=scope,
            accepted_arguments=None if accepted is None else tuple(accepted),
            read_only_call=reads_only if callable(reads_only) else None,
        )
    except (ToolDefinitionError, TypeError, ValueError) as exc:
        raise ToolDefinitionError(f"tool {_name(tool)!r}: {exc}") from None


def _url_paths(tool: Any) -> tuple[tuple[str, ...], ...]:
    paths = getattr(tool, "url_paths", None)
    if paths is not None:
        return tuple(tuple(path) for path in paths)
    url_arg = getattr(tool, "url_arg", None)  # a tool that only names its arguments
    if not url_arg:
        return ()
    names = (url_arg,) if isinstance(url_arg, str) else tuple(url_arg)
    return tuple(tuple(name.split(".")) for name in names)
