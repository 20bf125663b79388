"""Conversations: ``run(task, ctx, session=...)`` shows the model the session's earlier
turns and appends the run's turn once it completes, on every store, per scope."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from agentkit.agents import Agent, FinalEvent, HistoryPolicy, SessionBusy
from agentkit.agents.cognition import ReActCognition
from agentkit.agents.run_state import RunState
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.ports import Store
from agentkit.core.contracts.types import Message, Scope, ToolCall
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.state.sessions import (
    SessionRecord,
    append_turn,
    delete_session,
    list_sessions,
    read_session,
)
from agentkit.state.stores import InMemoryStore, SQLiteStore
from agentkit.tools import tool

SCOPE = Scope("acme", "support")
REFUND = ToolCall("c1", "refund", {"order_id": "A-1", "amount": 20})


@tool(side_effecting=True)
def refund(order_id: str, amount: int) -> str:
    """Refund part of a customer order, in whole dollars, and return a receipt line."""
    return f"refunded ${amount} on {order_id}"


def desk() -> Agent:
    return Agent("desk", "fake", "You handle refunds.", cognition=ReActCognition([refund]))


def _sqlite(tmp_path: Path) -> Store:
    return SQLiteStore(tmp_path / "sessions.db")  # a real file


def _postgres(request: pytest.FixtureRequest) -> Store:
    from agentkit.state.stores.postgres import PostgresStore

    # The session's real server (tests/conftest.py), in a schema of this test's own.
    dsn = request.getfixturevalue("postgres_dsn")
    return PostgresStore(dsn, schema=request.getfixturevalue("postgres_schema"), pool_size=2)


# Every store the suite knows, by name; a new backend is one more entry here.
STORES: dict[str, Callable[[pytest.FixtureRequest, Path], Store]] = {
    "memory": lambda _, __: InMemoryStore(),
    "sqlite": lambda _, tmp_path: _sqlite(tmp_path),
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


def user(text: str) -> Message:
    return Message(role="user", content=text)


def said(text: str) -> Message:
    return Message(role="assistant", content=text)


TURN_ONE = (
    user("refund order A-1"),
    Message(role="assistant", tool_calls=(REFUND,)),
    Message(role="tool", content="refunded $20 on A-1", tool_call_id="c1", name="refund"),
    said("Refunded $20 on A-1."),
)


async def test_the_second_turn_sees_the_first_turns_calls_results_and_answer(
    store: Store,
) -> None:
    llm = FakeLLM.script([
        Turn(tool_calls=(REFUND,)),
        Turn("Refunded $20 on A-1."),
        Turn("Changed it to $30."),
    ])
    agent = desk()
    first = await agent.run("refund order A-1", make_test_ctx(llm, store=store, scope=SCOPE),
                            session="chat-42")
    second = await agent.run("actually, make it $30",
                             make_test_ctx(llm, store=store, scope=SCOPE), session="chat-42")

    assert first.messages == TURN_ONE
    assert llm.requests[2].messages == (*TURN_ONE, user("actually, make it $30"))
    assert second.messages == (*TURN_ONE, user("actually, make it $30"),
                               said("Changed it to $30."))
    assert await read_session(store, SCOPE, "chat-42") == second.messages
    assert await list_sessions(store, SCOPE) == ("chat-42",)


async def test_a_ten_turn_conversation_keeps_every_turn_in_order(store: Store) -> None:
    llm = FakeLLM.script([Turn(f"answer {n}") for n in range(10)])
    agent = Agent("chat", "fake", "Be brief.")
    for n in range(10):
        result = await agent.run(f"question {n}", make_test_ctx(llm, store=store, scope=SCOPE),
                                 session="long")
    expected = tuple(m for n in range(10) for m in (user(f"question {n}"), said(f"answer {n}")))
    assert result.messages == expected
    assert llm.requests[9].messages == expected[:-1]
    assert await read_session(store, SCOPE, "long") == expected


async def test_two_tenants_with_one_session_id_never_see_each_others_history(
    store: Store,
) -> None:
    llm = FakeLLM.script([Turn("hello acme"), Turn("hello globex"), Turn("acme again")])
    agent = Agent("chat", "fake", "Be brief.")
    other = Scope("globex", "support")
    await agent.run("hi from acme", make_test_ctx(llm, store=store, scope=SCOPE), session="s1")
    await agent.run("hi from globex", make_test_ctx(llm, store=store, scope=other),
                    session="s1")
    await agent.run("acme again?", make_test_ctx(llm, store=store, scope=SCOPE), session="s1")

    assert llm.requests[1].messages == (user("hi from globex"),)
    assert llm.requests[2].messages == (user("hi from acme"), said("hello acme"),
                                        user("acme again?"))
    assert await read_session(store, other, "s1") == (user("hi from globex"),
                                                      said("hello globex"))
    assert await list_sessions(store, other) == ("s1",)


async def test_a_suspended_turn_appends_nothing_until_it_is_approved_and_completes(
    store: Store,
) -> None:
    llm = FakeLLM.script([Turn(tool_calls=(REFUND,)), Turn("Refunded $20 on A-1.")])
    agent = desk()
    ctx = make_test_ctx(llm, store=store, scope=SCOPE, autonomy="gated", correlation_id="r1")
    held = await agent.run("refund order A-1", ctx, session="chat-7")
    assert held.stop_reason == "suspended"
    assert await read_session(store, SCOPE, "chat-7") == ()
    assert await list_sessions(store, SCOPE) == ()

    done = await agent.resume("r1", {"c1": "approve"},
                              make_test_ctx(llm, store=store, scope=SCOPE, autonomy="gated"))
    assert done.messages == TURN_ONE
    assert await read_session(store, SCOPE, "chat-7") == TURN_ONE


async def test_resume_refuses_a_session_other_than_the_runs_own(store: Store) -> None:
    llm = FakeLLM.script([Turn(tool_calls=(REFUND,))])
    ctx = make_test_ctx(llm, store=store, scope=SCOPE, autonomy="gated", correlation_id="r1")
    await desk().run("refund order A-1", ctx, session="chat-7")
    with pytest.raises(ValueError) as caught:
        await desk().resume("r1", {"c1": "approve"}, ctx, session="chat-8")
    assert str(caught.value) == (
        "run 'r1' belongs to session 'chat-7', not 'chat-8'; a run's turn goes to the "
        "session it started in (omit session= to use it)"
    )


async def test_the_loser_of_two_racing_turns_gets_session_busy_and_nothing_interleaves(
    store: Store,
) -> None:
    started: list[str] = []
    both_read = asyncio.Event()

    @tool(side_effecting=False)
    async def look_up(order_id: str) -> str:
        """Look up a customer order and return its current status line."""
        started.append(order_id)
        if len(started) == 2:
            both_read.set()
        await both_read.wait()
        return f"{order_id} shipped"

    agent = Agent("desk", "fake", "p", cognition=ReActCognition([look_up]))

    def ctx(order: str) -> Any:
        llm = FakeLLM.script([
            Turn(tool_calls=(ToolCall(f"c-{order}", "look_up", {"order_id": order}),)),
            Turn(f"{order} has shipped."),
        ])
        return make_test_ctx(llm, store=store, scope=SCOPE, correlation_id=f"run-{order}")

    outcomes = await asyncio.gather(
        agent.run("where is A-1?", ctx("A-1"), session="chat"),
        agent.run("where is B-2?", ctx("B-2"), session="chat"),
        return_exceptions=True,
    )
    winners = [o for o in outcomes if not isinstance(o, BaseException)]
    losers = [o for o in outcomes if isinstance(o, SessionBusy)]
    assert (len(winners), len(losers)) == (1, 1)
    (busy,) = losers
    assert busy.result.stop_reason == "complete"
    assert str(busy) == (
        f"session 'chat' of scope 'orgacme:domsupport' is busy: another run appended a "
        f"turn while run {busy.run_id!r} was working, so this run's turn was not appended. "
        "Its result is in exc.result; run the task again to continue from the session as "
        "it now stands, and send one turn of a session at a time"
    )
    assert await read_session(store, SCOPE, "chat") == winners[0].messages


async def test_a_run_that_read_before_a_delete_cannot_write_the_conversation_back(
    store: Store,
) -> None:
    gate = asyncio.Event()
    reading = asyncio.Event()

    @tool(side_effecting=False)
    async def pause(reason: str) -> str:
        """Wait until the test lets the run go on, then report that it did."""
        reading.set()
        await gate.wait()
        return "resumed"

    llm = FakeLLM.script([Turn("hi"), Turn(tool_calls=(ToolCall("p", "pause", {"reason": "x"}),)),
                          Turn("done")])
    agent = Agent("chat", "fake", "p", cognition=ReActCognition([pause]))
    await agent.run("hello", make_test_ctx(llm, store=store, scope=SCOPE), session="s")
    late = asyncio.ensure_future(
        agent.run("more", make_test_ctx(llm, store=store, scope=SCOPE), session="s")
    )
    await reading.wait()
    assert await delete_session(store, SCOPE, "s") is True
    gate.set()
    with pytest.raises(SessionBusy):
        await late
    assert await read_session(store, SCOPE, "s") == ()


async def test_deleting_a_session_erases_its_messages_checkpoints_and_listing(
    store: Store,
) -> None:
    llm = FakeLLM.script([Turn("one"), Turn("two"), Turn("fresh")])
    agent = Agent("chat", "fake", "Be brief.")
    await agent.run("first", make_test_ctx(llm, store=store, scope=SCOPE, correlation_id="a"),
                    session="gone")
    await agent.run("second", make_test_ctx(llm, store=store, scope=SCOPE,
                                            correlation_id="b"), session="gone")
    await agent.run("other", make_test_ctx(FakeLLM("ok"), store=store, scope=SCOPE),
                    session="kept")
    assert await list_sessions(store, SCOPE) == ("gone", "kept")

    assert await delete_session(store, SCOPE, "gone") is True

    assert await read_session(store, SCOPE, "gone") == ()
    assert await list_sessions(store, SCOPE) == ("kept",)
    assert (await store.get_versioned("checkpoint:a:chat"))[0] is None
    assert (await store.get_versioned("checkpoint:b:chat"))[0] is None
    assert await delete_session(store, SCOPE, "gone") is False
    again = await agent.run("start over", make_test_ctx(llm, store=store, scope=SCOPE),
                            session="gone")
    assert llm.requests[-1].messages == (user("start over"),)
    assert again.messages == (user("start over"), said("fresh"))
    assert await list_sessions(store, SCOPE) == ("kept", "gone")


async def test_explicit_history_continues_from_result_messages_and_stores_nothing(
    store: Store,
) -> None:
    llm = FakeLLM.script([Turn("Refunded $20 on A-1."), Turn("Changed it to $30.")])
    agent = Agent("chat", "fake", "Be brief.")
    first = await agent.run("refund order A-1", make_test_ctx(llm, store=store, scope=SCOPE))
    second = await agent.run("make it $30", make_test_ctx(llm, store=store, scope=SCOPE),
                             history=first.messages)
    assert llm.requests[1].messages == (user("refund order A-1"), said("Refunded $20 on A-1."),
                                        user("make it $30"))
    assert second.messages == (*llm.requests[1].messages, said("Changed it to $30."))
    assert await list_sessions(store, SCOPE) == ()


async def test_stream_continues_a_session_too(store: Store) -> None:
    llm = FakeLLM.script([Turn("first answer"), Turn("second answer")])
    agent = Agent("chat", "fake", "Be brief.")
    await agent.run("first", make_test_ctx(llm, store=store, scope=SCOPE), session="s")
    events = [e async for e in agent.stream("second", make_test_ctx(llm, store=store,
                                                                     scope=SCOPE), session="s")]
    final = events[-1]
    assert isinstance(final, FinalEvent)
    assert final.result.messages == (user("first"), said("first answer"), user("second"),
                                     said("second answer"))
    assert await read_session(store, SCOPE, "s") == final.result.messages


async def test_a_history_policy_trims_what_the_model_sees_but_the_session_keeps_all(
    store: Store,
) -> None:
    llm = FakeLLM.script([Turn(tool_calls=(REFUND,)), Turn("Refunded."), Turn("Noted."),
                          Turn("Done.")])
    agent = Agent("desk", "fake", "You handle refunds.", cognition=ReActCognition([refund]),
                  history=HistoryPolicy(max_messages=3))
    for task in ("refund order A-1", "thanks", "bye"):
        await agent.run(task, make_test_ctx(llm, store=store, scope=SCOPE), session="s")
    assert llm.requests[3].system == "You handle refunds."
    assert llm.requests[3].messages == (user("thanks"), said("Noted."), user("bye"))
    assert len(await read_session(store, SCOPE, "s")) == 8


async def test_bad_session_arguments_are_refused_before_anything_is_stored() -> None:
    agent = Agent("chat", "fake", "Be brief.")
    ctx = make_test_ctx(FakeLLM("x"))
    with pytest.raises(ValueError) as both:
        await agent.run("hi", ctx, session="s", history=())
    assert str(both.value) == (
        "pass session= (history kept in ctx.store) or history= (history you keep), not both"
    )
    with pytest.raises(TypeError) as wrong:
        await agent.run("hi", ctx, history=["hello"])  # type: ignore[list-item]
    assert str(wrong.value) == (
        "history= takes a sequence of Message; item(s) [0] are not (the first is a str)"
    )
    with pytest.raises(ValueError) as empty:
        await agent.run("hi", ctx, session="")
    assert str(empty.value) == "session= must be a non-empty string id, got ''"
    assert await ctx.store.get_versioned(f"checkpoint:{ctx.correlation_id}:chat") == (None, 0)


_PROCESS = '''
import asyncio, json, sys
from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import Scope, ToolCall
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.state.stores import SQLiteStore
from agentkit.tools import tool

db, command = sys.argv[1:]
SCOPE = Scope("acme", "support")


@tool(side_effecting=True)
def refund(order_id: str, amount: int) -> str:
    """Refund part of a customer order, in whole dollars, and return a receipt line."""
    return f"refunded ${amount} on {order_id}"


async def main():
    agent = Agent("desk", "fake", "You handle refunds.", cognition=ReActCognition([refund]))
    store = SQLiteStore(db)
    call = ToolCall("c2", "refund", {"order_id": "A-1", "amount": 10})
    if command == "start":
        llm = FakeLLM.script([Turn("Which order?"), Turn(tool_calls=(call,))])
        await agent.run("I want a refund", make_test_ctx(llm, store=store, scope=SCOPE),
                        session="chat")
        ctx = make_test_ctx(llm, store=store, scope=SCOPE, autonomy="gated",
                            correlation_id="turn-2")
        result = await agent.run("order A-1, $10 please", ctx, session="chat")
        seen = []
    else:
        llm = FakeLLM.script([Turn("Refunded $10."), Turn("You're welcome.")])
        ctx = make_test_ctx(llm, store=store, scope=SCOPE, autonomy="gated")
        await agent.resume("turn-2", {"c2": "approve"}, ctx)
        result = await agent.run("thanks", make_test_ctx(llm, store=store, scope=SCOPE),
                                 session="chat")
        seen = [[m.role, m.content] for m in llm.requests[-1].messages]
    store.close()
    print(json.dumps({"stop_reason": result.stop_reason, "seen": seen}))

asyncio.run(main())
'''


def test_a_suspended_turn_resumes_in_a_new_process_and_the_next_turn_sees_it(
    tmp_path: Path,
) -> None:
    script = tmp_path / "chat.py"
    script.write_text(_PROCESS)
    db = tmp_path / "chat.db"

    def run(command: str) -> Any:
        proc = subprocess.run([sys.executable, str(script), str(db), command],
                              capture_output=True, text=True, timeout=60, check=False)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    assert run("start") == {"stop_reason": "suspended", "seen": []}
    assert run("resume") == {"stop_reason": "complete", "seen": [
        ["user", "I want a refund"], ["assistant", "Which order?"],
        ["user", "order A-1, $10 please"], ["assistant", ""], ["tool", "refunded $10 on A-1"],
        ["assistant", "Refunded $10."], ["user", "thanks"],
    ]}


async def test_a_turn_that_stops_without_completing_appends_nothing(store: Store) -> None:
    llm = FakeLLM.script([Turn("hello"), Turn(tool_calls=(REFUND,))])
    agent = Agent("desk", "fake", "p", cognition=ReActCognition([refund], max_iterations=1))
    await agent.run("hi", make_test_ctx(llm, store=store, scope=SCOPE), session="s")
    stopped = await agent.run("refund order A-1", make_test_ctx(llm, store=store, scope=SCOPE),
                              session="s")
    assert stopped.stop_reason == "max_iterations"
    assert await read_session(store, SCOPE, "s") == (user("hi"), said("hello"))


class _JoinFails:
    """A real store whose write of a run into its session's open log fails once, as a
    store that lost its connection at that moment would."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.failed = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    async def append(self, log: str, value: Any) -> None:
        if log.startswith("session-open:") and not self.failed:
            self.failed = True
            raise ConnectionError("the store went away")
        await self.store.append(log, value)


