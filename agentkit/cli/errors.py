"""UsageError: what every ``agentkit`` command raises for a mistake its user can fix."""

from __future__ import annotations

__all__ = ["UsageError"]


class UsageError(Exception):
    """A mistake on the command line or in what it points at; printed as one line."""
