"""PostgresFiles beyond the shared FileTool suite: limits that hold against concurrent
writers on separate connections (as on separate hosts), sharing a store's connections,
and namespaces."""

from __future__ import annotations

import asyncio

import pytest

from agentkit.state.stores.postgres import PostgresStore
from agentkit.tools import FileTool, PostgresFiles
from agentkit.tools.files import (
    ROOT,
    FileLimitExceeded,
    FileLimits,
    FileUsage,
    MemoryPath,
    parse_path,
)


async def test_concurrent_creates_from_two_hosts_never_exceed_max_files(
    postgres_dsn: str, postgres_schema: str
) -> None:
    limits = FileLimits(max_files=5)
    hosts = [
        PostgresFiles(postgres_dsn, schema=postgres_schema, namespace="team", limits=limits)
        for _ in range(2)
    ]
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
        assert {(e.limit, e.maximum) for e in refused} == {("files", 5)}
        assert await hosts[0].usage() == FileUsage(files=5, bytes=20)
        assert len(await hosts[1].listing(ROOT, None)) == 5
    finally:
        for files in hosts:
            await files.close()


async def test_concurrent_growth_from_two_hosts_never_exceeds_max_total_bytes(
    postgres_dsn: str, postgres_schema: str
) -> None:
    limits = FileLimits(max_total_bytes=100)
    hosts = [
        PostgresFiles(postgres_dsn, schema=postgres_schema, limits=limits) for _ in range(2)
    ]
    try:
        outcomes = await asyncio.gather(
            *(
                hosts[i % 2].write(_p(f"f{i}.md"), "x" * 30)
                for i in range(8)
            ),
            return_exceptions=True,
        )
        refused = [o for o in outcomes if isinstance(o, FileLimitExceeded)]
        assert len(refused) == 5
        assert {(e.limit, e.maximum, e.would_be) for e in refused} == {("total_bytes", 100, 120)}
        assert await hosts[0].usage() == FileUsage(files=3, bytes=90)
    finally:
        for files in hosts:
            await files.close()


def _p(name: str) -> MemoryPath:
    return parse_path(f"/memories/{name}")


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
