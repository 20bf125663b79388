"""Media in checkpoints and sessions are stored once, content-addressed, and read back
whole: a 20-turn session holding a 5 MB PDF on SQLite and on PostgreSQL stays within
1.5 × (the PDF + the same session without it), and a turn in another process still
sends the PDF."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from agentkit.agents import Agent
from agentkit.agents.run_state import RunState
from agentkit.core.codec import dumps
from agentkit.core.contracts.media import File, Image
from agentkit.core.contracts.runs import RunRecord
from agentkit.core.contracts.types import Message, Scope
from agentkit.core.stores import InMemoryStore
from agentkit.core.testing import FakeLLM, make_test_ctx
from agentkit.state.checkpoints import StoreCheckpointer
from agentkit.state.media_refs import StoredMedia
from agentkit.state.stores import PostgresStore, SQLiteStore

SCOPE = Scope("acme", "clerk")
PDF = b"%PDF-1.7\n" + bytes(range(256)) * (5 * 1024 * 1024 // 256)
PAGE = File(PDF, "application/pdf", name="contract.pdf")
AGENT = Agent("clerk", "fake", "You read contracts.")


async def _session(store: Any, first: list[Any], turns: int = 20) -> None:
    """``turns`` turns of one session, the first asking ``first``."""
    for n in range(1, turns + 1):
        task = first if n == 1 else [f"And clause {n}?"]
        ctx = make_test_ctx(FakeLLM(f"Clause {n} says what it says."), store=store,
                            scope=SCOPE)
        await AGENT.run(task, ctx, session="deal")


# What the store holds: the text of every key and value (blobs, checkpoints, rows, logs).
_TABLES = (("kv", "key"), ("versioned", "key"), ("logs", "log"))


def _sqlite_bytes(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return sum(db.execute(f"SELECT coalesce(sum(length({name}) + length(value)), 0) "
                              f"FROM {table}").fetchone()[0] for table, name in _TABLES)


async def _postgres_bytes(store: PostgresStore, schema: str) -> int:
    pool = await store.connections()
    total = 0
    for table, name in _TABLES:
        total += await pool.fetchval(
            f"SELECT coalesce(sum(octet_length({name}) + octet_length(value::text)), 0) "
            f"FROM {schema}.{table}"
        )
    return int(total)


async def test_a_pdf_in_a_20_turn_sqlite_session_is_stored_once(tmp_path: Path) -> None:
    with_pdf, without = tmp_path / "with.db", tmp_path / "without.db"
    async with SQLiteStore(with_pdf) as store:
        await _session(store, ["What does this contract say?", PAGE])
    async with SQLiteStore(without) as store:
        await _session(store, ["What does this contract say?"])
    held, bare = _sqlite_bytes(with_pdf), _sqlite_bytes(without)
    assert held <= 1.5 * (len(PDF) + bare), (held, bare)


async def test_a_pdf_in_a_20_turn_postgres_session_is_stored_once(
    postgres_dsn: str, postgres_schema: str
) -> None:
    async with PostgresStore(postgres_dsn, schema=postgres_schema) as store:
        await _session(store, ["What does this contract say?", PAGE])
        held = await _postgres_bytes(store, postgres_schema)
    bare_schema = postgres_schema + "_bare"
    async with PostgresStore(postgres_dsn, schema=bare_schema) as store:
        await _session(store, ["What does this contract say?"])
        bare = await _postgres_bytes(store, bare_schema)
        pool = await store.connections()
        await pool.execute(f"DROP SCHEMA {bare_schema} CASCADE")
    assert held <= 1.5 * (len(PDF) + bare), (held, bare)


_NEXT_TURN = '''
import asyncio, json, sys
from agentkit.agents import Agent
from agentkit.core.contracts.types import Scope
from agentkit.core.testing import FakeLLM, make_test_ctx
from agentkit.state.stores import SQLiteStore

async def main():
    llm = FakeLLM("It ends in 2030.")
    async with SQLiteStore(sys.argv[1]) as store:
        ctx = make_test_ctx(llm, store=store, scope=Scope("acme", "clerk"))
        await Agent("clerk", "fake", "You read contracts.").run(
            "When does it end?", ctx, session="deal")
    sent = llm.requests[0].messages
    print(json.dumps([[m.role, m.content, [[a.mime_type, getattr(a, "name", None),
                       len(a.data), a.data[:9].decode()] for a in m.attachments]]
                      for m in sent]))

asyncio.run(main())
'''


async def test_a_turn_in_another_process_still_sends_the_pdf(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    async with SQLiteStore(path) as store:
        await _session(store, ["What does this contract say?", PAGE], turns=1)
    done = subprocess.run(
        [sys.executable, "-c", _NEXT_TURN, str(path)], capture_output=True, text=True,
        check=False, timeout=120, env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [
        ["user", "What does this contract say?",
         [["application/pdf", "contract.pdf", len(PDF), "%PDF-1.7\n"]]],
        ["assistant", "Clause 1 says what it says.", []],
        ["user", "When does it end?", []],
    ]


async def test_a_checkpoint_refers_to_its_media_and_reads_back_whole(tmp_path: Path) -> None:
    picture = Image(b"\x89PNG\r\n\x1a\n" + bytes(300_000), "image/png")
    state = RunState("run-1", "clerk", "running", messages=(
        Message("user", "Look.", attachments=(picture, Image.from_url(
            "https://example.com/a.jpg"))),
    ))
    async with SQLiteStore(tmp_path / "c.db") as store:
        checkpointer = StoreCheckpointer(store)
        version = await checkpointer.save("run-1:clerk", state, expected_version=0)
        await checkpointer.save("run-1:clerk", state, expected_version=version)
        assert await checkpointer.load("run-1:clerk") == (state, 2)
    with sqlite3.connect(tmp_path / "c.db") as db:
        row = db.execute("SELECT value FROM versioned WHERE key = ?",
                         ("checkpoint:run-1:clerk",)).fetchone()[0]
        blobs = db.execute("SELECT count(*) FROM kv WHERE key LIKE 'blob:sha256:%'").fetchone()
    assert len(row) < 2_000
    assert blobs == (1,)


async def test_a_checkpoint_written_with_media_inline_still_loads(tmp_path: Path) -> None:
    # What checkpoints held before media went by reference: the bytes in the row.
    picture = Image(b"\x89PNG\r\n\x1a\n" + bytes(1000), "image/png")
    state = RunState("run-1", "clerk", "suspended", messages=(
        Message("user", "Look.", attachments=(picture,)),
    ))
    async with SQLiteStore(tmp_path / "old.db") as store:
        await store.set_versioned("checkpoint:run-1:clerk", state, expected_version=0)
        assert await StoreCheckpointer(store).load("run-1:clerk") == (state, 1)


_FRESH_PROCESS = """\
import asyncio, sys
from agentkit.core.contracts.media import Image
from agentkit.core.contracts.types import Message, media_in_messages
from agentkit.core.codec import loads
from agentkit.core.stores import InMemoryStore
from agentkit.state.media_refs import by_reference

