"""Declarations: how a Python function becomes what the model is shown and can call."""

from agentkit.tools.declarations.adapt import Adapter, Invalid, adapt
from agentkit.tools.declarations.binding import ArgumentBinder, analyse_signature
from agentkit.tools.declarations.schema import describe_tool

__all__ = ["Adapter", "ArgumentBinder", "Invalid", "adapt", "analyse_signature", "describe_tool"]
