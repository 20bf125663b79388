"""From a function's signature to a binder that turns a model's arguments into kwargs.

All reflection happens once, here, when a tool is defined: the binder keeps only names,
coercers and flags, so a call pays for a dict walk and the coercers it needs.
"""

from __future__ import annotations

import contextlib
import copy
import inspect
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from agentkit.core.contracts.errors import ToolArgumentError, ToolDefinitionError
from agentkit.core.contracts.frozen import freeze
from agentkit.core.contracts.types import ToolContext
from agentkit.core.runtime.context import RunContext
from agentkit.tools.declarations.adapt import Adapter, Invalid, adapt, fresh_schema
from agentkit.tools.declarations.schema import object_schema

__all__ = ["CONTEXT_NAMES", "ArgumentBinder", "analyse_signature"]

CONTEXT_NAMES = ("ctx", "context")
"""Parameter names that receive the live RunContext when unannotated or typed RunContext."""

_EMPTY = inspect.Parameter.empty
_TOO_DEEP = "nested too deeply to check; send a value nested less deeply"


@dataclass(frozen=True, slots=True)
class ArgumentBinder:
    """Checks and coerces one call's arguments; built once per tool."""

    tool_name: str
    coercers: Mapping[str, Callable[[Any], Any]]
    """Each advertised parameter's coercer, in declaration order."""
    required: tuple[str, ...]
    """Parameters without a default."""
    context_name: str | None
    """The parameter that receives the RunContext, if any."""
    var_keyword: bool
    """True when the function takes ``**kwargs``: extra keys pass through."""

    @property
    def accepted(self) -> tuple[str, ...]:
        """The argument names the model may send."""
        return tuple(self.coercers)

    def bind(self, args: Mapping[str, Any], ctx: ToolContext | None) -> dict[str, Any]:
        """The keyword arguments for the function, or one :class:`ToolArgumentError` with
        every missing, unexpected and invalid argument."""
        coercers = self.coercers
        kwargs: dict[str, Any] = {}
        unexpected: list[str] = []
        invalid: list[tuple[str, str]] = []
        for key, value in args.items():
            coerce = coercers.get(key)
            if coerce is None:
                if key == self.context_name:
                    continue  # the model cannot supply the context; its key is dropped
                if self.var_keyword:
                    kwargs[key] = freeze(value)
                else:
                    unexpected.append(key)
                continue
            try:
                kwargs[key] = coerce(value)
            except Invalid as exc:
                invalid.append((key, exc.reason))
            except RecursionError:  # a self-referencing type, fed a value nested too deep
                invalid.append((key, _TOO_DEEP))
        missing = [name for name in self.required if name not in args]
        if unexpected or invalid or missing:
            raise ToolArgumentError(
                self.tool_name,
                missing=missing,
                unexpected=unexpected,
                invalid=invalid,
                accepted=self.accepted,
            )
        if self.context_name is not None:
            kwargs[self.context_name] = ctx
        return kwargs


@dataclass(frozen=True, slots=True)
class SignatureInfo:
    """What a function's signature says about it as a tool."""

    binder: ArgumentBinder
    parameters: dict[str, Any]
    """The JSON Schema of the arguments."""
    return_annotation: Any
    """The resolved return annotation (``inspect.Parameter.empty`` when absent)."""
    annotations: dict[str, Any]
    """Each advertised parameter's resolved annotation (``Any`` when it has none)."""


def _type_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    try:
        return typing.get_type_hints(fn, include_extras=True)
    except Exception:
        pass
    # Some annotation does not resolve (e.g. a name imported under TYPE_CHECKING):
    # resolve each one on its own and keep unresolvable ones as their strings.
    hints: dict[str, Any] = {}
    namespace = getattr(fn, "__globals__", {})
    for name, annotation in getattr(fn, "__annotations__", {}).items():
        if isinstance(annotation, str):
            with contextlib.suppress(Exception):
                annotation = eval(annotation, namespace)
        hints[name] = annotation
    return hints


