"""The runtime spine: RunContext, the Invoker and its middleware chains, spans."""

from agentkit.core.runtime.context import CancelToken, RunContext, new_run_id
from agentkit.core.runtime.invoker import Invoker
from agentkit.core.runtime.reporting import LOG_LEVELS, CallReporter, reporting_to
from agentkit.core.runtime.spans import add_span_event, current_span, open_span

__all__ = [
    "LOG_LEVELS",
    "CallReporter",
    "CancelToken",
    "Invoker",
    "RunContext",
    "add_span_event",
    "current_span",
    "new_run_id",
    "open_span",
    "reporting_to",
]
