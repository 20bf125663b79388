"""Fixtures of the A2A tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def engine() -> str:
    """The engine the served agents run on; a test proven on every engine parametrizes
    it with ``ENGINES``."""
    return "in-process"
