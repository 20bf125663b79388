"""What a model call spent before it was cancelled, for the run that cancelled it.

A call the run cancels (an input guardrail tripped while the first model call was in
flight) never returns its ``LLMResult``, so its usage cannot ride on the answer. A
provider that knows what the call cost so far (the input tokens a stream reported
before it was cut, or a scripted model's ``Turn.usage``) reports it here from its
cancellation handler, and the run that cancelled the call adds it to its own usage.
The collector is a context variable holding a list: the call's task copies the context
when it is created, so it appends to the list of the run that started it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from agentkit.core.contracts.types import Usage

__all__ = ["collecting_cancelled_usage", "report_cancelled_usage"]

_collector: ContextVar[list[tuple[str, Usage]] | None] = ContextVar(
    "agentkit_cancelled_usage", default=None
)


def report_cancelled_usage(model: str, usage: Usage) -> None:
    """Say that a call to ``model`` being cancelled had spent ``usage`` (priced, if the
    provider prices); nothing happens outside a run that collects it."""
    found = _collector.get()
    if found is not None:
        found.append((model, usage))


@contextmanager
def collecting_cancelled_usage() -> Iterator[list[tuple[str, Usage]]]:
    """Collect what calls started inside the block report as spent when cancelled:
    ``(model, usage)`` pairs, in the order they were reported."""
    found: list[tuple[str, Usage]] = []
    token = _collector.set(found)
    try:
        yield found
    finally:
        _collector.reset(token)
