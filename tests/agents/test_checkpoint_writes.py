"""Which checkpoint writes a run makes durable, and what a crash at each of them costs.

A run holds the checkpoints of steps that carry nothing a crash could repeat or lose
(a model's answer that asks only for calls safe to repeat, a read-only call's result)
and writes them with the next one that does: before a call that changes the world, at
a suspension, at the end (docs/stores.md). These tests count the round trips of a run
on the real PostgreSQL server, and kill a run at every write it makes, on every store,
to show that no side effect repeats and no result a caller was given is lost.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from agentkit import make_ctx
from agentkit.agents import Agent, RunNotResumable
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.ports import Store
from agentkit.core.contracts.runs import RunRecord
from agentkit.core.contracts.types import ChatRequest, LLMResult, ToolCall
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.state.stores import InMemoryStore, SQLiteStore
from agentkit.tools import tool


@tool(side_effecting=False, idempotent=True)
async def forecast(city: str, days: int = 3) -> str:
    """Return a short weather forecast for a city over the next few days."""
    return f"sunny in {city} for {days} days"


WEATHER = Agent("weather", "fake", "p", cognition=ReActCognition(tools=[forecast]))
SCRIPT = (
    Turn(tool_calls=(ToolCall("c1", "forecast", {"city": "Lisbon", "days": 2}),)),
    Turn(content="Sunny in Lisbon."),
)


async def test_a_two_turn_run_with_the_default_chain_takes_at_most_four_round_trips(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """The run of ``bench/stores.py`` (a read-only tool call, then the answer) on
    ``make_ctx``'s default chain: counted on the server's one connection."""
    from agentkit.state.stores.postgres import PostgresStore

    statements: list[str] = []
    async with PostgresStore(postgres_dsn, schema=postgres_schema, pool_size=1) as store:
        async def one_run(run_id: str) -> None:
            ctx = make_ctx(FakeLLM.script(SCRIPT), store=store, correlation_id=run_id)
            result = await WEATHER.run("What is the weather in Lisbon?", ctx)
            assert result.output == "Sunny in Lisbon."

        await one_run("warm-up")  # opens the pool, migrates, prepares the statements
        pool = await store.connections()
        async with pool.acquire() as connection:
            connection.add_query_logger(lambda query: statements.append(query.query))
        await one_run("counted")
        trips = list(statements)
        record = await store.get_run("counted")
        state, _ = await store.get_versioned("checkpoint:counted:weather")

    assert len(trips) <= 4, "\n".join(trips)
    assert record is not None and (record.status, record.output) == ("complete",
                                                                    "Sunny in Lisbon.")
    assert (state.status, state.messages[-1].content) == ("complete", "Sunny in Lisbon.")


# -- a crash at every write -------------------------------------------------------------

REFUNDS: list[str] = []


@tool(side_effecting=True)
async def refund(order_id: str) -> str:
    """Refund a customer's order in full and return the confirmation."""
    REFUNDS.append(order_id)
    return f"refunded {order_id}"


DESK = Agent("desk", "fake", "You handle refunds.", cognition=ReActCognition(tools=[refund]))


class _Clerk:
    """A model that asks for the refund, with a new call id each time as real models
    do, until it reads a tool result, which it reports."""

    def __init__(self) -> None:
        self.calls = 0

    async def chat(self, request: ChatRequest, ctx: Any) -> LLMResult:
        self.calls += 1
        last = request.messages[-1]
        if last.role == "tool":
            return LLMResult(content=f"Done: {last.content}")
        call = ToolCall(f"call-{self.calls}", "refund", {"order_id": "A-1"})
        return LLMResult(tool_calls=(call,))


class _Crash(BaseException):
    """The worker's process dying: nothing in the run may catch it."""


class _Dies:
    """A real store whose worker dies at its ``at``-th write: ``before`` it reaches the
    server, or right ``after`` it was made durable; a dead worker writes nothing more."""

    def __init__(self, store: Store, at: int, when: str) -> None:
        self.store, self.at, self.when = store, at, when
        self.writes = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    async def _write(self, write: Callable[[], Any]) -> Any:
        self.writes += 1
        if self.writes > self.at or (self.writes == self.at and self.when == "before"):
            raise _Crash
        value = await write()
        if self.writes == self.at:
            raise _Crash
        return value

    async def set(self, key: str, value: Any, *, ttl: float | None = None) -> None:
        await self._write(lambda: self.store.set(key, value, ttl=ttl))

    async def delete(self, key: str) -> bool:
        return bool(await self._write(lambda: self.store.delete(key)))

    async def append(self, log: str, value: Any) -> None:
        await self._write(lambda: self.store.append(log, value))

    async def get_or_set(self, key: str, factory: Any, *, ttl: float | None = None) -> Any:
        return await self._write(lambda: self.store.get_or_set(key, factory, ttl=ttl))

    async def set_versioned(self, key: str, value: Any, *, expected_version: int) -> int:
        return int(await self._write(
            lambda: self.store.set_versioned(key, value, expected_version=expected_version)
        ))

    async def set_versioned_with_run(
        self, key: str, value: Any, *, expected_version: int, record: RunRecord
    ) -> int:
        return int(await self._write(lambda: self.store.set_versioned_with_run(  # type: ignore[attr-defined]
            key, value, expected_version=expected_version, record=record
        )))

    async def put_run(self, record: RunRecord) -> None:
        await self._write(lambda: self.store.put_run(record))


