"""Micro-benchmarks for agentkit's hot paths, with a cProfile call count for each.

Run with ``make bench`` (``.venv/bin/python bench/run.py``). Standard library only.

Every timed figure is the median of ``--repeat`` runs of a ``time.perf_counter`` loop,
taken after one untimed warm-up run of the same loop, divided by the loop's length.
"calls/op" is the number of Python function calls cProfile sees per operation (a
run of N operations minus a run of none, over N), the structural cost that does not
move with the machine. The concurrent-run rows time one ``asyncio.gather`` of 1,000
agent runs instead, and take its heap from ``tracemalloc`` (the peak during the
gather, over 1,000). Import figures are wall-clock times of a fresh interpreter
minus a bare one (``python -c pass``), plus the ``-X importtime`` total of the
modules the import added.
"""

import argparse
import asyncio
import cProfile
import enum
import gc
import os
import platform
import pstats
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from itertools import count
from pathlib import Path
from typing import Any

from agentkit.agents import Agent
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ChatRequest, LLMResult, ToolCall, ToolRequest
from agentkit.core.policies import Budget, default_tool_chain, idempotent
from agentkit.core.runtime import RunContext
from agentkit.core.testing import FakeLLM, RecordingTracer, Turn, make_test_ctx
from agentkit.tools import FunctionTool, tool

ROOT = Path(__file__).resolve().parents[1]

Loop = Callable[[], Awaitable[None]]
"""One timed run: performs the operation ``n`` times (``n`` fixed when it was built)."""

