"""Several processes opening one new SQLite file at the same moment all succeed: the
switch to WAL mode is retried within the busy timeout instead of failing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

_OPENER = """
import asyncio, json, os, sys, time
from agentkit.state.stores.sqlite import SQLiteStore

folder, me, rounds, size = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
failures = []


async def use(store, r):
    await store.set(f"k{me}", r)
    return await store.get(f"k{me}")


for r in range(rounds):
    gate = os.path.join(folder, f"gate{r}")
    os.makedirs(gate, exist_ok=True)
    open(os.path.join(gate, me), "w").close()
    while len(os.listdir(gate)) < size:  # everyone opens round r's new file together
        time.sleep(0.0005)
    try:
        store = SQLiteStore(os.path.join(folder, f"round{r}.db"))
        try:
            assert asyncio.run(use(store, r)) == r
        finally:
            store.close()
    except Exception as exc:
        failures.append(f"round {r}: {type(exc).__name__}: {exc}")
print(json.dumps(failures))
"""


def test_four_processes_opening_a_new_file_at_once_all_succeed(tmp_path: Path) -> None:
    script = tmp_path / "opener.py"
    script.write_text(_OPENER)
    rounds, size = 60, 4
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), str(tmp_path), str(n), str(rounds), str(size)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for n in range(size)
    ]
    failures = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        failures.extend(json.loads(out))
    assert failures == []