def _is_context_annotation(annotation: Any) -> bool:
    if annotation is _EMPTY or annotation is RunContext:
        return True
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        # ``RunContext | None`` / ``Optional[RunContext]``: still the injected context.
        return set(typing.get_args(annotation)) == {RunContext, type(None)}
    return isinstance(annotation, str) and annotation.rsplit(".", 1)[-1] in (
        "RunContext",
        "RunContext | None",
        "Optional[RunContext]",
    )


def analyse_signature(fn: Callable[..., Any], tool_name: str) -> SignatureInfo:
    """Read ``fn``'s parameters into a binder and a JSON Schema, refusing what a JSON
    object can never call: ``*args`` and positional-only parameters."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise ToolDefinitionError(f"tool {tool_name!r}: cannot read its signature: {exc}") from None
    hints = _type_hints(fn)
    coercers: dict[str, Callable[[Any], Any]] = {}
    annotations: dict[str, Any] = {}
    properties: dict[str, Any] = {}
    required: list[str] = []
    context_name: str | None = None
    var_keyword = False
    positional_only: list[str] = []
    for param in signature.parameters.values():
        annotation = hints.get(param.name, param.annotation)
        if param.kind is inspect.Parameter.VAR_POSITIONAL:
            raise ToolDefinitionError(
                f"tool {tool_name!r} declares *{param.name}: a tool is called with a JSON "
                "object, so every argument arrives by keyword and *args could never be "
                "filled. Use **kwargs if the tool genuinely accepts arbitrary keys."
            )
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            var_keyword = True
            continue
        if param.kind is inspect.Parameter.POSITIONAL_ONLY:
            positional_only.append(param.name)
            continue
        if param.name in CONTEXT_NAMES and context_name is None and _is_context_annotation(
            annotation
        ):
            context_name = param.name
            continue
        if isinstance(annotation, str):
            # Advertising it as a string would tell the model the wrong type.
            raise ToolDefinitionError(
                f"tool {tool_name!r}: the annotation {annotation!r} of parameter "
                f"{param.name!r} does not resolve to a type (is it defined inside a function, "
                "or imported only under TYPE_CHECKING?); define or import it at module level"
            )
        annotations[param.name] = Any if annotation is _EMPTY else annotation
        adapter: Adapter = adapt(annotations[param.name])
        coercers[param.name] = adapter.coerce
        properties[param.name] = fresh_schema(adapter)
        if param.default is _EMPTY:
            required.append(param.name)
    if positional_only:
        raise ToolDefinitionError(
            f"tool {tool_name!r} has positional-only parameter(s) {positional_only}: a tool "
            "is called with a JSON object, so every argument arrives by keyword and these "
            "could never be filled. Drop the '/' from the signature."
        )
    binder = ArgumentBinder(
        tool_name=tool_name,
        coercers=coercers,
        required=tuple(required),
        context_name=context_name,
        var_keyword=var_keyword,
    )
    parameters = object_schema(properties, required)
    definitions = _definitions(tool_name, properties.values())
    if definitions:
        parameters["$defs"] = definitions
    return SignatureInfo(
        binder=binder,
        parameters=parameters,
        return_annotation=hints.get("return", signature.return_annotation),
        annotations=annotations,
    )


def _definitions(tool_name: str, schemas: Iterable[Any]) -> dict[str, Any]:
    """Every ``$defs`` entry found inside the parameters' schemas.

    A Pydantic model's schema refers to its sub-models as ``#/$defs/Name``, relative to
    the document root. Nested under ``properties`` it keeps its ``$defs`` beside it,
    where those references cannot reach; the tool schema's root gets a copy of them so
    every reference resolves.
    """
    found: dict[str, Any] = {}

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            definitions = node.get("$defs")
            if isinstance(definitions, Mapping):
                for name, definition in definitions.items():
                    if name in found and found[name] != definition:
                        raise ToolDefinitionError(
                            f"tool {tool_name!r}: two parameters define different JSON "
                            f"Schema definitions named {name!r}; rename one of the models"
                        )
                    found[name] = copy.deepcopy(definition)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for schema in schemas:
        walk(schema)
    return found
