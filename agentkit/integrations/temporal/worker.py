"""AgentWorker: a Temporal worker hosting the agent workflow and its activities."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import TYPE_CHECKING, Any

from temporalio.client import Client
from temporalio.worker import Worker
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner, SandboxRestrictions

from agentkit.core.runtime.context import RunContext
from agentkit.integrations.temporal.activities import AgentActivities
from agentkit.integrations.temporal.payloads import with_stored_payloads
from agentkit.integrations.temporal.workflow import AgentWorkflow, host

if TYPE_CHECKING:
    from agentkit.agents.agent import Agent

__all__ = ["AgentWorker", "workflow_runner"]


def workflow_runner(*modules: str) -> SandboxedWorkflowRunner:
    """The sandbox the agent workflow runs in: agentkit's modules (and ``modules``, where
    the agents' tools live) are passed through, not re-imported per workflow run: the
    loop code is deterministic, and the hosted agents are live objects."""
    return SandboxedWorkflowRunner(
        restrictions=SandboxRestrictions.default.with_passthrough_modules("agentkit", *modules)
    )


class AgentWorker:
    """``async with AgentWorker(client, task_queue=..., agents=[...], context=...):``
    runs a worker for those agents until the block ends.

    ``context`` is called once, when the worker starts, for the base
    :class:`~agentkit.core.runtime.context.RunContext` (model, store, middleware chains);
    each activity runs on a context derived from it with the run's id (the workflow id),
    scope and autonomy. Payloads over 128 KiB are stored by key in that context's
    ``store``, which every worker and client of the task queue must share.
    """

    def __init__(
        self,
        client: Client,
        *,
        task_queue: str,
        agents: Iterable[Agent],
        context: Callable[[], RunContext],
        max_concurrent_activities: int = 100,
    ) -> None:
        from agentkit.agents.agent import Agent

        hosted: dict[str, Agent] = {}
        for agent in agents:
            if not isinstance(agent, Agent):
                raise TypeError(f"AgentWorker(agents=...) takes Agent objects, got {agent!r}")
            if agent.name in hosted:
                raise ValueError(
                    f"two agents are named {agent.name!r}; a worker looks agents up by name, "
                    "so names must be unique"
                )
            hosted[agent.name] = agent
        if not hosted:
            raise ValueError("AgentWorker(agents=...) needs at least one agent")
        if not callable(context):
            raise TypeError(
                "AgentWorker(context=...) takes a zero-argument callable returning the base "
                f"RunContext (e.g. lambda: make_ctx(llm)), got {context!r}"
            )
        self.client = client
        self.task_queue = task_queue
        self.agents = hosted
        self.context = context
        self.max_concurrent_activities = max_concurrent_activities
        self._worker: Worker | None = None
        self._stack: contextlib.AsyncExitStack | None = None

    def _build(self) -> Worker:
        activities = AgentActivities(self.agents, self.context)
        modules = sorted({type(a.cognition).__module__ for a in self.agents.values()} - {""})
        host(self.task_queue, self.agents)
        return Worker(
            with_stored_payloads(self.client, activities.base.store),
            task_queue=self.task_queue,
            workflows=[AgentWorkflow],
            activities=activities.all(),
            workflow_runner=workflow_runner(*modules),
            max_concurrent_activities=self.max_concurrent_activities,
        )

    async def run(self) -> None:
        """Run the worker until cancelled (``agentkit temporal worker`` does this)."""
        await self._build().run()

    async def __aenter__(self) -> AgentWorker:
        self._worker = self._build()
        self._stack = contextlib.AsyncExitStack()
        await self._stack.enter_async_context(self._worker)
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> Any:
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()
        return None
