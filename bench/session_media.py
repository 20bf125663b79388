"""What a session holding a PDF costs in the store: a 5 MB PDF in the first turn of a
20-turn session on SQLite (and on PostgreSQL when ``DATABASE_URL`` is set), against the
same session without it.

Run with ``.venv/bin/python bench/session_media.py`` (``--turns 20 --mb 5``). "Held" is
the text of every key and value in the store's tables (blobs, checkpoints, session rows,
logs), what the database stores before its own page overhead; for SQLite the file size
after ``VACUUM`` is shown too. The limit is 1.5 × (the PDF + the same session without it).
"""

import argparse
import asyncio
import os
import sqlite3
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from agentkit.agents import Agent
from agentkit.core.contracts.media import File
from agentkit.core.contracts.types import Scope
from agentkit.core.testing import FakeLLM, make_test_ctx
from agentkit.state.stores import SQLiteStore

SCOPE = Scope("bench", "clerk")
AGENT = Agent("clerk", "fake", "You read contracts.")
TABLES = (("kv", "key"), ("versioned", "key"), ("logs", "log"))


async def session(store: Any, pdf: bytes | None, turns: int) -> float:
    started = time.perf_counter()
    for n in range(1, turns + 1):
        task: list[Any] = [f"What does clause {n} say?"]
        if n == 1 and pdf is not None:
            task.append(File(pdf, "application/pdf", name="contract.pdf"))
        ctx = make_test_ctx(FakeLLM(f"Clause {n} says what it says."), store=store,
                            scope=SCOPE)
        await AGENT.run(task, ctx, session="deal")
    return time.perf_counter() - started


def sqlite_held(path: Path) -> tuple[int, int]:
    with sqlite3.connect(path) as db:
        held = sum(db.execute(f"SELECT coalesce(sum(length({c}) + length(value)), 0) "
                              f"FROM {t}").fetchone()[0] for t, c in TABLES)
    with sqlite3.connect(path) as db:
        db.execute("VACUUM")
    return held, path.stat().st_size


async def on_sqlite(pdf: bytes, turns: int, folder: Path) -> None:
    rows = []
    for label, given in (("with the PDF", pdf), ("without it", None)):
        path = folder / f"{uuid.uuid4().hex}.db"
        async with SQLiteStore(path) as store:
            seconds = await session(store, given, turns)
        rows.append((label, *sqlite_held(path), seconds))
    report("SQLite", pdf, rows)


async def on_postgres(dsn: str, pdf: bytes, turns: int) -> None:
    from agentkit.state.stores import PostgresStore

    rows = []
    for label, given in (("with the PDF", pdf), ("without it", None)):
        schema = f"bench_{uuid.uuid4().hex[:12]}"
        async with PostgresStore(dsn, schema=schema) as store:
            seconds = await session(store, given, turns)
            pool = await store.connections()
            held = 0
            for table, column in TABLES:
                held += await pool.fetchval(
                    f"SELECT coalesce(sum(octet_length({column}) + "
                    f"octet_length(value::text)), 0) FROM {schema}.{table}")
            await pool.execute(f"DROP SCHEMA {schema} CASCADE")
        rows.append((label, held, 0, seconds))
    report("PostgreSQL", pdf, rows)


def report(name: str, pdf: bytes, rows: list[tuple[str, int, int, float]]) -> None:
    bare = rows[1][1]
    limit = 1.5 * (len(pdf) + bare)
    print(f"\n{name}: PDF {len(pdf):,} bytes; limit 1.5 x (PDF + session without it) "
          f"= {limit:,.0f} bytes")
    for label, held, file_size, seconds in rows:
        extra = f", file after VACUUM {file_size:,}" if file_size else ""
        print(f"  {label:13} held {held:>12,} bytes{extra}; {seconds:.2f} s for the turns")
    print(f"  with the PDF / limit = {rows[0][1] / limit:.2f}")


async def main(turns: int, megabytes: float) -> None:
    pdf = b"%PDF-1.7\n" + os.urandom(int(megabytes * 1024 * 1024))
    with tempfile.TemporaryDirectory() as folder:
        await on_sqlite(pdf, turns, Path(folder))
    dsn = os.environ.get("DATABASE_URL")
    if dsn:
        await on_postgres(dsn, pdf, turns)
    else:
        print("\nPostgreSQL: set DATABASE_URL to measure it too")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--mb", type=float, default=5.0)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.turns, arguments.mb))