plain = (Message("user", "hi"), Message("assistant", "hello"))
print(media_in_messages())
if sys.argv[1] == "decoded":
    # A message with media read back from a store is built like any other.
    loads(sys.argv[2], key="checkpoint:r1")
else:
    message = Message("user", "look", attachments=(Image(b"\\x89PNG", "image/png"),))
print(media_in_messages())
message = Message("user", "look", attachments=(Image(b"\\x89PNG", "image/png"),))
stored = asyncio.run(by_reference(InMemoryStore(), (*plain, message)))
print(type(stored[2].attachments[0]).__name__)
"""


def test_a_save_skips_the_media_scan_only_while_no_message_with_media_exists() -> None:
    """The cheap check before a checkpoint is searched for media: False in a process
    that never built a message with attachments, True from the first one, however it
    was built (constructed, or decoded from a store), and media are then stored by
    reference as always."""
    encoded = dumps(Message("user", "x", attachments=(Image(b"\x89PNG", "image/png"),)))
    outputs = []
    for how in ("built", "decoded"):
        result = subprocess.run(
            [sys.executable, "-c", _FRESH_PROCESS, how, encoded],
            capture_output=True, text=True, check=True, timeout=120,
        )
        outputs.append(result.stdout.split())
    assert outputs == [["False", "True", "StoredMedia"], ["False", "True", "StoredMedia"]]


async def test_a_checkpoint_saved_with_its_run_record_refers_to_its_media() -> None:
    """The claim's and the end's write (``save_with_run``) puts media by reference too,
    and a state without any goes to the store as it is; the record is written beside."""
    picture = Image(b"\x89PNG\r\n\x1a\n" + bytes(1000), "image/png")
    with_media = RunState("run-1", "clerk", "running", messages=(
        Message("user", "Look.", attachments=(picture,)),
    ))
    plain = RunState("run-2", "clerk", "running", messages=(Message("user", "Hi."),))
    store = InMemoryStore()
    checkpointer = StoreCheckpointer(store)
    for state in (with_media, plain):
        record = RunRecord(run_id=state.run_id, agent="clerk", status="running",
                           scope=SCOPE.key(), created=1.0, updated=1.0)
        assert await checkpointer.save_with_run(
            f"{state.run_id}:clerk", state, expected_version=0, record=record
        ) == 1
        assert await store.get_run(state.run_id) == record
        assert await checkpointer.load(f"{state.run_id}:clerk") == (state, 1)
    kept, _ = await store.get_versioned("checkpoint:run-1:clerk")
    assert isinstance(kept.messages[0].attachments[0], StoredMedia)
    assert (await store.get_versioned("checkpoint:run-2:clerk"))[0] is plain
