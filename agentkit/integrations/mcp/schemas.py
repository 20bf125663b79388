"""The input schema an MCP client is shown: JSON Schema 2020-12, saying what the server enforces.

agentkit's providers get a tool's schema exactly as the Tools page prints it: nested
structs inline, no dialect. MCP clients validate and render forms from the schema, so
the served form states more:

* ``"$schema"``: the 2020-12 dialect MCP's tool schemas are written in;
* ``"additionalProperties": false`` at the top: the server refuses an unknown argument,
  so the schema says so (unless the tool declares what extra keys it takes);
* every nested struct (an object schema with ``properties``) moves to ``$defs`` and is
  referenced with ``$ref``, named after the argument or field that holds it
  (``address``; an array's items are ``<name>_item``). Identical structs share one
  definition; different structs meeting under one name get ``_2``, ``_3``...
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from agentkit.tools.declarations.adapt import thaw

__all__ = ["DIALECT", "mcp_input_schema"]

DIALECT = "https://json-schema.org/draft/2020-12/schema"


class _Hoister:
    def __init__(self, existing: Mapping[str, Any]) -> None:
        self.defs: dict[str, Any] = dict(existing)
        self._names: dict[str, str] = {}

    def walk(self, node: Any, hint: str) -> Any:
        if not isinstance(node, dict):
            return node
        properties = node.get("properties")
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


def mcp_input_schema(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """The MCP-facing form of an agentkit tool's ``parameters`` schema (a new dict)."""
    schema = copy.deepcopy(thaw(parameters))
    if not isinstance(schema, dict):
        return {"$schema": DIALECT, "type": "object"}
    existing = schema.pop("$defs", None)
    hoister = _Hoister(existing if isinstance(existing, dict) else {})
    properties = schema.get("properties")
    if isinstance(properties, dict):
        schema["properties"] = {k: hoister.walk(v, k) for k, v in properties.items()}
    served: dict[str, Any] = {"$schema": DIALECT, **schema}
    if schema.get("type") == "object":
        served.setdefault("additionalProperties", False)
    if hoister.defs:
        served["$defs"] = hoister.defs
    return served