def _postgres(request: pytest.FixtureRequest) -> Store:
    from agentkit.state.stores.postgres import PostgresStore

    dsn = request.getfixturevalue("postgres_dsn")
    return PostgresStore(dsn, schema=request.getfixturevalue("postgres_schema"), pool_size=2)


STORES: dict[str, Callable[[pytest.FixtureRequest, Path], Store]] = {
    "memory": lambda _, __: InMemoryStore(),
    "sqlite": lambda _, tmp_path: SQLiteStore(tmp_path / "runs.db"),
    "postgres": lambda request, _: _postgres(request),
}


@pytest.fixture(params=sorted(STORES))
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Store]:
    made = STORES[request.param](request, tmp_path)
    try:
        yield made
    finally:
        close = getattr(made, "close", None)
        if close is not None:
            closing = close()
            if asyncio.iscoroutine(closing):
                await closing


UNKNOWN = (
    "Done: The outcome of this call to 'refund' is unknown: the worker running it stopped "
    "(it crashed or was killed) after the call started and before its result was "
    "recorded, so it may or may not have taken effect. It was not run again: 'refund' is "
    "not declared idempotent. Check whether it took effect before repeating it."
)
DONE = "Done: refunded A-1"
# The writes of the run, in order: the claim with its registry record; the checkpoint
# naming the refund call, before it starts; its intent; its outcome in the intent; the
# checkpoint holding its answer; the intent deleted; the end with its registry record.
WRITES = 7


async def _crash_at(store: Store, at: int, when: str) -> tuple[int, str, str]:
    """Kill a refund run at its ``at``-th write, then do what an operator does: recover
    the run (or start it again, when it never got its first checkpoint); how many
    refunds went out, how the run got its answer, and the answer."""
    REFUNDS.clear()
    run_id = f"r-{when}-{at}"
    dying = make_test_ctx(_Clerk(), store=_Dies(store, at, when), correlation_id=run_id)  # type: ignore[arg-type]
    try:
        result = await DESK.run("Refund order A-1", dying)
        how = "acknowledged"
    except _Crash:
        ctx = make_test_ctx(_Clerk(), store=store, correlation_id=run_id)  # type: ignore[arg-type]
        try:
            result = await DESK.recover(run_id, ctx)
            how = "recovered"
        except RunNotResumable as refused:
            if "no checkpoint" in str(refused):
                result = await DESK.run("Refund order A-1", ctx)
                how = "started again"
            else:  # it ended durably; only the reply was lost with the worker
                record = await store.get_run(run_id)
                assert record is not None and record.status == "complete"
                return len(REFUNDS), "complete in the registry", str(record.output)
    record = await store.get_run(run_id)
    assert record is not None and (record.status, record.output) == ("complete", result.output)
    return len(REFUNDS), how, str(result.output)


async def test_a_crash_at_any_write_never_repeats_the_side_effect_or_loses_the_answer(
    store: Store,
) -> None:
    seen = {(when, at): await _crash_at(store, at, when)
            for at in range(1, WRITES + 1) for when in ("before", "after")}
    seen[("never", 0)] = await _crash_at(store, WRITES + 1, "before")
    assert seen == {
        ("before", 1): (1, "started again", DONE),  # the claim never landed
        ("after", 1): (1, "recovered", DONE),
        ("before", 2): (1, "recovered", DONE),  # the model is asked again
        ("after", 2): (1, "recovered", DONE),  # the call is open, with no intent: it runs
        ("before", 3): (1, "recovered", DONE),
        ("after", 3): (0, "recovered", UNKNOWN),  # the intent is in: it may have started
        ("before", 4): (1, "recovered", UNKNOWN),  # it ran; its outcome was not recorded
        ("after", 4): (1, "recovered", DONE),  # its recorded outcome is used
        ("before", 5): (1, "recovered", DONE),
        ("after", 5): (1, "recovered", DONE),  # the checkpoint holds the answer
        ("before", 6): (1, "recovered", DONE),
        ("after", 6): (1, "recovered", DONE),
        ("before", 7): (1, "recovered", DONE),  # the model is asked again for the answer
        ("after", 7): (1, "complete in the registry", DONE),
        ("never", 0): (1, "acknowledged", DONE),
    }


