"""Test doubles that are part of the public API: FakeLLM, Turn, make_test_ctx."""

from agentkit.core.testing.context import make_test_ctx
from agentkit.core.testing.fake_llm import FakeLLM, FakeLLMExhausted, Turn
from agentkit.core.testing.tracer import RecordedSpan, RecordingTracer

__all__ = [
    "FakeLLM",
    "FakeLLMExhausted",
    "RecordedSpan",
    "RecordingTracer",
    "Turn",
    "make_test_ctx",
]
