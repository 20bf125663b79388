"""Shared fixtures for the tool-contract tests."""

import pytest

from agentkit.core.runtime import RunContext
from agentkit.core.testing import FakeLLM, make_test_ctx


@pytest.fixture
def ctx() -> RunContext:
    """A fresh test context: no middleware, in-memory store, a strict fake model."""
    return make_test_ctx(llm=FakeLLM())
