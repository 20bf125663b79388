"""The input schema an MCP client is shown: JSON Schema 2020-12, saying what the server enforces.

agentkit's providers get a tool's schema exactly as the Tools page prints it: nested
structs inline, no dialect. MCP clients validate and render forms from the schema, so
the served form states more:

* ``"$schema"``: the 2020-12 dialect MCP's tool schemas are written in;
* ``"additionalProperties": false`` at the top: the server refuses an unknown argument,
  so the schema says so (unless the tool declares what extra keys it takes); and on
  each nested dataclass, attrs class and TypedDict a tool's arguments hold, at any
  depth, since agentkit binds those field by field and refuses an undeclared key too
  (a Pydantic model decides for itself, and its own schema says what it decided);
* every nested struct (an object schema with ``properties``) moves to ``$defs`` and is
  referenced with ``$ref``, named after the argument or field that holds it
  (``address``; an array's items are ``<name>_item``). Identical structs share one
  definition; different structs meeting under one name get ``_2``, ``_3``...
"""

from __future__ import annotations

import copy
import dataclasses
import json
import typing
from collections.abc import Iterable, Mapping
from typing import Any

from agentkit.tools.declarations.adapt import adapt, is_attrs_class, thaw

__all__ = ["DIALECT", "closed_structs", "mcp_input_schema", "tool_closed_structs"]

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def _struct_text(schema: Mapping[str, Any]) -> str:
    """A struct schema's identity: its JSON text, less the description an ``Annotated``
    note may have added where it is used."""
    plain = {k: v for k, v in thaw(schema).items() if k != "description"}
    return json.dumps(plain, sort_keys=True, default=str)


def _refuses_undeclared_keys(tp: Any) -> bool:
    return isinstance(tp, type) and (
        dataclasses.is_dataclass(tp) or typing.is_typeddict(tp) or is_attrs_class(tp)
    )


def closed_structs(annotations: Iterable[Any]) -> frozenset[str]:
    """The schemas (as :func:`_struct_text`) of the structs reachable from
    ``annotations`` that refuse an undeclared key: dataclasses, attrs classes and
    TypedDicts, through fields, unions, arrays and mappings."""
    found: set[str] = set()
    seen: set[int] = set()
    pending = list(annotations)
    while pending:
        tp = pending.pop()
        if id(tp) in seen:
            continue
        seen.add(id(tp))
        pending.extend(typing.get_args(tp))
        if _refuses_undeclared_keys(tp):
            found.add(_struct_text(adapt(tp).schema))
            try:
                pending.extend(typing.get_type_hints(tp, include_extras=True).values())
            except Exception:
                pending.extend(getattr(tp, "__annotations__", {}).values())
    return frozenset(found)


def tool_closed_structs(tool: Any) -> frozenset[str]:
    """:func:`closed_structs` of a function tool's parameters; empty for a tool that
    is not a Python function's (its schema is all there is to go by)."""
    fn = getattr(tool, "fn", None)
    if fn is None:
        return frozenset()
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception:
        hints = dict(getattr(fn, "__annotations__", {}))
    hints.pop("return", None)
    return closed_structs(hints.values())


class _Hoister:
    def __init__(self, existing: Mapping[str, Any], closed: frozenset[str]) -> None:
        self.defs: dict[str, Any] = dict(existing)
        self._names: dict[str, str] = {}
        self._closed = closed

    def walk(self, node: Any, hint: str) -> Any:
        if not isinstance(node, dict):
            return node
        properties = node.get("properties")
        # Read before the children become $refs, while the text is the struct's own.
        close = (
            bool(self._closed)
            and isinstance(properties, dict)
            and "additionalProperties" not in node
            and _struct_text(node) in self._closed
        )
        if isinstance(properties, dict):
            node["properties"] = {k: self.walk(v, k) for k, v in properties.items()}
        if isinstance(node.get("items"), dict):
            node["items"] = self.walk(node["items"], f"{hint}_item")
        if isinstance(node.get("additionalProperties"), dict):
            node["additionalProperties"] = self.walk(node["additionalProperties"],
                                                     f"{hint}_value")
        for keyword in ("anyOf", "oneOf", "allOf"):
            if isinstance(node.get(keyword), list):
                node[keyword] = [self.walk(option, hint) for option in node[keyword]]
        if close:
            node["additionalProperties"] = False
        if isinstance(properties, dict) and node.get("type") == "object":
            return {"$ref": f"#/$defs/{self._define(node, hint)}"}
        return node

    def _define(self, schema: dict[str, Any], hint: str) -> str:
        text = json.dumps(schema, sort_keys=True, default=str)
        name = self._names.get(text)
        if name is not None:
            return name
        name, n = hint, 1
        while name in self.defs:
            n += 1
            name = f"{hint}_{n}"
        self.defs[name] = schema
        self._names[text] = name
        return name


def mcp_input_schema(
    parameters: Mapping[str, Any], *, closed: frozenset[str] = frozenset()
) -> dict[str, Any]:
    """The MCP-facing form of an agentkit tool's ``parameters`` schema (a new dict);
    the nested structs in ``closed`` (see :func:`closed_structs`) get
    ``additionalProperties: false``."""
    schema = copy.deepcopy(thaw(parameters))
    if not isinstance(schema, dict):
        return {"$schema": DIALECT, "type": "object"}
    existing = schema.pop("$defs", None)
    hoister = _Hoister(existing if isinstance(existing, dict) else {}, closed)
    properties = schema.get("properties")
    if isinstance(properties, dict):
        schema["properties"] = {k: hoister.walk(v, k) for k, v in properties.items()}
    served: dict[str, Any] = {"$schema": DIALECT, **schema}
    if schema.get("type") == "object":
        served.setdefault("additionalProperties", False)
    if hoister.defs:
        served["$defs"] = hoister.defs
    return served