# -- the blind claim and delegation -----------------------------------------------------


class _Writes:
    """A real store, with each checkpoint write logged: the run's key and its status
    with the ids of its open calls."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.log: list[tuple[str, str, tuple[str, ...]]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def _note(self, key: str, value: Any) -> None:
        self.log.append((key.removeprefix("checkpoint:"), value.status,
                         tuple(c.id for c in value.open_calls)))

    async def set_versioned(self, key: str, value: Any, *, expected_version: int) -> int:
        version = await self.store.set_versioned(key, value, expected_version=expected_version)
        if key.startswith("checkpoint:"):
            self._note(key, value)
        return version

    async def set_versioned_with_run(
        self, key: str, value: Any, *, expected_version: int, record: RunRecord
    ) -> int:
        version = await self.store.set_versioned_with_run(  # type: ignore[attr-defined]
            key, value, expected_version=expected_version, record=record
        )
        self._note(key, value)
        return version


async def test_a_new_run_under_the_id_of_a_finished_one_claims_over_it_unread_first() -> None:
    """A new run claims at version 0 without reading; the finished run found there is
    judged (finished: the new run goes over it), an unfinished one refuses the new run."""
    writes = _Writes(InMemoryStore())
    for _ in range(2):
        ctx = make_test_ctx(FakeLLM.script(SCRIPT), store=writes, correlation_id="r1")  # type: ignore[arg-type]
        assert (await WEATHER.run("What is the weather in Lisbon?", ctx)).output == (
            "Sunny in Lisbon."
        )
    assert writes.log == [("r1:weather", "running", ()), ("r1:weather", "complete", ())] * 2
    assert (await writes.store.get_versioned("checkpoint:r1:weather"))[1] == 4

    held = ToolCall("c1", "refund", {"order_id": "A-1"})
    await DESK.run("Refund order A-1", make_test_ctx(
        FakeLLM.script([Turn(tool_calls=(held,))]), store=writes, autonomy="gated",  # type: ignore[arg-type]
        correlation_id="r2",
    ))
    stuck = make_test_ctx(FakeLLM.script([]), store=writes, autonomy="gated",  # type: ignore[arg-type]
                          correlation_id="r2")
    with pytest.raises(RunNotResumable) as refused:
        await DESK.run("Refund order A-1", stuck)
    assert str(refused.value) == (
        "run 'r2' cannot be resumed: agent 'desk' already has a suspended run under this run "
        "id; resume it with agent.resume(...) or start the new run on a fresh context"
    )


@tool(side_effecting=False, idempotent=True)
async def lookup(order_id: str) -> str:
    """Look up a customer order and return its current status line."""
    return f"{order_id} shipped"


async def test_a_call_that_delegates_starts_only_once_the_checkpoint_naming_it_is_written() -> None:
    """A sub-run's own calls may change the world, so the delegating call waits for the
    checkpoint that names it, as a side-effecting call does; a read-only call does not."""
    from agentkit.tools import as_tool

    clerk = Agent("clerk", "fake", "p", cognition=ReActCognition(tools=[lookup]))
    ask = as_tool(clerk, name="ask_clerk", description="Ask the clerk where an order stands.",
                  side_effecting=False)
    boss = Agent("boss", "fake", "p", cognition=ReActCognition(tools=[ask]))
    delegate = ToolCall("d1", "ask_clerk", {"task": "Where is A-1?"})
    look = ToolCall("s1", "lookup", {"order_id": "A-1"})
    llm = FakeLLM.script([
        Turn(tool_calls=(delegate,)),  # the boss
        Turn(tool_calls=(look,)), Turn(content="A-1 shipped."),  # the clerk
        Turn(content="It shipped."),  # the boss
    ])
    writes = _Writes(InMemoryStore())
    ctx = make_test_ctx(llm, store=writes, correlation_id="r1")  # type: ignore[arg-type]
    assert (await boss.run("Where is my order?", ctx)).output == "It shipped."
    assert writes.log == [
        ("r1:boss", "running", ()),  # the claim
        ("r1:boss", "running", ("d1",)),  # before the delegating call starts
        ("r1:boss/d1", "running", ()),  # the sub-run's claim; its lookup is held
        ("r1:boss/d1", "complete", ()),
        ("r1:boss", "complete", ()),
    ]
