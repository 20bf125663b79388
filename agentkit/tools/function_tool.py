"""FunctionTool and @tool: a plain Python function as a tool the model can call."""

from __future__ import annotations

import asyncio
import inspect
import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, overload

from agentkit.core.contracts.errors import ToolDefinitionError, ToolShapeError
from agentkit.core.contracts.traits import ToolTraits, is_seconds
from agentkit.core.contracts.types import ToolContext, ToolSchema
from agentkit.core.runtime.current_call import current_call
from agentkit.core.runtime.spans import add_span_event
from agentkit.tools.declarations.adapt import Adapter, Invalid, adapt, describe_value, is_structured
from agentkit.tools.declarations.binding import ArgumentBinder, analyse_signature
from agentkit.tools.declarations.schema import describe_tool
from agentkit.tools.declarations.url_paths import resolve_url_paths
from agentkit.tools.definition_problems import BrokenTool, collecting, refuse

__all__ = ["FunctionTool", "tool"]

if TYPE_CHECKING:
    from agentkit.core.guardrails.running import Guardrail

_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_log = logging.getLogger("agentkit")


class _Infer:
    def __repr__(self) -> str:
        return "<infer from the return annotation>"


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


_FLAGS = frozenset({"side_effecting", "requires_approval"})
_INFER: Any = _Infer()
_MISSING: Any = _Missing()

_SIDE_EFFECTING_REQUIRED = (
    "@tool requires an explicit `side_effecting=` keyword (True if the tool mutates the "
    "world / has external effects, False if it's read-only). The framework's approval "
    "gating and idempotency depend on knowing upfront."
)


