"""cProfile shares of each hot path that bench/run.py times: where a call or a run spends
its time, by function (own time), with the calls per operation.

Run with ``.venv/bin/python bench/profile_shares.py``; point ``PYTHONPATH`` at another
tree to profile its agentkit with the same operations (bench/README.md's before/after).
"""

import argparse
import asyncio
import cProfile
import pstats
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import run as bench  # the operations of bench/run.py, measured the same way

PATHS = (
    ("tool call, default_tool_chain(), no tracer", bench._default_chain(False), 2_000),
    ("ReAct run, 2 turns + 1 tool call, sequential", bench.agent_runs, 500),
    ("ReAct run, async model and async tool", bench.remote_agent_runs(bench.ASYNC_AGENT), 500),
    ("1000 runs at once (gather)", bench.concurrent_agent_runs, 1_000),
)


def _where(key: tuple[str, int, str]) -> str:
    filename, _line, name = key
    if filename == "~":
        return name  # a builtin
    parts = Path(filename).parts
    short = "/".join(parts[parts.index("agentkit"):]) if "agentkit" in parts else parts[-1]
    return f"{short}:{name}"


async def _profile(setup: bench.Setup, n: int) -> pstats.Stats:
    await (await setup(n))()  # warm-up
    run = await setup(n)
    profiler = cProfile.Profile()
    profiler.enable()
    await run()
    profiler.disable()
    return pstats.Stats(profiler)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--top", type=int, default=8, help="functions shown per path")
    args = parser.parse_args()
    for name, setup, n in PATHS:
        stats = asyncio.run(_profile(setup, n))
        entries = stats.stats  # type: ignore[attr-defined]
        total = sum(entry[2] for entry in entries.values()) or 1.0
        calls = sum(entry[1] for entry in entries.values())
        print(f"\n{name}: {calls / n:.0f} calls per operation (incl. the event loop's)")
        ranked = sorted(entries.items(), key=lambda item: -item[1][2])[: args.top]
        for key, (_, ncalls, own, _cum, _callers) in ranked:
            print(f"  {100 * own / total:5.1f}%  {ncalls / n:6.1f} calls  {_where(key)}")


if __name__ == "__main__":
    main()