Setup = Callable[[int], Awaitable[Loop]]
"""Builds a fresh, ready-to-time run of ``n`` operations (untimed)."""


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the results table."""

    name: str
    value: float
    unit: str
    calls: float | None = None
    target: float | None = None
    calls_target: float | None = None
    """The most calls per operation the row may make (issue 22's bounds)."""

    @property
    def verdict(self) -> str:
        verdicts = []
        if self.target is not None:
            verdicts.append("ok" if self.value <= self.target else "MISSED")
        if self.calls_target is not None and self.calls is not None:
            held = self.calls <= self.calls_target
            verdicts.append(f"calls {'ok' if held else 'MISSED'} (<= {self.calls_target:g})")
        return ", ".join(verdicts)


# -- the operations ----------------------------------------------------------------


class Unit(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


@tool(side_effecting=False, idempotent=True)
async def forecast(city: str, days: int = 3) -> str:
    """Return a short weather forecast for a city over the next few days."""
    return city


@tool(side_effecting=False, idempotent=True, name="forecast")
def forecast_sync(city: str, days: int = 3) -> str:
    """Return a short weather forecast for a city over the next few days."""
    return city


@tool(side_effecting=False, idempotent=True, name="forecast")
async def forecast_remote(city: str, days: int = 3) -> str:
    """Return a short weather forecast for a city over the next few days."""
    await asyncio.sleep(0)  # its answer arrives on a later turn of the loop, as I/O does
    return city


@tool(side_effecting=True)
async def send_email(to: str, body: str) -> str:
    """Send one email to a single recipient and return the provider message id."""
    return to


ARGUMENTS = {"city": "Lisbon", "days": 2}
DEFAULT_CHAIN_CALLS = 82.0
"""Issue 22: a tool call through default_tool_chain() makes no more calls than turn one's."""
_runs = count()


def fresh_ctx(middleware: list[Any]) -> RunContext:
    # A new run id and a new store each time, so no run sees another's entries.
    return make_test_ctx(tool_middleware=middleware, correlation_id=f"bench-{next(_runs)}")


async def direct_call(n: int) -> Loop:
    fn = forecast.fn

    async def run() -> None:
        for _ in range(n):
            await fn(**ARGUMENTS)

    return run


def invoke(the_tool: FunctionTool, middleware: list[Any]) -> Setup:
    async def setup(n: int) -> Loop:
        ctx = fresh_ctx(middleware)
        call = ctx.invoker.invoke_tool
        request = ToolRequest(name=the_tool.name, arguments=ARGUMENTS, tool=the_tool)

        async def run() -> None:
            for _ in range(n):
                await call(request, ctx)

        return run

    return setup


async def invoke_with_request(n: int) -> Loop:
    ctx = fresh_ctx([])
    call = ctx.invoker.invoke_tool

    async def run() -> None:
        for _ in range(n):
            await call(ToolRequest(name="forecast", arguments=ARGUMENTS, tool=forecast), ctx)

    return run


def emails(n: int) -> list[ToolRequest]:
    return [
        ToolRequest(
            name="send_email",
            arguments={"to": f"user{i}@example.com", "body": "prod is down"},
            tool=send_email,
        )
        for i in range(n)
    ]


async def idempotent_executed(n: int) -> Loop:
    ctx = fresh_ctx([idempotent()])
    call = ctx.invoker.invoke_tool
    requests = emails(n)  # distinct arguments: every call takes the executed path

    async def run() -> None:
        for request in requests:
            await call(request, ctx)

    return run


async def idempotent_replayed(n: int) -> Loop:
    ctx = fresh_ctx([idempotent()])
    call = ctx.invoker.invoke_tool
    (request,) = emails(1)
    await call(request, ctx)  # executes once, untimed; every timed call replays

    async def run() -> None:
        for _ in range(n):
            await call(request, ctx)

    return run


def _default_chain(traced: bool) -> Setup:
    async def setup(n: int) -> Loop:
        ctx = make_test_ctx(
            tool_middleware=default_tool_chain(),
            correlation_id=f"bench-{next(_runs)}",
            tracer=RecordingTracer() if traced else None,
            budget=Budget(max_cost_usd=100.0, max_calls=10_000_000) if traced else None,
        )
        call = ctx.invoker.invoke_tool
        requests = emails(n)  # distinct arguments: idempotent() executes every call

        async def run() -> None:
            for request in requests:
                await call(request, ctx)

        return run

    return setup


# The agent run: the model asks for one forecast, reads it, then answers.
SCRIPT = (
    Turn(tool_calls=(ToolCall("call_1", "forecast", ARGUMENTS),)),
    Turn(content="Mild and dry in Lisbon for the next two days."),
)
AGENT = Agent(
    "forecaster", "fake", "Answer weather questions.", cognition=ReActCognition(tools=[forecast])
)
CONCURRENT_RUNS = 1_000


class _RemoteFakeLLM(FakeLLM):
    """A FakeLLM whose answer arrives on a later turn of the event loop, as a network
    reply does. Plain FakeLLM never suspends, so each run of a gather would finish
    inside its task's first step and the runs would never be in flight together."""

    async def chat(self, request: ChatRequest, ctx: RunContext) -> LLMResult:
        await asyncio.sleep(0)
        return await super().chat(request, ctx)


ASYNC_AGENT = Agent(
    "forecaster", "fake", "Answer weather questions.",
    cognition=ReActCognition(tools=[forecast_remote]),
)
SYNC_AGENT = Agent(
    "forecaster", "fake", "Answer weather questions.",
    cognition=ReActCognition(tools=[forecast_sync]),
)
TASK = "What is the weather in Lisbon?"


async def _agent_run(llm_type: type[FakeLLM] = FakeLLM, agent: Agent = AGENT) -> None:
    # A run as a caller makes one: its own context (new run id, store) and model.
    ctx = make_test_ctx(llm=llm_type.script(SCRIPT))
    result = await agent.run(TASK, ctx)
    if result.output != SCRIPT[-1].content or result.messages[2].is_error:
        raise AssertionError(f"the benchmark run did not complete: {result!r}")


async def agent_runs(n: int) -> Loop:
    async def run() -> None:
        for _ in range(n):
            await _agent_run()

    return run


def remote_agent_runs(agent: Agent) -> Setup:
    async def setup(n: int) -> Loop:
        async def run() -> None:
            for _ in range(n):
                await _agent_run(_RemoteFakeLLM, agent)

        return run

    return setup


async def concurrent_agent_runs(n: int) -> Loop:
    async def run() -> None:
        await asyncio.gather(*[_agent_run(_RemoteFakeLLM) for _ in range(n)])

    return run


# The floor: the same run in bare Python, with no framework. A scripted model hands out
# the same two turns, the tool's function is called with the model's arguments, and the
# messages are kept as dicts. What agentkit adds to a run is its time over this one.


async def _floor_run(remote: bool = False, tool_kind: str = "plain") -> None:
    turns = iter(SCRIPT)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": AGENT.prompt}, {"role": "user", "content": TASK}
    ]
    while True:
        if remote:
            await asyncio.sleep(0)  # the model's reply arrives on a later turn of the loop
        turn = next(turns)
        if not turn.tool_calls:
            messages.append({"role": "assistant", "content": turn.content})
            if turn.content != SCRIPT[-1].content:
                raise AssertionError("the floor run did not complete")
            return
        messages.append({"role": "assistant", "tool_calls": turn.tool_calls})
        for call in turn.tool_calls:
            if tool_kind == "thread":
                out = await asyncio.to_thread(forecast_sync.fn, **call.arguments)
            elif tool_kind == "remote":
                out = await forecast_remote.fn(**call.arguments)
            else:
                out = await forecast.fn(**call.arguments)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": str(out)})


def floor_runs(remote: bool, tool_kind: str) -> Setup:
    async def setup(n: int) -> Loop:
        async def run() -> None:
            for _ in range(n):
                await _floor_run(remote, tool_kind)

        return run

    return setup


async def concurrent_floor_runs(n: int) -> Loop:
    async def run() -> None:
        await asyncio.gather(*[_floor_run(remote=True) for _ in range(n)])

    return run


def define_tool(n: int) -> None:
    for _ in range(n):

        def forecast(city: str, unit: Unit, days: int = 3) -> str:
            """Return a short weather forecast for a city over the next few days."""
            return city

        tool(side_effecting=False)(forecast)


def define_tool_string_annotations(n: int) -> None:
    # As in a module with `from __future__ import annotations`: @tool evaluates them.
    for _ in range(n):

        def forecast(city: "str", unit: "Unit", days: "int" = 3) -> "str":
            """Return a short weather forecast for a city over the next few days."""
            return city

        tool(side_effecting=False)(forecast)


# -- measuring ---------------------------------------------------------------------


async def _time_async(setup: Setup, number: int, repeat: int) -> float:
    await (await setup(number))()  # warm-up
    samples = []
    for _ in range(repeat):
        run = await setup(number)
        start = time.perf_counter()
        await run()
        samples.append((time.perf_counter() - start) / number)
    return statistics.median(samples) * 1e6


async def _calls_async(setup: Setup, number: int) -> float:
    counts = []
    for n in (0, number):
        run = await setup(n)
        profiler = cProfile.Profile()
        profiler.enable()
        await run()
        profiler.disable()
        counts.append(pstats.Stats(profiler).total_calls)
    return (counts[1] - counts[0]) / number


def _time_sync(op: Callable[[int], None], number: int, repeat: int) -> float:
    op(number)  # warm-up
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        op(number)
        samples.append((time.perf_counter() - start) / number)
    return statistics.median(samples) * 1e6


def _calls_sync(op: Callable[[int], None], number: int) -> float:
    counts = []
    for n in (0, number):
        profiler = cProfile.Profile()
        profiler.enable()
        op(n)
        profiler.disable()
        counts.append(pstats.Stats(profiler).total_calls)
    return (counts[1] - counts[0]) / number


async def _peak_heap_async(setup: Setup, number: int) -> float:
    """Peak bytes ``tracemalloc`` sees live during one run of ``number`` operations
    (after a warm-up), over ``number``."""
    await (await setup(number))()
    run = await setup(number)
    gc.collect()
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        await run()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return (peak - before) / number


def _wall(code: str, repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e3


def _import_times(code: str) -> dict[str, int]:
    """Self time in µs of every module ``-X importtime`` reports while running ``code``."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        check=True, cwd=ROOT, capture_output=True, text=True,
    )
    times: dict[str, int] = {}
    for line in result.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, _cumulative, name = line.removeprefix("import time:").split("|")
        times[name.strip()] = int(self_us)
    return times


def import_cost(
    statement: str, repeat: int, bare_ms: float
) -> tuple[float, float, list[tuple[str, int]]]:
    """(wall ms over a bare interpreter, importtime ms, the five slowest modules added)."""
    wall = _wall(statement, repeat) - bare_ms
    base = _import_times("pass")
    added = {k: v for k, v in _import_times(statement).items() if k not in base}
    slowest = sorted(added.items(), key=lambda item: -item[1])[:5]
    return wall, sum(added.values()) / 1e3, slowest


# -- the report --------------------------------------------------------------------


async def _invocation_rows(scale: float, repeat: int) -> list[Row]:
    n = max(1, int(20_000 * scale))
    n_sync = max(1, int(2_000 * scale))
    profile_n = 1_000
    cases: list[tuple[str, Setup, int, float | None]] = [
        ("async tool, direct `await fn(**kw)`", direct_call, n, None),
        ("async tool, invoke_tool, empty chain", invoke(forecast, []), n, 10.0),
        ("  same, building the ToolRequest too", invoke_with_request, n, 10.0),
        ("sync tool, invoke_tool, empty chain*", invoke(forecast_sync, []), n_sync, None),
        ("side-effecting, [idempotent()], executed", idempotent_executed, n, 30.0),
        ("side-effecting, [idempotent()], replayed", idempotent_replayed, n, 30.0),
        ("side-effecting, default_tool_chain(), no tracer", _default_chain(False), n, 40.0),
        ("  same, RecordingTracer and a Budget", _default_chain(True), n, 40.0),
    ]
    rows = []
    for name, setup, number, target in cases:
        per_call = await _time_async(setup, number, repeat)
        calls = await _calls_async(setup, min(profile_n, number))
        bound = DEFAULT_CHAIN_CALLS if "default_tool_chain()" in name else None
        rows.append(Row(name, per_call, "µs", calls, target, bound))
    return rows


async def _interleaved(
    setups: tuple[Setup, Setup], number: int, repeat: int
) -> tuple[float, float]:
    """Median µs per operation of two setups timed in turns, so that a busy machine
    slows both alike (their ratio is the figure that means something here)."""
    for setup in setups:
        await (await setup(number))()  # warm-up
    samples: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for setup, kept in zip(setups, samples, strict=True):
            run = await setup(number)
            start = time.perf_counter()
            await run()
            kept.append((time.perf_counter() - start) / number)
    return statistics.median(samples[0]) * 1e6, statistics.median(samples[1]) * 1e6


async def _agent_rows(scale: float, repeat: int) -> list[Row]:
    n = max(1, int(2_000 * scale))
    n_thread = max(1, int(500 * scale))
    rows = [
        Row(
            "ReAct run, 2 turns + 1 tool call, sequential",
            await _time_async(agent_runs, n, repeat),
            "µs",
            await _calls_async(agent_runs, min(1_000, n)),
            150.0,
        )
    ]
    for name, agent, floor, number, target in (
        ("ReAct run, async model and async tool (each yields once)",
         remote_agent_runs(ASYNC_AGENT), floor_runs(True, "remote"), n, 12.0),
        ("ReAct run, async model and sync tool (worker thread)*",
         remote_agent_runs(SYNC_AGENT), floor_runs(True, "thread"), n_thread, 1.4),
    ):
        run_us, floor_us = await _interleaved((agent, floor), number, repeat)
        calls = await _calls_async(agent, min(1_000, number))
        floor_calls = await _calls_async(floor, min(1_000, number))
        rows.append(Row(name, run_us, "µs", calls))
        rows.append(Row("  the floor: the same run in bare Python", floor_us, "µs", floor_calls))
        rows.append(Row("  run / floor", run_us / floor_us, "×", None, target))
    per_run, floor_per_run = await _interleaved(
        (concurrent_agent_runs, concurrent_floor_runs), CONCURRENT_RUNS, repeat
    )
    wall_ms = per_run * CONCURRENT_RUNS / 1e3
    calls = await _calls_async(concurrent_agent_runs, CONCURRENT_RUNS)
    rows.append(Row("1000 runs at once (gather), wall time**", wall_ms, "ms", calls, 300.0))
    floor_calls = await _calls_async(concurrent_floor_runs, CONCURRENT_RUNS)
    rows.append(Row("  the floor, 1000 at once", floor_per_run * CONCURRENT_RUNS / 1e3, "ms",
                    floor_calls))
    rows.append(Row("  runs / floor", per_run / floor_per_run, "×", None, 15.0))
    heap = await _peak_heap_async(concurrent_agent_runs, CONCURRENT_RUNS)
    rows.append(Row("  same, peak heap per run (tracemalloc)", heap / 1024, "KB", None, 8.0))
    return rows


def _definition_rows(scale: float, repeat: int) -> list[Row]:
    n = max(1, int(2_000 * scale))
    rows = []
    for label, op in (
        ("evaluated", define_tool),
        ("string (PEP 563)", define_tool_string_annotations),
    ):
        rows.append(
            Row(
                f"@tool, 3 params incl. Enum, {label} annotations",
                _time_sync(op, n, repeat),
                "µs",
                _calls_sync(op, min(500, n)),
                100.0,
            )
        )
    return rows


def _print_table(rows: list[Row]) -> None:
    width = max(len(r.name) for r in rows)
    header = f"{'measurement':<{width}}  {'median':>11}  {'calls/op':>8}  {'target':>10}"
    print(header)
    print("-" * (len(header) + 8))
    for r in rows:
        calls = "" if r.calls is None else f"{r.calls:8.0f}"
        target = "" if r.target is None else f"< {r.target:g} {r.unit}"
        print(
            f"{r.name:<{width}}  {r.value:8.2f} {r.unit:<2}  {calls:>8}  {target:>10}  {r.verdict}"
        )


IMPORTS: tuple[tuple[str, float | None], ...] = (
    ("import agentkit", 100.0),
    # The top-level names are lazy: the cost moves to the first one used.
    ("from agentkit import Agent, tool", None),
    ("import agentkit.tools", None),
)
"""The import rows: a statement, and its target in ms."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--repeat", type=int, default=7, help="timed runs per figure (median)")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply loop lengths")
    parser.add_argument("--import-repeat", type=int, default=11, help="interpreters per figure")
    parser.add_argument(
        "--only", choices=("invocation", "agent", "definition", "imports"), action="append",
        help="measure only these groups of rows (repeatable); default: all",
    )
    args = parser.parse_args()
    groups = set(args.only or ("invocation", "agent", "definition", "imports"))

    print(
        f"agentkit bench: Python {platform.python_version()} on {platform.machine()}, "
        f"{os.cpu_count()} CPUs, median of {args.repeat} runs\n"
    )
    rows: list[Row] = []
    if "invocation" in groups:
        rows += asyncio.run(_invocation_rows(args.scale, args.repeat))
    if "agent" in groups:
        rows += asyncio.run(_agent_rows(args.scale, args.repeat))
    if "definition" in groups:
        rows += _definition_rows(args.scale, args.repeat)
    slowest: dict[str, list[tuple[str, int]]] = {}
    bare_ms = _wall("pass", args.import_repeat) if "imports" in groups else 0.0
    for statement, target in IMPORTS if "imports" in groups else ():
        wall, importtime, slowest[statement] = import_cost(statement, args.import_repeat, bare_ms)
        rows.append(Row(f"{statement} (fresh interpreter)", wall, "ms", None, target))
        rows.append(Row("  -X importtime total of modules added", importtime, "ms"))
    _print_table(rows)
    print(
        "\n* a sync tool runs in a worker thread (asyncio.to_thread) by design; "
        "its calls/op counts the event-loop thread only."
    )
    print(
        "** each run's model call yields to the event loop once, as a network reply does, so "
        "all 1000 runs are in flight together; calls/op is per run."
    )
    for statement, modules in slowest.items():
        shown = ", ".join(f"{name} {us / 1e3:.1f} ms" for name, us in modules)
        print(f"slowest modules under `{statement}` (self time): {shown}")


if __name__ == "__main__":
    main()
