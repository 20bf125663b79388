"""A server that tried to take over a run and found it alive on another server stops
following it: anyone streaming that run's events from it is told where the run stands
instead of waiting for events that will never come."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

import httpx2

from agentkit.core.contracts.types import ToolCall
from agentkit.core.stores.memory import InMemoryStore
from agentkit.core.testing import Turn
from tests.serve.served import (
    DEADLINE,
    TOKENS,
    ByTask,
    Shop,
    bearer,
    context_for,
    create_app,
    served,
)

ANA = bearer("tok-ana")


class SlowProbe:
    """A store whose checkpoint reads wait at a gate: the second server's attempt to
    recover a run is held until the test has a reader on its events."""

    def __init__(self, store: InMemoryStore) -> None:
        self._store = store
        self.reading = asyncio.Event()
        self.gate = asyncio.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def get_versioned(self, key: str) -> tuple[Any, int]:
        self.reading.set()
        await self.gate.wait()
        return await self._store.get_versioned(key)

    async def get_versioned_many(self, keys: Sequence[str]) -> tuple[tuple[Any, int], ...]:
        self.reading.set()
        await self.gate.wait()
        return await self._store.get_versioned_many(keys)


async def test_a_reader_of_a_run_the_server_gives_up_is_told_where_it_stands() -> None:
    shop = Shop()
    store = InMemoryStore()
    llm = ByTask({"look": [Turn(tool_calls=(ToolCall("c1", "slow_lookup", {"order_id": "A"}),)),
                           Turn(content="It shipped.")]})
    first = create_app([shop.support], context=context_for(llm, store), auth=TOKENS)
    probe = SlowProbe(store)
    second = create_app([shop.support], context=context_for(llm, probe), auth=TOKENS)
    async with served(first) as url, httpx2.AsyncClient(base_url=url) as http:
        await http.post("/v1/agents/support/runs", json={"input": "look", "run_id": "r1"},
                        headers=ANA)
        async with served(second) as other, httpx2.AsyncClient(base_url=other) as peer:
            async with asyncio.timeout(DEADLINE):
                await probe.reading.wait()  # the second server is trying to recover r1
            lines: list[str] = []
            async with asyncio.timeout(DEADLINE), peer.stream(
                "GET", "/v1/runs/r1/events", headers=ANA, timeout=DEADLINE
            ) as response:
                assert response.status_code == 200  # following r1's log while it tries
                probe.gate.set()  # ... which finds r1 alive on the first server
                lines = [line async for line in response.aiter_lines() if line]
            data = [json.loads(line.removeprefix("data: ")) for line in lines
                    if line.startswith("data: ")]
            assert data == [{"kind": "status", "status": "running"}]
        shop.release.set()
        async with asyncio.timeout(DEADLINE), http.stream(
            "GET", "/v1/runs/r1/events", headers=ANA, timeout=DEADLINE
        ) as response:
            events = [json.loads(line.removeprefix("data: ")) async for line
                      in response.aiter_lines() if line.startswith("data: ")]
        assert (events[-1]["kind"], events[-1]["output"]) == ("final", "It shipped.")
        assert len(llm.fakes["look"].requests) == 2  # advanced once, by the first server
