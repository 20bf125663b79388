"""agentkit runs as Temporal workflows: when one machine is not enough.

The same agent loop that runs in-process runs inside a Temporal workflow, with every
model call and every tool call an activity executed by a worker through the worker's
middleware chains. A worker hosts agents::

    async with AgentWorker(client, task_queue="agents", agents=[agent], context=make):
        ...

and a client starts, resumes and reads runs::

    agents = TemporalAgents(client, task_queue="agents")
    result = await agents.run("helper", "What is 2 + 2?")

Needs the Temporal Python SDK: ``pip install "agentkit-framework[temporal]"``.
"""

from __future__ import annotations

try:
    import temporalio  # noqa: F401
except ImportError as exc:
    raise ImportError(
        "agentkit.integrations.temporal needs the Temporal Python SDK: "
        'pip install "agentkit-framework[temporal]"'
    ) from exc

from agentkit.integrations.temporal._values import PayloadTooLarge, RemoteError, RunOptions
from agentkit.integrations.temporal.client import TemporalAgents
from agentkit.integrations.temporal.payloads import data_converter
from agentkit.integrations.temporal.worker import AgentWorker, workflow_runner

__all__ = [
    "AgentWorker",
    "PayloadTooLarge",
    "RemoteError",
    "RunOptions",
    "TemporalAgents",
    "data_converter",
    "workflow_runner",
]
