"""ask_human: the built-in tool through which the model asks the person it works for."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentkit.core.contracts.errors import RunError
from agentkit.core.contracts.traits import ToolTraits
from agentkit.core.contracts.types import ToolContext, ToolSchema

__all__ = ["AskHuman", "ask_human"]

_DESCRIPTION = (
    "Ask the human you are working for a question and wait for the answer.\n\n"
    "Use this only when the information genuinely cannot be obtained any other way — "
    "a one-time code, a confirmation, a preference only they know."
)


class AskHumanOutsideLoop(RunError):
    """ask_human was run directly instead of through an agent loop that can suspend."""


class AskHuman:
    """The ``ask_human`` tool. Calling it suspends the run (``awaiting_input``) with the
    question in ``pending``; ``agent.resume(run_id, {call_id: {"answer": "..."}}, ctx)``
    hands the answer back as the tool's result."""

    __slots__ = ()

    name = "ask_human"
    description = _DESCRIPTION
    schema = ToolSchema(
        name="ask_human",
        description=_DESCRIPTION,
        parameters={
            "type": "object",
            "properties": {
                "question": {"type": "string", "description": "the question, in full"}
            },
            "required": ["question"],
        },
    )
    output_schema = None
    traits = ToolTraits(side_effecting=False, asks_human=True, accepted_arguments=("question",))
    side_effecting = traits.side_effecting
    requires_approval = traits.requires_approval
    idempotent = traits.idempotent
    asks_human = traits.asks_human

    async def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
        """Refuses: only an agent loop can wait for a human's answer."""
        raise AskHumanOutsideLoop(
            "ask_human is answered by a human: run it inside an agent loop "
            "(ReActCognition), which suspends the run until agent.resume(...) gives the answer"
        )

    def __repr__(self) -> str:
        return "ask_human"


ask_human = AskHuman()