def _require_bool(tool_name: str, keyword: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ToolDefinitionError(
            f"tool {tool_name!r}: {keyword}= must be True or False, got {value!r}"
        )
    return value


def _tool_name(fn: Callable[..., Any], name: str | None) -> str:
    chosen = name if name is not None else getattr(fn, "__name__", None)
    if not isinstance(chosen, str) or not _NAME.match(chosen):
        raise ToolDefinitionError(
            f"tool name {chosen!r} is not usable: providers accept 1-64 characters of "
            "letters, digits, '_' and '-'. Pass name= to choose one."
        )
    return chosen


def _is_async(fn: Callable[..., Any]) -> bool:
    if inspect.iscoroutinefunction(fn):
        return True
    call = getattr(fn, "__call__", None)  # noqa: B004 - an object with an async __call__
    return call is not None and inspect.iscoroutinefunction(call)


def _output_adapter(tool_name: str, output_schema: Any, return_annotation: Any) -> Adapter | None:
    if output_schema is None:
        return None
    if output_schema is _INFER:
        return adapt(return_annotation) if is_structured(return_annotation) else None
    if is_structured(output_schema):
        return adapt(output_schema)
    raise ToolDefinitionError(
        f"tool {tool_name!r}: output_schema= takes a dataclass, an attrs class or a Pydantic "
        f"model (or None to opt out of validation); got {output_schema!r}"
    )


def _guardrails(tool_name: str, given: Iterable[Any]) -> tuple[Guardrail, ...]:
    if given == ():
        return ()
    # Imported here, not above: the guardrails package (the prebuilt checks and their
    # patterns) is only loaded by a program that uses guardrails.
    from agentkit.core.guardrails.running import as_guardrail

    if isinstance(given, str) or not isinstance(given, Iterable):
        raise ToolDefinitionError(
            f"tool {tool_name!r}: guardrails= takes a list of guardrails (functions g(value) "
            f"or g(value, ctx), or checks such as PII()), got {given!r}"
        )
    try:
        return tuple(as_guardrail(g) for g in given)
    except (TypeError, ValueError) as exc:
        raise ToolDefinitionError(f"tool {tool_name!r}: {exc}") from None


class FunctionTool:
    """A Python function (sync or async) wrapped as a :class:`~agentkit.tools.Tool`.

    Everything about the function is read once, here: its schema, its description, a
    binder for its arguments, whether it is async, and its output schema. A call binds
    and coerces the model's arguments, runs the function (a sync one in a worker thread,
    so it never blocks the event loop) and validates the result.
    """

    __slots__ = (
        "__weakref__",  # registries remember which tools they made from plain functions
        "_binder",
        "_is_async",
        "_output",
        "delegate",
        "description",
        "fn",
        "name",
        "output_schema",
        "requires_approval",
        "schema",
        "side_effecting",
        "traits",
        "url_arg",
    )

    name: str
    description: str
    schema: ToolSchema | None
    output_schema: Any
    traits: ToolTraits
    """Everything the tool declares, filled once here; the flags below read it."""
    side_effecting: bool
    requires_approval: bool
    url_arg: str | tuple[str, ...] | None
    delegate: Any
    """What the tool hands its task to, for a tool made by ``as_tool`` (an Agent, a
    Workflow); None for every other tool."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        side_effecting: bool,
        idempotent: bool = False,
        requires_approval: bool = False,
        name: str | None = None,
        description: str | None = None,
        output_schema: Any = _INFER,
        advertise: bool = True,
        url_arg: str | Sequence[str] | None = None,
        cost_usd: float = 0.0,
        timeout: float | None = None,
        guardrails: Iterable[Any] = (),
    ) -> None:
        if not callable(fn):
            raise ToolDefinitionError(f"a tool wraps a callable, got {fn!r}")
        self.name = _tool_name(fn, name)
        self.side_effecting = _require_bool(self.name, "side_effecting", side_effecting)
        _require_bool(self.name, "idempotent", idempotent)
        self.requires_approval = _require_bool(self.name, "requires_approval", requires_approval)
        advertise = _require_bool(self.name, "advertise", advertise)
        self.description = describe_tool(self.name, getattr(fn, "__doc__", None), description)
        info = analyse_signature(fn, self.name)
        self._binder: ArgumentBinder = info.binder
        self.schema = (
            ToolSchema(name=self.name, description=self.description, parameters=info.parameters)
            if advertise
            else None
        )
        self._output = _output_adapter(self.name, output_schema, info.return_annotation)
        self.output_schema = None if self._output is None else (
            output_schema if output_schema is not _INFER else info.return_annotation
        )
        self._is_async = _is_async(fn)
        self.fn = fn
        self.delegate = None
        url_paths = resolve_url_paths(self.name, url_arg, info.annotations)
        self.url_arg = url_arg if url_arg is None or isinstance(url_arg, str) else tuple(url_arg)
        if not isinstance(cost_usd, int | float) or isinstance(cost_usd, bool) or cost_usd < 0:
            raise ToolDefinitionError(
                f"tool {self.name!r}: cost_usd= must be a non-negative number, got {cost_usd!r}"
            )
        if not is_seconds(timeout):
            raise ToolDefinitionError(
                f"tool {self.name!r}: timeout= must be a positive number of seconds or None, "
                f"got {timeout!r}"
            )
        self.traits = ToolTraits(
            side_effecting=side_effecting,
            idempotent=idempotent,
            requires_approval=requires_approval,
            cost_usd=float(cost_usd),
            url_paths=url_paths,
            accepted_arguments=self._binder.accepted,
            timeout=None if timeout is None else float(timeout),
            guardrails=_guardrails(self.name, guardrails),
        )

    @classmethod
    def from_callable(
        cls,
        fn: Callable[..., Any],
        *,
        side_effecting: bool = False,
        idempotent: bool = False,
        requires_approval: bool = False,
        name: str | None = None,
        description: str | None = None,
        output_schema: Any = _INFER,
        advertise: bool = True,
        url_arg: str | Sequence[str] | None = None,
        cost_usd: float = 0.0,
        timeout: float | None = None,
        guardrails: Iterable[Any] = (),
    ) -> FunctionTool:
        """Wrap ``fn``. Unlike ``@tool``, ``side_effecting`` defaults to False: pass it
        knowingly, or a mutation will be treated as cacheable."""
        return cls(
            fn,
            side_effecting=side_effecting,
            idempotent=idempotent,
            requires_approval=requires_approval,
            name=name,
            description=description,
            output_schema=output_schema,
            advertise=advertise,
            url_arg=url_arg,
            cost_usd=cost_usd,
            timeout=timeout,
            guardrails=guardrails,
        )

    def __setattr__(self, name: str, value: Any) -> None:
        # The Protocol's two flags are plain attributes, read on every call, and stay
        # assignable; an assignment replaces the traits too, which remain the record.
        if name in _FLAGS and hasattr(self, "traits"):
            object.__setattr__(self, "traits", replace(self.traits, **{name: value}))
        object.__setattr__(self, name, value)

    @property
    def idempotent(self) -> bool:
        """A retry is safe (``traits.idempotent``)."""
        return self.traits.idempotent

    @property
    def cost_usd(self) -> float:
        """What one call costs (``traits.cost_usd``)."""
        return self.traits.cost_usd

    @property
    def url_paths(self) -> tuple[tuple[str, ...], ...]:
        """Key paths to the URL arguments ``egress()`` vets (``traits.url_paths``)."""
        return self.traits.url_paths

    @property
    def accepted_arguments(self) -> tuple[str, ...]:
        """The argument names the model may send."""
        return self._binder.accepted

    async def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
        """Bind and check ``args``, run the function, validate what it returned.

        Raises :class:`ToolArgumentError` before the body runs and
        :class:`ToolShapeError` after it, when the result misses the output schema.
        """
        kwargs = self._binder.bind(args, ctx)
        if self._is_async:
            result = await self.fn(**kwargs)
        else:
            result = await self._in_thread(kwargs)
        if self._output is not None:
            return self._check_output(result)
        return result

    async def _in_thread(self, kwargs: dict[str, Any]) -> Any:
        """The sync body in a worker thread. A thread cannot be stopped: when the call
        is given up on (a timeout, a cancelled run) the body runs on, its result is
        discarded, and a warning says so when it ends, naming the tool and the call."""
        given_up: list[bool] = []

        def body() -> Any:
            try:
                return self.fn(**kwargs)
            finally:
                if given_up:
                    current = current_call.get()
                    _log.warning(
                        "tool %r call %r finished after it was given up on (timed out or "
                        "cancelled); its result was discarded",
                        self.name, current.call_id if current is not None else None,
                    )

        try:
            return await asyncio.to_thread(body)
        except asyncio.CancelledError:
            given_up.append(True)
            raise

    def _check_output(self, result: Any) -> Any:
        output = self._output
        assert output is not None
        try:
            return output.coerce(result)
        except Invalid as exc:
            reason = exc.reason
        add_span_event(
            "tool.shape_mismatch",
            {
                "gen_ai.tool.name": self.name,
                "expected": output.name,
                "got": describe_value(result),
                "reason": reason,
            },
        )
        raise ToolShapeError(self.name, result, output.name, reason)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Call the wrapped function directly, as plain Python (no checks)."""
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        return (
            f"FunctionTool(name={self.name!r}, side_effecting={self.side_effecting}, "
            f"idempotent={self.idempotent}, requires_approval={self.requires_approval})"
        )


@overload
def tool(fn: Callable[..., Any], /) -> FunctionTool: ...


@overload
def tool(
    *,
    side_effecting: bool,
    idempotent: bool = False,
    requires_approval: bool = False,
    name: str | None = None,
    description: str | None = None,
    output_schema: Any = _INFER,
    advertise: bool = True,
    url_arg: str | Sequence[str] | None = None,
    cost_usd: float = 0.0,
    timeout: float | None = None,
    guardrails: Iterable[Any] = (),
) -> Callable[[Callable[..., Any]], FunctionTool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    side_effecting: bool = _MISSING,
    idempotent: bool = False,
    requires_approval: bool = False,
    name: str | None = None,
    description: str | None = None,
    output_schema: Any = _INFER,
    advertise: bool = True,
    url_arg: str | Sequence[str] | None = None,
    cost_usd: float = 0.0,
    timeout: float | None = None,
    guardrails: Iterable[Any] = (),
) -> Any:
    """Declare a function as a tool.

    ``side_effecting=`` is required: True when the tool changes the world, False when it
    only reads. ``idempotent=True`` says a retry is safe; ``requires_approval=True``
    pauses every call for a human. The whole docstring (down to a ``---`` line) is the
    description unless ``description=`` is given. ``output_schema=`` overrides the
    validated return type, or ``None`` opts out. ``advertise=False`` keeps the tool
    callable but hidden from the model (its schema is None). ``url_arg=`` names the
    argument holding a URL the tool will fetch (a dotted path such as ``"request.url"``
    reaches into a structured argument; a tuple names several), so ``egress()`` can vet
    it first;
    ``cost_usd=`` what one call costs, so ``meter()`` can hold it to a budget;
    ``timeout=`` how many seconds a call may run before it is given up on (it wins over
    ``Agent(tool_timeout=)``): an async body is cancelled, a sync one cannot be stopped,
    so its result is discarded and its late end logged;
    ``guardrails=`` checks (``g(value)`` / ``g(value, ctx)``, e.g. ``PII()``) run on each
    call's frozen arguments before it is gated or run, and on its result before the model
    reads it (after the agent's ``tool_guardrails``; docs/guardrails.md).
    """
    if side_effecting is _MISSING:
        missing = ToolDefinitionError(_SIDE_EFFECTING_REQUIRED)
        if fn is not None:
            return refuse(missing, fn)
        if not collecting():
            raise missing
        return lambda func: refuse(missing, func)

    def decorate(func: Callable[..., Any]) -> FunctionTool | BrokenTool:
        try:
            return _define(func)
        except ToolDefinitionError as error:
            return refuse(error, func)

    def _define(func: Callable[..., Any]) -> FunctionTool:
        return FunctionTool(
            func,
            side_effecting=side_effecting,
            idempotent=idempotent,
            requires_approval=requires_approval,
            name=name,
            description=description,
            output_schema=output_schema,
            advertise=advertise,
            url_arg=url_arg,
            cost_usd=cost_usd,
            timeout=timeout,
            guardrails=guardrails,
        )

    if fn is not None:
        return decorate(fn)
    return decorate