async def test_a_run_whose_session_join_fails_leaves_the_store_as_it_was(store: Store) -> None:
    """Nothing of the run is claimed before it is in its session's open log: the same run
    id starts again on the same store, rather than being refused as running here."""
    failing = _JoinFails(store)
    ctx = make_test_ctx(FakeLLM.script([Turn("hello")]), store=failing, scope=SCOPE,  # type: ignore[arg-type]
                        correlation_id="run-1")
    with pytest.raises(ConnectionError, match="the store went away"):
        await desk().run("hi", ctx, session="s")
    assert await store.get_versioned("checkpoint:run-1:desk") == (None, 0)
    assert await store.get_run("run-1") is None
    again = make_test_ctx(FakeLLM.script([Turn("hello")]), store=failing, scope=SCOPE,  # type: ignore[arg-type]
                          correlation_id="run-1")
    assert (await desk().run("hi", again, session="s")).output == "hello"
    assert await read_session(store, SCOPE, "s") == (user("hi"), said("hello"))


class _WorkerDied(BaseException):
    """Stands in for a worker process dying in the middle of a tool call."""


async def test_a_recovered_run_appends_its_turn_when_it_completes(store: Store) -> None:
    dying = [True]

    @tool(side_effecting=False)
    def lookup(order_id: str) -> str:
        """Look up a customer order and return its current status line."""
        if dying.pop() if dying else False:
            raise _WorkerDied
        return f"{order_id} shipped"

    call = ToolCall("c1", "lookup", {"order_id": "A-1"})
    agent = Agent("desk", "fake", "p", cognition=ReActCognition([lookup]))
    # The model's call to the read-only lookup was not yet durable when the worker died
    # in it (docs/stores.md), so the recovered run asks the model again.
    llm = FakeLLM.script([Turn("hello"), Turn(tool_calls=(call,)), Turn(tool_calls=(call,)),
                          Turn("A-1 has shipped.")])
    await agent.run("hi", make_test_ctx(llm, store=store, scope=SCOPE), session="s")
    with pytest.raises(_WorkerDied):
        await agent.run("where is A-1?", make_test_ctx(llm, store=store, scope=SCOPE,
                                                       correlation_id="r2"), session="s")
    assert await read_session(store, SCOPE, "s") == (user("hi"), said("hello"))

    done = await agent.recover("r2", make_test_ctx(llm, store=store, scope=SCOPE),
                               session="s")
    assert done.output == "A-1 has shipped."
    assert await read_session(store, SCOPE, "s") == (
        user("hi"), said("hello"), user("where is A-1?"),
        Message(role="assistant", tool_calls=(call,)),
        Message(role="tool", content="A-1 shipped", tool_call_id="c1", name="lookup"),
        said("A-1 has shipped."),
    )


