"""SingleCallCognition: one model call, no tools (plus one repair turn for output=)."""

from __future__ import annotations

from agentkit.agents.run import AgentRun

__all__ = ["SingleCallCognition"]


class SingleCallCognition:
    """Ask the model once and take its answer; the default when an Agent has no cognition.

    With ``Agent(output=...)`` an answer that does not parse gets one repair turn that
    tells the model what was wrong.
    """

    __slots__ = ()

    tools = None

    async def advance(self, run: AgentRun) -> None:
        """Drive ``run`` until it completes."""
        while True:
            result = await run.call_model()
            if await run.finish_with(result.content):
                return

    def __repr__(self) -> str:
        return "SingleCallCognition()"
