"""The root of agentkit's errors, in a module of its own so that the modules of the
error families (:mod:`agentkit.core.contracts.errors`, ``state_errors``) can all
derive from it without importing one another."""

from __future__ import annotations

__all__ = ["AgentkitError"]


class AgentkitError(Exception):
    """Root of every error agentkit raises on purpose."""


# Documented, exported and pickled under the module that draws the hierarchy.
AgentkitError.__module__ = "agentkit.core.contracts.errors"
