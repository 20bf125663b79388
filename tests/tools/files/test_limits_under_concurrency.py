"""Limits hold when several FileTools write one tree at once: two tools in one event loop,
tools in several threads, and tools in several processes. A limit check and the write it
guards run under the backend's lock (a lock file on disk, a SQLite transaction), so no
two writers both see room for the last file."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agentkit.tools import (
    Files,
    FileTool,
    InMemoryFiles,
    LocalFiles,
    PostgresFiles,
    SQLiteFiles,
)
from agentkit.tools.files import ROOT, FileLimitExceeded

from .conftest import BACKENDS, make_files

_DISK_BACKENDS = ["local", "sqlite"]


@pytest.fixture(params=BACKENDS)
async def twins(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[tuple[Files, Files]]:
    """Two backend objects over one tree (one object for the in-memory backend)."""
    first = make_files(request.param, tmp_path, request)
    second = (
        first if isinstance(first, InMemoryFiles)
        else make_files(request.param, tmp_path, request)
    )
    yield first, second
    for backend in (first, second):
        if isinstance(backend, SQLiteFiles):
            backend.close()
        elif isinstance(backend, PostgresFiles):
            await backend.close()


async def _create(tool: FileTool, name: str) -> bool:
    """True when the file was created, False when a limit refused it."""
    try:
        await tool.run({"command": "create", "path": f"/memories/{name}.md", "file_text": "x"},
                       None)
    except FileLimitExceeded as exc:
        assert exc.limit == "files"
        return False
    return True


async def test_two_tools_over_one_tree_never_exceed_max_files(
    twins: tuple[Files, Files],
) -> None:
    tools = [FileTool(twins[0], max_files=5), FileTool(twins[1], max_files=5)]

    created = await asyncio.gather(*(_create(tools[i % 2], f"n{i}") for i in range(20)))

    assert sum(created) == 5
    assert (await twins[0].usage()).files == 5
    assert (await twins[1].usage()).files == 5


async def test_a_directory_move_racing_another_never_exceeds_max_depth(
    twins: tuple[Files, Files],
) -> None:
    """Each move alone stays within the limit; both together would not."""
    first, second = FileTool(twins[0], max_depth=6), FileTool(twins[1], max_depth=6)
    await first.run({"command": "create", "path": "/memories/a/b/c/n.md", "file_text": "x"},
                    None)
    await first.run({"command": "create", "path": "/memories/p/q/r/m.md", "file_text": "x"},
                    None)

    outcomes = await asyncio.gather(
        first.run({"command": "rename", "old_path": "/memories/a",
                   "new_path": "/memories/p/q/a"}, None),
        second.run({"command": "rename", "old_path": "/memories/p",
                    "new_path": "/memories/a/b/p"}, None),
        return_exceptions=True,
    )

    assert sorted(type(o).__name__ for o in outcomes) == ["FileLimitExceeded", "str"]
    assert max(len(e.path.parts) for e in await twins[0].listing(ROOT, None)) == 6


@pytest.mark.parametrize("kind", _DISK_BACKENDS)
def test_tools_in_several_threads_never_exceed_max_files(kind: str, tmp_path: Path) -> None:
    threads = 4
    start = threading.Barrier(threads)
    created: list[int] = []

    def worker(index: int) -> None:
        files = make_files(kind, tmp_path)
        tool = FileTool(files, max_files=5)

        async def main() -> int:
            return sum(await asyncio.gather(
                *(_create(tool, f"t{index}-{i}") for i in range(5))
            ))

        start.wait()
        try:
            created.append(asyncio.run(main()))
        finally:
            if isinstance(files, SQLiteFiles):
                files.close()

    pool = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()

    assert sum(created) == 5
    assert len(created) == threads


_PROCESS = """
import asyncio, os, sys
from agentkit.tools import FileTool, LocalFiles, SQLiteFiles
from agentkit.tools.files import FileLimitExceeded

kind, where, name, trees = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

def tree(t):
    if kind == "local":
        return LocalFiles(os.path.join(where, f"t{t}"))
    return SQLiteFiles(where, namespace=f"t{t}")

tools = [FileTool(tree(t), max_files=5) for t in range(trees)]

async def create(tool, i):
    try:
        await tool.run({"command": "create", "path": f"/memories/{name}-{i}.md",
                        "file_text": "x"}, None)
        return 1
    except FileLimitExceeded:
        return 0

async def main():
    return await asyncio.gather(*(
        create(tool, i) for i in range(5) for tool in tools
    ))

print("ready", flush=True)
sys.stdin.readline()
print(sum(asyncio.run(main())), flush=True)
"""


def _tree(kind: str, tmp_path: Path, t: int) -> Files:
    if kind == "local":
        return LocalFiles(tmp_path / "memories" / f"t{t}")
    return SQLiteFiles(tmp_path / "state.db", namespace=f"t{t}")


@pytest.mark.parametrize("kind", _DISK_BACKENDS)
def test_tools_in_several_processes_never_exceed_max_files(kind: str, tmp_path: Path) -> None:
    """Four processes race for the last free places of five trees at once."""
    trees = 5
    where = str(tmp_path / ("memories" if kind == "local" else "state.db"))
    made = _tree(kind, tmp_path, 0)  # the directory (and the table) exist before the race
    if isinstance(made, SQLiteFiles):
        made.close()
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _PROCESS, kind, where, f"p{i}", str(trees)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        for i in range(4)
    ]
    try:
        for process in processes:
            assert process.stdout is not None
            assert process.stdout.readline() == "ready\n"
        for process in processes:  # start them together
            assert process.stdin is not None
            process.stdin.write("go\n")
            process.stdin.flush()
        created = [int(process.communicate(timeout=120)[0]) for process in processes]
    finally:
        for process in processes:
            if process.poll() is None:
                process.kill()
                process.wait()

    assert [process.returncode for process in processes] == [0, 0, 0, 0]
    assert sum(created) == 5 * trees
    for t in range(trees):
        files = _tree(kind, tmp_path, t)
        try:
            assert asyncio.run(files.usage()).files == 5
        finally:
            if isinstance(files, SQLiteFiles):
                files.close()


_DIE_HOLDING_THE_LOCK = """
import asyncio, os, sys
from agentkit.tools import LocalFiles, SQLiteFiles
from agentkit.tools.files import parse_path

kind, where = sys.argv[1], sys.argv[2]
files = LocalFiles(where) if kind == "local" else SQLiteFiles(where)

async def main():
    async with files.exclusive() as tx:
        await tx.write(parse_path("/memories/half.md"), "written under the lock")
        os._exit(9)  # dies holding the lock

asyncio.run(main())
"""


@pytest.mark.parametrize("kind", _DISK_BACKENDS)
async def test_a_process_killed_holding_the_write_lock_does_not_block_others(
    kind: str, tmp_path: Path
) -> None:
    where = str(tmp_path / ("memories" if kind == "local" else "state.db"))
    files = make_files(kind, tmp_path)
    try:
        done = subprocess.run([sys.executable, "-c", _DIE_HOLDING_THE_LOCK, kind, where],
                              check=False)
        assert done.returncode == 9

        created = await asyncio.wait_for(_create(FileTool(files), "after"), timeout=60)

        assert created
        # On disk the write had finished before the kill; in SQLite it was never committed.
        expected = ["/memories/after.md"] + (["/memories/half.md"] if kind == "local" else [])
        assert sorted(str(e.path) for e in await files.listing(ROOT, None)) == expected
    finally:
        if isinstance(files, SQLiteFiles):
            files.close()
