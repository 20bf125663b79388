"""Parsing the model's final answer into ``Agent(output=...)``."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from agentkit.tools.declarations.adapt import Adapter, Invalid, adapt, thaw

__all__ = ["OutputSpec"]

_FENCE = re.compile(r"^```[A-Za-z0-9_-]*\s*\n(.*?)\n?```\s*$", re.DOTALL)


class OutputSpec:
    """The structured answer an agent must produce, from the same ``adapt()`` as tool
    schemas: a dataclass, attrs class, Pydantic model, any annotation, or a JSON Schema."""

    __slots__ = ("adapter", "plain", "schema_text")

    def __init__(self, output: Any) -> None:
        self.adapter: Adapter = adapt(output)
        # A JSON Schema answer is handed back as plain dicts and lists: the caller owns it.
        self.plain = isinstance(output, Mapping)
        self.schema_text = json.dumps(self.adapter.schema, sort_keys=False)

    @property
    def name(self) -> str:
        """The type's name, for messages."""
        return self.adapter.name

    def parse(self, text: str) -> Any:
        """The answer as the output type, or :class:`Invalid` saying what was wrong."""
        body = text.strip()
        fenced = _FENCE.match(body)
        if fenced:
            body = fenced.group(1).strip()
        if self.adapter.schema.get("type") == "string" and not body.startswith('"'):
            return self.adapter.coerce(text)
        try:
            value = json.loads(body)
        except json.JSONDecodeError as exc:
            reason = f"the answer is not valid JSON ({exc.msg} at position {exc.pos})"
            raise Invalid(reason) from None
        parsed = self.adapter.coerce(value)
        return thaw(parsed) if self.plain else parsed

    def repair_prompt(self, reason: str) -> str:
        """The message that tells the model what was wrong and what is accepted."""
        return (
            f"Your answer could not be used: {reason}. Reply again with only a JSON value "
            f"(no prose, no code fence) that matches this JSON Schema: {self.schema_text}"
        )
