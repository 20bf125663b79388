"""The history a run on Temporal starts from, shaped by its agent's ``history=`` policy as
in-process (:func:`agentkit.agents.conversation.shaped`): a ``HistoryPolicy`` trims it
in workflow code; a ``Summarize`` summarises its older turns with the same code, its
model calls model activities like the run's own (through the workflow context's model,
:class:`ModelByActivity`), and the summaries it reads and keeps in the session in the
workers' store, by activity (:class:`SummaryStore`). Workflow code.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from agentkit.agents.conversation import shaped
from agentkit.agents.summarize import Summarize
from agentkit.core.contracts.ports import Context
from agentkit.core.contracts.state_errors import VersionConflict
from agentkit.core.contracts.types import ChatRequest, LLMResult, Message, Scope
from agentkit.core.runtime.context import RunContext
from agentkit.core.runtime.invoker import Invoker
from agentkit.integrations.temporal._values import RunOptions, pack_bytes, unpack
from agentkit.integrations.temporal.effects import activity
from agentkit.state.stores.memory import InMemoryStore

if TYPE_CHECKING:
    from agentkit.agents.agent import Agent
    from agentkit.integrations.temporal.effects import TemporalEffects

__all__ = ["SUMMARIES_ACTIVITY", "SUMMARY_KEYS", "ModelByActivity", "SummaryStore",
           "start_history"]

SUMMARIES_ACTIVITY = "agentkit.session_summaries"
SUMMARY_KEYS = "session-summary:"
"""How the store keys of a session's summaries begin: the only keys the summaries
activity reads or writes."""


class ModelByActivity:
    """The workflow context's model: a call made through the context rather than by the
    run's steps (a summary's) is a model activity too, on the worker's chat chain."""

    def __init__(self, effects: TemporalEffects) -> None:
        self.effects = effects

    async def chat(self, request: ChatRequest, ctx: Context) -> LLMResult:
        return await self.effects.call_beside(request)

    def stream(self, request: ChatRequest, ctx: Context) -> Any:
        raise RuntimeError("a workflow never streams a model: the model activity does")


class SummaryStore(InMemoryStore):
    """The workflow's view of the workers' store for a session's summaries: the two
    versioned calls :class:`Summarize` makes on their keys (read the cuts' summaries,
    keep a new one, a compare-and-set) are an activity on the workers' store; any other
    key stays in the workflow's memory, as with the workflow context's own store."""

    def __init__(self, options: RunOptions) -> None:
        super().__init__()
        self.options = options

    async def _remote(self, job: dict[str, Any]) -> Any:
        text = await activity(SUMMARIES_ACTIVITY, pack_bytes(job), self.options,
                              summary="session summaries", heartbeat=False)
        return unpack(text, "session summaries")

    async def get_versioned_many(self, keys: Sequence[str]) -> tuple[tuple[Any, int], ...]:
        if not all(k.startswith(SUMMARY_KEYS) for k in keys):
            return await super().get_versioned_many(keys)
        found = await self._remote({"read": list(keys)})
        return tuple((value, version) for value, version in found["values"])

    async def set_versioned(self, key: str, value: Any, *, expected_version: int) -> int:
        if not key.startswith(SUMMARY_KEYS):
            return await super().set_versioned(key, value, expected_version=expected_version)
        answer = await self._remote({"write": key, "value": value,
                                     "expected": expected_version})
        if "conflict" in answer:
            raise VersionConflict(key, expected_version, answer["conflict"])
        version: int = answer["version"]
        return version


async def start_history(
    agent: Agent, prior: tuple[Message, ...], session: str, scope: Scope, run_id: str,
    effects: TemporalEffects,
) -> tuple[Message, ...]:
    """The session's history as the agent's policy has the run start from it."""
    if not isinstance(agent.history, Summarize):
        return await shaped(agent.history, prior, effects.ctx, session)
    ctx = RunContext(llm=ModelByActivity(effects), store=SummaryStore(effects.options),
                     invoker=Invoker(), scope=scope, correlation_id=run_id,
                     autonomy=effects.ctx.autonomy)
    return await shaped(agent.history, prior, ctx, session)
