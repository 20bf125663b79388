"""Two processes racing for one run: each either runs it or gets RunNotResumable before
it runs any step, never a VersionConflict mid-run or a raw sqlite3 error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentkit.agents import Agent, RunTakenOver
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.state.checkpoints import StoreCheckpointer
from agentkit.state.stores.memory import InMemoryStore

_RACER = '''
import asyncio, json, os, sys, time
from agentkit.agents import Agent, RunNotResumable
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ToolCall
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.state.stores.sqlite import SQLiteStore
from agentkit.tools import tool

db, folder, mode, me, rounds, size = sys.argv[1:7]
rounds, size = int(rounds), int(size)


@tool(side_effecting=True)
def work(n: int) -> str:
    """Do one unit of work for the run; appends a line to the effects file."""
    with open(os.path.join(folder, "effects"), "a") as f:
        f.write(f"{me} {n}\\n")
    return "worked"


async def slow_model(request, ctx, call_next):
    await asyncio.sleep(0.02)  # a model reply takes a while: the run is mid-flight
    return await call_next(request, ctx)


agent = Agent("racer", "fake", "p", cognition=ReActCognition([work]))


def gate(name):
    folder_ = os.path.join(folder, name)
    os.makedirs(folder_, exist_ok=True)
    open(os.path.join(folder_, me), "w").close()
    while len(os.listdir(folder_)) < size:
        time.sleep(0.0005)


async def one(r):
    if mode == "setup":  # leave run-r "running" with no live worker: the script runs out
        llm = FakeLLM.script([Turn(tool_calls=(ToolCall("w", "work", {"n": r}),))])
        ctx = make_test_ctx(llm=llm, store=store, correlation_id=f"run-{r}")
        try:
            await agent.run("task", ctx)
        except Exception:
            pass
        return None
    if mode == "run":
        turns = [Turn(tool_calls=(ToolCall("w", "work", {"n": r}),)), Turn(content="done")]
    else:
        turns = [Turn(content="done")]
    llm = FakeLLM.script(turns)
    ctx = make_test_ctx(llm=llm, store=store, chat_middleware=[slow_model],
                        correlation_id=f"run-{r}" if mode == "run" else None)
    gate(f"{mode}{r}")
    try:
        if mode == "run":
            result = await agent.run("task", ctx)
        else:
            result = await agent.recover(f"run-{r}", ctx)
        outcome = result.stop_reason
    except RunNotResumable as exc:
        outcome = "not_resumable: " + exc.reason
    except Exception as exc:
        outcome = f"error: {type(exc).__name__}: {exc}"
    return [outcome, len(llm.requests)]


async def main():
    global store
    store = SQLiteStore(db)
    try:
        print(json.dumps([await one(r) for r in range(rounds)]))
    finally:
        store.close()

asyncio.run(main())
'''

ROUNDS = 25


def _race(tmp_path: Path, mode: str) -> list[list[Any]]:
    script = tmp_path / "racer.py"
    script.write_text(_RACER)
    db = tmp_path / "runs.db"

    def argv(me: str, run_mode: str) -> list[str]:
        return [sys.executable, str(script), str(db), str(tmp_path), run_mode, me,
                str(ROUNDS), "2"]

    if mode == "recover":
        setup = subprocess.run(argv("setup", "setup"), capture_output=True, text=True,
                               timeout=120, check=False)
        assert setup.returncode == 0, setup.stderr
    procs = [subprocess.Popen(argv(me, mode), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for me in ("a", "b")]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        results.append(json.loads(out))
    return [list(pair) for pair in zip(*results, strict=True)]


def test_of_two_processes_starting_one_run_id_the_loser_fails_before_any_step(
    tmp_path: Path,
) -> None:
    losers = 0
    for a, b in _race(tmp_path, "run"):
        for outcome, model_calls in (a, b):
            if outcome == "complete":
                assert model_calls == 2
            else:
                losers += 1
                assert model_calls == 0, outcome
                assert outcome in {
                    "not_resumable: agent 'racer' already has a running run under this run id; "
                    "continue it with agent.recover(...) or start the new run on a fresh "
                    "context",
                    "not_resumable: another worker started agent 'racer' under this run id "
                    "at the same moment, and got there first; start the new run on a fresh "
                    "context",
                }, outcome
    assert losers >= 1  # the race really happened


def test_of_two_processes_recovering_one_run_the_loser_fails_before_any_step(
    tmp_path: Path,
) -> None:
    for a, b in _race(tmp_path, "recover"):
        outcomes = sorted([a, b], key=lambda o: o[0] != "complete")
        assert outcomes[0] == ["complete", 1], outcomes
        loser, model_calls = outcomes[1]
        assert model_calls == 0, loser
        assert loser.startswith("not_resumable: "), loser
        assert loser in {
            "not_resumable: another worker took it over first",
            "not_resumable: it is complete, not running",
        } or (loser.startswith("not_resumable: its worker (process ")
              and loser.endswith(") is still running it; recover only takes over a run "
                                 "whose worker died")), loser


async def test_a_worker_whose_run_was_taken_over_stops_with_run_taken_over() -> None:
    """A worker on another machine cannot be checked, so recover takes its run over; if
    it was alive after all, its next save fails with a typed error and it writes nothing."""
    store = InMemoryStore()
    checkpoints = StoreCheckpointer(store)
    key = "run-7:clerk"

    async def taken_over_meanwhile(request: Any, ctx: Any, call_next: Any) -> Any:
        state, version = await checkpoints.load(key)
        await checkpoints.save(key, state, expected_version=version)  # the other worker
        return await call_next(request, ctx)

    ctx = make_test_ctx(llm=FakeLLM.script([Turn(content="hi")]), store=store,
                        correlation_id="run-7", chat_middleware=[taken_over_meanwhile])
    agent = Agent("clerk", "fake", "p")
    with pytest.raises(RunTakenOver) as info:
        await agent.run("task", ctx)
    assert str(info.value) == (
        "run 'run-7' cannot be resumed: another worker took it over and saved a newer "
        "checkpoint; this worker stopped"
    )
    state, version = await checkpoints.load(key)
    assert (state.status, state.steps, version) == ("running", 0, 2)  # nothing more written
