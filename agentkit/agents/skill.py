"""Skill: a reusable prompt + cognition (+ memory) bundle, as an agent or as a tool."""

from __future__ import annotations

from dataclasses import dataclass

from agentkit.agents.agent import Agent, Cognition
from agentkit.state.memory.source import MemorySource
from agentkit.tools.as_tool import as_tool
from agentkit.tools.function_tool import FunctionTool

__all__ = ["Skill"]


@dataclass(frozen=True, slots=True)
class Skill:
    """What an agent knows how to do, packaged to hand to any model or agent."""

    name: str
    """The skill's name; also its tool name."""
    description: str
    """What it does, for a model choosing whether to delegate to it."""
    prompt: str
    """The system prompt of the agent that carries it out."""
    cognition: Cognition | None = None
    """How the agent works (tools live here); a single model call when None."""
    memory: MemorySource | None = None
    """A memory source the agent recalls from at the start of each task."""

    def as_agent(self, model: str) -> Agent:
        """An :class:`Agent` running this skill on ``model``, with the skill's memory."""
        return Agent(
            name=self.name,
            model=model,
            prompt=self.prompt,
            cognition=self.cognition,
            description=self.description,
            memory=self.memory,
        )

    def as_tool(
        self,
        model: str,
        *,
        side_effecting: bool,
        name: str | None = None,
        requires_approval: bool = False,
    ) -> FunctionTool:
        """The skill as a tool another agent can delegate a task to (see ``as_tool``)."""
        return as_tool(
            self.as_agent(model),
            name=name or self.name,
            description=self.description,
            side_effecting=side_effecting,
            requires_approval=requires_approval,
        )
