"""Cognitions: how an agent gets from a task to an answer."""

from agentkit.agents.cognition.react import ReActCognition
from agentkit.agents.cognition.single_call import SingleCallCognition

__all__ = ["ReActCognition", "SingleCallCognition"]