class _Counting:
    """A real store, with its versioned reads and writes counted by key family."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.counts: dict[str, int] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def _count(self, what: str, key: str) -> None:
        name = f"{what} {key.split(':', 1)[0]}"
        self.counts[name] = self.counts.get(name, 0) + 1

    async def get_versioned(self, key: str) -> tuple[Any, int]:
        self._count("read", key)
        return await self.store.get_versioned(key)

    async def get_versioned_many(self, keys: list[str]) -> tuple[tuple[Any, int], ...]:
        self._count("read", keys[0])  # one round trip
        return await self.store.get_versioned_many(keys)

    async def set_versioned(self, key: str, value: Any, *, expected_version: int) -> int:
        self._count("write", key)
        return await self.store.set_versioned(key, value, expected_version=expected_version)


async def test_each_turn_writes_one_row_of_its_session_however_long_it_is(
    store: Store,
) -> None:
    """A turn reads the session once (its rows a page at a time, with the old
    whole-session record), checks the row before its own, and writes one row: never the
    conversation again."""
    counting = _Counting(store)
    agent = Agent("chat", "fake", "Be brief.")
    for n in range(3):
        ctx = make_test_ctx(FakeLLM(f"answer {n}"), store=counting, scope=SCOPE)  # type: ignore[arg-type]
        await agent.run(f"question {n}", ctx, session="counted")
    assert {k: v for k, v in counting.counts.items() if "session" in k} == {
        "read session": 3,
        "read session-turn": 2,  # the row before, from the second turn on
        "write session-turn": 3,
        "read sessions": 1,  # the scope's list, when the session is created
        "write sessions": 1,
    }


async def test_a_session_runs_checkpoints_hold_its_turn_not_the_history(
    store: Store,
) -> None:
    agent = Agent("chat", "fake", "Be brief.")
    for n in range(3):
        ctx = make_test_ctx(FakeLLM(f"answer {n}"), store=store, scope=SCOPE,
                            correlation_id=f"r{n}")
        await agent.run(f"question {n}", ctx, session="s")
    state, _ = await store.get_versioned("checkpoint:r2:chat")
    assert (state.messages, state.history_len, state.session_version, state.session_rows) == (
        (user("question 2"), said("answer 2")), 0, 2, True
    )
    row, _ = await store.get_versioned("session-turn:3:orgacme:domsupport:s")
    assert (row.messages, row.turns) == ((user("question 2"), said("answer 2")), ("r2:chat",))


_RACER = '''
import asyncio, json, os, sys, time
from agentkit.agents import Agent, SessionBusy
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import Scope, ToolCall
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.state.stores import SQLiteStore
from agentkit.tools import tool

db, folder, order = sys.argv[1:]


@tool(side_effecting=False)
def look_up(order_id: str) -> str:
    """Look up a customer order and return its status, once both racers got here."""
    open(os.path.join(folder, order), "w").close()
    deadline = time.monotonic() + 30
    while len(os.listdir(folder)) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    return order_id + " shipped"


async def main():
    store = SQLiteStore(db)
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c-" + order, "look_up", {"order_id": order}),)),
        Turn(order + " has shipped."),
    ])
    agent = Agent("desk", "fake", "p", cognition=ReActCognition([look_up]))
    ctx = make_test_ctx(llm, store=store, scope=Scope("acme", "support"))
    try:
        result = await agent.run("where is " + order + "?", ctx, session="chat")
        print(json.dumps({"appended": result.output}))
    except SessionBusy as exc:
        print(json.dumps({"busy": exc.result.output}))
    store.close()

asyncio.run(main())
'''


async def test_two_processes_racing_on_one_session_append_exactly_one_turn(
    tmp_path: Path,
) -> None:
    script = tmp_path / "racer.py"
    script.write_text(_RACER)
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    db = tmp_path / "race.db"
    racers = [
        await asyncio.create_subprocess_exec(
            sys.executable, str(script), str(db), str(barrier), order,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
        for order in ("A-1", "B-2")
    ]
    outcomes = []
    for racer in racers:
        out, err = await asyncio.wait_for(racer.communicate(), 60)
        assert racer.returncode == 0, err.decode()
        outcomes.append(json.loads(out))
    assert sorted(next(iter(o)) for o in outcomes) == ["appended", "busy"]
    (winner,) = [o["appended"] for o in outcomes if "appended" in o]
    order = winner.split(" ")[0]
    store = SQLiteStore(db)
    try:
        stored = await read_session(store, SCOPE, "chat")
    finally:
        store.close()
    assert [m.content for m in stored] == [
        f"where is {order}?", "", f"{order} shipped", f"{order} has shipped."
    ]


async def test_a_checkpoint_and_session_from_before_turn_rows_still_resume_and_append(
    store: Store,
) -> None:
    # The layout before turn rows: one record holding the whole conversation, and
    # checkpoints whose messages start with the history the run read.
    history = (user("hi"), said("hello"))
    await store.set_versioned("session:orgacme:domsupport:s",
                              SessionRecord(history, ("r0:desk",)), expected_version=0)
    asked = Message(role="assistant", tool_calls=(REFUND,))
    old = RunState(run_id="r1", agent="desk", status="suspended",
                   messages=(*history, user("refund order A-1"), asked), steps=1,
                   open_calls=(REFUND,), pending=FrozenDict({"c1": "approval"}),
                   session="s", history_len=2, session_version=1)
    await store.set_versioned("checkpoint:r1:desk", old, expected_version=0)
    llm = FakeLLM.script([Turn("Refunded $20 on A-1."), Turn("Bye.")])

    done = await desk().resume("r1", {"c1": "approve"},
                               make_test_ctx(llm, store=store, scope=SCOPE, autonomy="gated"))
    assert done.messages == (*history, *TURN_ONE)
    assert await read_session(store, SCOPE, "s") == (*history, *TURN_ONE)
    await desk().run("bye", make_test_ctx(llm, store=store, scope=SCOPE), session="s")
    assert llm.requests[-1].messages == (*history, *TURN_ONE, user("bye"))
    assert await list_sessions(store, SCOPE) == ("s",)


class _DiesBeforeAppend(_Counting):
    """A real store whose worker 'dies' when it would write a session row."""

    async def set_versioned(self, key: str, value: Any, *, expected_version: int) -> int:
        if key.startswith("session-turn:"):
            raise _WorkerDied
        return await self.store.set_versioned(key, value, expected_version=expected_version)


async def test_recover_of_a_turn_left_unappended_is_session_busy_when_another_turn_won(
    store: Store,
) -> None:
    agent = Agent("chat", "fake", "Be brief.")
    await agent.run("hi", make_test_ctx(FakeLLM("hello"), store=store, scope=SCOPE),
                    session="s")
    dying = make_test_ctx(FakeLLM("late answer"), store=_DiesBeforeAppend(store),  # type: ignore[arg-type]
                          scope=SCOPE, correlation_id="r2")
    with pytest.raises(_WorkerDied):
        await agent.run("question", dying, session="s")
    # A turn that read the same version as r2, and was appended first.
    await append_turn(store, SCOPE, "s", version=1, messages=(user("other"), said("won")),
                      turn="r3:chat", run_id="r3")

    with pytest.raises(SessionBusy) as caught:
        await agent.recover("r2", make_test_ctx(FakeLLM.script([]), store=store, scope=SCOPE))
    assert (caught.value.run_id, caught.value.result.output) == ("r2", "late answer")
    assert caught.value.result.messages == (user("hi"), said("hello"), user("question"),
                                            said("late answer"))
    assert await read_session(store, SCOPE, "s") == (user("hi"), said("hello"), user("other"),
                                                     said("won"))
