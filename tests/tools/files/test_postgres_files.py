"""PostgresFiles beyond the shared FileTool suite: limits that hold for writers on
separate connections and in separate processes (as on separate hosts), a worker killed
inside the write lock, sharing a store's connections, and namespaces."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from agentkit.state.stores.postgres import PostgresStore
from agentkit.tools import FileTool, PostgresFiles
from agentkit.tools.files import ROOT, FileLimitExceeded, FileUsage, MemoryPath, parse_path


def _p(name: str) -> MemoryPath:
    return parse_path(f"/memories/{name}")


async def test_concurrent_creates_from_two_hosts_never_exceed_max_files(
    postgres_dsn: str, postgres_schema: str
) -> None:
    hosts = [PostgresFiles(postgres_dsn, schema=postgres_schema, namespace="team")
             for _ in range(2)]
    tools = [FileTool(files, max_files=5) for files in hosts]
    try:
        outcomes = await asyncio.gather(
            *(
                tools[i % 2].run(
                    {"command": "create", "path": f"/memories/n{i}.md", "file_text": "note"},
                    None,
                )
                for i in range(20)
            ),
            return_exceptions=True,
        )
        made = [o for o in outcomes if isinstance(o, str)]
        refused = [o for o in outcomes if isinstance(o, FileLimitExceeded)]
        assert (len(made), len(refused)) == (5, 15)
        assert {(e.limit, e.maximum, e.would_be) for e in refused} == {("files", 5, 6)}
        assert await hosts[0].usage() == FileUsage(files=5, bytes=20)
        assert len(await hosts[1].listing(ROOT, None)) == 5
    finally:
        for files in hosts:
            await files.close()


_PROCESS = """
import asyncio, sys
from agentkit.tools import FileTool, PostgresFiles
from agentkit.tools.files import FileLimitExceeded

dsn, schema, name, trees = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

async def main():
    backends = [PostgresFiles(dsn, schema=schema, namespace=f"t{t}") for t in range(trees)]
    tools = [FileTool(files, max_files=5) for files in backends]
    await backends[0].usage()  # connected before the race

    async def create(tool, i):
        try:
            await tool.run({"command": "create", "path": f"/memories/{name}-{i}.md",
                            "file_text": "x"}, None)
            return 1
        except FileLimitExceeded:
            return 0

    print("ready", flush=True)
    await asyncio.to_thread(sys.stdin.readline)
    made = await asyncio.gather(*(create(tool, i) for i in range(5) for tool in tools))
    for files in backends:
        await files.close()
    print(sum(made), flush=True)

asyncio.run(main())
"""


async def test_tools_in_four_processes_never_exceed_max_files(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """Four processes race for the last free places of five trees at once."""
    trees = 5
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", _PROCESS, postgres_dsn, postgres_schema, f"p{i}", str(trees)],
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
        async with PostgresFiles(postgres_dsn, schema=postgres_schema, namespace=f"t{t}") as f:
            assert (await f.usage()).files == 5


_DIE_HOLDING_THE_LOCK = """
import asyncio, os, sys
from agentkit.tools import PostgresFiles
from agentkit.tools.files import parse_path

async def main():
    files = PostgresFiles(sys.argv[1], schema=sys.argv[2])
    async with files.exclusive() as tx:
        await tx.write(parse_path("/memories/half.md"), "written under the lock")
        print("holding", flush=True)
        await asyncio.sleep(3600)  # killed here, holding the lock

asyncio.run(main())
"""


async def test_a_process_killed_holding_the_write_lock_does_not_block_others(
    postgres_dsn: str, postgres_schema: str
) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _DIE_HOLDING_THE_LOCK, postgres_dsn, postgres_schema,
        stdout=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    assert await asyncio.wait_for(proc.stdout.readline(), 60) == b"holding\n"
    async with PostgresFiles(postgres_dsn, schema=postgres_schema) as files:
        tool = FileTool(files)
        waiting = asyncio.create_task(tool.run(
            {"command": "create", "path": "/memories/after.md", "file_text": "x"}, None
        ))
        await asyncio.sleep(0.2)
        assert not waiting.done()  # the live holder keeps other writers out
        proc.kill()  # SIGKILL: the server ends its session, rolling back and unlocking
        await proc.wait()
        assert await asyncio.wait_for(waiting, 30) == (
            "File created successfully at: /memories/after.md"
        )
        # The holder's write was never committed.
        assert [str(e.path) for e in await files.listing(ROOT, None)] == ["/memories/after.md"]


async def test_an_exclusive_block_that_raises_leaves_the_tree_as_it_was(
    postgres_dsn: str, postgres_schema: str
) -> None:
    async with PostgresFiles(postgres_dsn, schema=postgres_schema) as files:
        await files.write(_p("kept.md"), "before")
        with pytest.raises(ValueError, match="changed my mind"):
            async with files.exclusive() as tx:
                await tx.write(_p("kept.md"), "after")
                await tx.write(_p("new/deep.md"), "x")
                assert await tx.read(_p("kept.md")) == "after"  # the block sees its writes
                raise ValueError("changed my mind")
        assert await files.read(_p("kept.md")) == "before"
        assert await files.usage() == FileUsage(files=1, bytes=6)
        with pytest.raises(RuntimeError) as info:
            await tx.read(_p("kept.md"))
        assert str(info.value) == (
            f"{tx!r} was used after its exclusive() block ended; use the object "
            "exclusive() was called on instead"
        )


async def test_files_share_a_store_and_its_schema_and_leave_it_open(
    postgres_dsn: str, postgres_schema: str
) -> None:
    async with PostgresStore(postgres_dsn, schema=postgres_schema) as store:
        async with PostgresFiles(store, namespace="a") as a:
            await a.write(_p("x.md"), "from a")
        b = PostgresFiles(store, namespace="b")
        assert await b.listing(ROOT, None) == ()
        await store.set("still", "open")  # closing the files left the store usable
        assert await store.get("still") == "open"
        again = PostgresFiles(store, namespace="a")
        assert await again.read(_p("x.md")) == "from a"
        assert repr(again) == f"PostgresFiles({store!r}, namespace='a')"


def test_a_backend_that_is_neither_a_store_nor_a_dsn_is_refused() -> None:
    with pytest.raises(TypeError) as info:
        PostgresFiles(42)  # type: ignore[arg-type]
    assert str(info.value) == (
        "PostgresFiles(...) takes a PostgresStore or a connection string, got 42"
    )


async def test_notes_written_before_migration_2_read_the_same_after_it(
    postgres_dsn: str, postgres_schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentkit.state.stores import postgres

    monkeypatch.setattr(postgres, "MIGRATIONS", postgres.MIGRATIONS[:1])
    async with PostgresStore(postgres_dsn, schema=postgres_schema) as old:
        pool = await old.connections()
        await pool.execute(
            f"INSERT INTO {postgres_schema}.memory_files VALUES "
            "('default', 'n.md', false, 'ünïcödé note', 15)"
        )
    monkeypatch.undo()
    async with PostgresFiles(postgres_dsn, schema=postgres_schema) as files:
        assert await files.read(_p("n.md")) == "ünïcödé note"
        await files.write(_p("n.md"), "rewritten")
        assert await files.read(_p("n.md")) == "rewritten"
        assert await files.usage() == FileUsage(files=1, bytes=9)
