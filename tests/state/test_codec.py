"""The store format: versioned JSON that round-trips agentkit's values exactly, refuses
what it cannot hold with NotStorable, and reads anything else as CheckpointCorrupt —
never by importing or running what the data names."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import pickle
import sqlite3
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentkit.agents import Agent
from agentkit.agents.result import AgentResult, Suspended
from agentkit.agents.run_state import RunState, SubRun
from agentkit.core.contracts.errors import CheckpointCorrupt, NotStorable, RunError
from agentkit.core.contracts.frozen import FrozenDict
from agentkit.core.contracts.media import Audio, File, Image
from agentkit.core.contracts.types import (
    LLMResult,
    Message,
    ModelSettings,
    Reasoning,
    ReasoningPart,
    Scope,
    ToolCall,
    Usage,
)
from agentkit.core.policies.audit import AuditRecord
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.state.codec import dumps, loads, register
from agentkit.state.stores.memory import InMemoryStore
from agentkit.state.stores.sqlite import SQLiteStore

CALL = ToolCall("c1", "send", {"to": ["a@x.org"], "meta": {"n": 1}})
TRANSCRIPT = (
    Message(role="user", content="hi"),
    Message(role="assistant", tool_calls=(CALL,)),
    Message(
        role="tool", content="sent", tool_call_id="c1", name="send",
        attachments=(Image(b"\x89PNG\r\n"), Audio(b"RIFF", "audio/wav"),
                     File(b"%PDF", "application/pdf", name="r.pdf")),
    ),
)

THOUGHT = ReasoningPart("anthropic", "Look it up.", {"type": "thinking", "signature": "s1"})
SIGNED_CALL = ToolCall("c3", "send", {"to": "b"},
                       provider_state={"openai": {"id": "fc_1"}, "gemini": {"sig": "g"}})
REASONING: list[Any] = [
    THOUGHT,
    ReasoningPart("openai", state={"id": "rs_1", "encrypted_content": "gAAA",
                                   "summary": [{"type": "summary_text", "text": "t"}]}),
    Message("assistant", "ok", tool_calls=(SIGNED_CALL,), reasoning=(THOUGHT,)),
    LLMResult("ok", (SIGNED_CALL,), Usage(1, 2, reasoning_tokens=9), reasoning=(THOUGHT,)),
    ModelSettings(reasoning=Reasoning(effort="high", budget_tokens=2048, summary=True)),
    Message("user", "look", attachments=(
        Image.from_url("https://example.com/a.jpg"), File(b"%PDF", "application/pdf"),
        File(b"plain", "text/plain", name="n.txt"))),
]

VALUES: list[Any] = [
    None, True, 0, -7, 10**40, 1.5, float("inf"), float("-inf"), "", "naïve \x00 \ud800",
    [1, [2, (3,)]], (1, "a", None), {"a": 1, "b": [True]}, {1: "int key", (2, 3): "tuple key"},
    {"$": "looks like a tag"}, FrozenDict({"x": FrozenDict({"y": (1, 2)})}), {1, 2},
    frozenset({"a"}), b"\x00\xffbytes", bytearray(b"ba"),
    dt.datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=dt.timezone(dt.timedelta(hours=2))),
    dt.datetime(2026, 1, 2, 3, 4), dt.date(2026, 1, 2), dt.time(3, 4, 5), dt.timedelta(1, 2, 3),
    decimal.Decimal("1.10"), uuid.UUID("12345678-1234-5678-1234-567812345678"),
    Scope(7, "dom"), Usage(1, 2, 3, 4, 0.5, 6), CALL,
    Usage(1, 2, cost_usd=0.5, unpriced_models=("gpt-5-pro", "o3-deep-research")),
    ToolCall("c2", "x", {}, arguments_error="not JSON"), *TRANSCRIPT,
    LLMResult("answer", (CALL,), Usage(1, 1), "tool_calls", "m"),
    Suspended("r1", (CALL,), reason="awaiting_input"),
    AgentResult("out", "complete", Usage(2), FrozenDict({"k": 1}), TRANSCRIPT, "r1", 2),
    RunState("r1", "agent", "running", TRANSCRIPT, Usage(3), 2, (CALL,), TRANSCRIPT[2:],
             FrozenDict({"c1": "approval"}), FrozenDict({"c1": {"to": "b"}}), 1),
    RunState("r1", "agent", "suspended", TRANSCRIPT, open_calls=(CALL,),
             pending=FrozenDict({"c1": "nested"}),
             nested=FrozenDict({"c1": SubRun("r1:agent/c1:sub", "sub", Suspended("r1", (CALL,)))})),
    AuditRecord("r1", "org1:dom2", "send", "c1", "ab" * 32, None, "failed", 12.5,
                error="ValueError", arguments=FrozenDict({"to": "a"})),
    *REASONING,
]


def _same(a: Any, b: Any) -> bool:
    """Equal and of the same types all the way down (1 is not True, a list not a tuple)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float) and a != a:
        return b != b
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_every_storable_value_round_trips_with_its_exact_types(value: Any) -> None:
    back = loads(dumps(value), key="k")
    assert _same(back, value), (back, value)


def test_a_nested_suspension_keeps_each_call_s_kind_and_chain_of_agents() -> None:
    waiting = Suspended(
        "r1", (ToolCall("c1/s2", "ask_human", {"question": "Code?"}),), "awaiting_input",
        kinds=FrozenDict({"c1/s2": "input"}), agents=FrozenDict({"c1/s2": ("desk", "login")}),
    )
    back = loads(dumps(SubRun("r1:desk/c1:login", "login", waiting)), key="k")
    assert back == SubRun("r1:desk/c1:login", "login", waiting)
    assert (back.suspended.kinds, back.suspended.agents) == (
        {"c1/s2": "input"}, {"c1/s2": ("desk", "login")},
    )
    assert type(back.suspended.agents["c1/s2"]) is tuple


def test_nan_round_trips_and_text_is_plain_ascii_json() -> None:
    text = dumps({"x": float("nan"), "s": "é"})
    assert text == '{"agentkit":1,"value":{"x":{"$":"float","v":"nan"},"s":"\\u00e9"}}'
    back = loads(text.encode(), key="k")
    assert back["x"] != back["x"] and back["s"] == "é"


def test_the_format_of_an_agentkit_value_is_tagged_fields_with_defaults_left_out() -> None:
    text = dumps(Message(role="tool", content="ok", tool_call_id="c1"))
    assert json.loads(text) == {
        "agentkit": 1,
        "value": {"$": "agentkit.Message", "role": "tool", "content": "ok", "tool_call_id": "c1"},
    }


class Opaque:
    pass


@pytest.mark.parametrize(
    ("value", "path", "type_name"),
    [
        (Opaque(), "$", "Opaque"),
        ({"result": [1, Opaque()]}, "$['result'][1]", "Opaque"),
        ((1, {2: Opaque()}), "$[1][2]", "Opaque"),
        (Message(role="user", content="x", tool_calls=(ToolCall("c", "t", {"f": print}),)),
         "$.tool_calls[0].arguments['f']", "builtin_function_or_method"),
        (ValueError("boom"), "$", "ValueError"),
    ],
)
def test_a_value_that_is_not_data_is_refused_naming_where(
    value: Any, path: str, type_name: str
) -> None:
    with pytest.raises(NotStorable) as info:
        dumps(value)
    assert (info.value.path, info.value.type_name) == (path, type_name)
    assert str(info.value) == (
        f"cannot store {path}: type {type_name} is not storable. Stores keep JSON data: None, "
        "bool, int, float, str, bytes, bytearray, list, tuple, dict, set, frozenset, datetime, "
        "date, time, timedelta, Decimal, UUID and agentkit's own values (Message, ToolCall, "
        "Usage, media, ...). Return plain data from the tool, or register the type with "
        "agentkit.state.codec.register(...)"
    )
    assert isinstance(info.value, TypeError)


def test_an_integer_json_cannot_write_is_refused() -> None:
    with pytest.raises(NotStorable) as info:
        dumps([10**5000])
    assert info.value.type_name == (
        "list JSON cannot hold (Exceeds the limit (4300 digits) for integer string "
        "conversion; use sys.set_int_max_str_digits() to increase the limit)"
    )


@dataclass(frozen=True)
class Invoice:
    number: str
    lines: tuple[str, ...] = ()


class Money:
    def __init__(self, cents: int) -> None:
        self.cents = cents

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Money) and other.cents == self.cents


register(Invoice, tag="tests.Invoice")
register(Money, tag="tests.Money", encode=lambda m: {"cents": m.cents},
         decode=lambda fields: Money(fields["cents"]))


def test_registered_types_round_trip() -> None:
    value = {"invoice": Invoice("A-1", ("pen",)), "total": Money(250)}
    text = dumps(value)
    assert json.loads(text)["value"]["total"] == {"$": "tests.Money", "cents": 250}
    assert loads(text, key="k") == value


def test_register_refuses_a_taken_tag_and_a_non_dataclass_without_codecs() -> None:
    @dataclass
    class Other:
        x: int

    with pytest.raises(ValueError) as info:
        register(Other, tag="tests.Invoice")
    assert str(info.value) == (
        f"codec tag 'tests.Invoice' is already taken by {__name__}.Invoice; "
        "choose another tag"
    )
    with pytest.raises(TypeError) as type_info:
        register(Opaque, tag="tests.Opaque")
    assert str(type_info.value) == (
        "register(Opaque, ...) needs encode= and decode=: only a dataclass has a field-wise "
        "codec by default"
    )


def _corrupt(text: Any, key: str = "checkpoint:r1:a") -> str:
    with pytest.raises(CheckpointCorrupt) as info:
        loads(text, key=key)
    assert info.value.key == key
    prefix = f"stored value under key {key!r} is corrupt: "
    suffix = ". It was left as it is; delete the key (or restore it from a backup) to start over"
    message = str(info.value)
    assert message.startswith(prefix) and message.endswith(suffix), message
    assert isinstance(info.value, ValueError)
    return message[len(prefix):-len(suffix)]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (b"", "the value is empty"),
        ("  \n", "the value is empty"),
        (b"\xff\xfe\x00", "not UTF-8 text (invalid start byte at byte 0)"),
        (pickle.dumps({"a": 1}), "it is a pickle, written by an agentkit before the JSON store "
         "format; pickled stores are no longer read (see the changelog in README.md)"),
        ('{"agentkit":1,"value":', "not JSON (Expecting value at character 22)"),
        ("[1, 2]", 'not an agentkit value: expected {"agentkit": <version>, "value": ...}'),
        ('{"value": 1}', 'not an agentkit value: expected {"agentkit": <version>, "value": ...}'),
        ('{"agentkit": 2, "value": 1}', "unknown format version 2; this agentkit reads version 1"),
        ('{"agentkit": "1", "value": 1}',
         "unknown format version '1'; this agentkit reads version 1"),
        ('{"agentkit": 1, "value": {"$": "os.system", "v": "echo hi"}}',
         "unknown type tag 'os.system'"),
        ('{"agentkit": 1, "value": {"$": "agentkit.Nope"}}', "unknown type tag 'agentkit.Nope'"),
        ('{"agentkit": 1, "value": {"$": 5}}', "unknown type tag 5"),
        ('{"agentkit": 1, "value": {"$": "agentkit.Message", "role": "user", "evil": 1}}',
         "Message has no field(s) ['evil']"),
        ('{"agentkit": 1, "value": {"$": "agentkit.Image", "data": "not bytes"}}',
         "a value does not decode: TypeError: Image.data must be bytes, got str"),
        ('{"agentkit": 1, "value": {"$": "bytes", "v": "!!"}}',
         "a 'bytes' value is not valid base64 (Only base64 data is allowed)"),
        ('{"agentkit": 1, "value": {"$": "tuple", "v": 3}}',
         "a 'tuple' value must hold a JSON array"),
        ('{"agentkit": 1, "value": {"$": "tuple"}}',
         "a 'tuple' value must have exactly the keys '$' and 'v'"),
        ('{"agentkit": 1, "value": {"$": "float", "v": "1e999"}}',
         "a 'float' value must be 'nan', 'inf' or '-inf', got '1e999'"),
        ('{"agentkit": 1, "value": {"$": "decimal", "v": "abc"}}',
         "a value does not decode: InvalidOperation: [<class 'decimal.ConversionSyntax'>]"),
        ('{"agentkit": 1, "value": ' + "[" * 100_000 + "]" * 100_000 + "}",
         "the value is nested too deeply to read"),
    ],
)
def test_anything_else_reads_as_checkpoint_corrupt_naming_the_key(text: Any, reason: str) -> None:
    assert _corrupt(text) == reason


def test_a_non_text_value_is_corrupt() -> None:
    assert _corrupt(12) == "expected JSON text, got a int"


def test_reading_never_imports_what_the_data_names(tmp_path: Path) -> None:
    """An unknown tag naming a real module is not imported, in a fresh interpreter."""
    code = (
        "import sys\n"
        "from agentkit.state.codec import loads\n"
        "from agentkit.core.contracts.errors import CheckpointCorrupt\n"
        "for tag in ('antigravity', 'this', 'os:system', 'agentkit.cli', 'webbrowser.open'):\n"
        "    try:\n"
        "        loads('{\"agentkit\":1,\"value\":{\"$\":\"%s\",\"v\":1}}' % tag, key='k')\n"
        "    except CheckpointCorrupt:\n"
        "        pass\n"
        "print(sorted(m for m in ('antigravity', 'this', 'agentkit.cli', 'webbrowser')"
        " if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path, check=True)
    assert done.stdout == "[]\n"


def test_a_fresh_process_reads_a_checkpoint_without_importing_agents_first(
    tmp_path: Path,
) -> None:
    text = dumps(RunState("r1", "a", "running", TRANSCRIPT[:1]))
    code = (
        "import sys\n"
        "from agentkit.state.codec import loads\n"
        "state = loads(sys.stdin.read(), key='checkpoint:r1:a')\n"
        "print(type(state).__name__, state.messages[0].content)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], input=text, capture_output=True,
                          text=True, timeout=60, cwd=tmp_path, check=True)
    assert done.stdout == "RunState hi\n"


# -- stores ----------------------------------------------------------------------------


def _raw(path: Path, table: str, key: str) -> Any:
    with sqlite3.connect(path) as conn:
        row = conn.execute(f"SELECT value FROM {table} WHERE key = ?", (key,)).fetchone()
    return None if row is None else row[0]


def _poke(path: Path, table: str, key: str, value: Any) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute(f"UPDATE {table} SET value = ? WHERE key = ?", (value, key))


async def test_sqlite_stores_json_text_not_pickles(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    async with SQLiteStore(path) as store:
        await store.set("k", (1, b"x"))
        await store.set_versioned("cp", Usage(1), expected_version=0)
    assert _raw(path, "kv", "k") == (
        '{"agentkit":1,"value":{"$":"tuple","v":[1,{"$":"bytes","v":"eA=="}]}}'
    )
    assert _raw(path, "versioned", "cp") == (
        '{"agentkit":1,"value":{"$":"agentkit.Usage","input_tokens":1}}'
    )


@pytest.mark.parametrize(
    "garbage",
    [b"\x00garbage", b"", "", 42, pickle.dumps(Usage()), '{"agentkit":1,"value":{"$":"x"}}'],
    ids=["garbage", "empty-bytes", "empty-text", "integer", "pickle", "unknown-tag"],
)
async def test_a_corrupt_sqlite_row_raises_checkpoint_corrupt_and_is_left_untouched(
    tmp_path: Path, garbage: Any
) -> None:
    path = tmp_path / "s.db"
    async with SQLiteStore(path) as store:
        await store.set("idem", "ok")
        await store.set_versioned("checkpoint:r1:a", Usage(), expected_version=0)
        await store.append("audit", "entry")
    _poke(path, "kv", "idem", garbage)
    _poke(path, "versioned", "checkpoint:r1:a", garbage)
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE logs SET value = ?", (garbage,))

    before = (_raw(path, "kv", "idem"), _raw(path, "versioned", "checkpoint:r1:a"))
    async with SQLiteStore(path) as store:
        for read in (
            lambda: store.get("idem"),
            lambda: store.get_or_set("idem", _never),
            lambda: store.get_versioned("checkpoint:r1:a"),
            lambda: store.list("audit"),
        ):
            with pytest.raises(CheckpointCorrupt):
                await read()
        assert (_raw(path, "kv", "idem"), _raw(path, "versioned", "checkpoint:r1:a")) == before
        assert await store.delete("idem") is True  # deleting is how it is cleared
        assert await store.get("idem") is None


async def _never() -> Any:
    raise AssertionError("the factory must not run over a corrupt row")


async def test_recover_of_a_corrupt_checkpoint_names_the_run_and_key(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    agent = Agent("clerk", "fake", "p")
    async with SQLiteStore(path) as store:
        ctx = make_test_ctx(llm=FakeLLM.script([Turn(content="hi")]), store=store,
                            correlation_id="run-9")
        await agent.run("task", ctx)
    _poke(path, "versioned", "checkpoint:run-9:clerk", b"\x80\x05trunc")
    async with SQLiteStore(path) as store:
        with pytest.raises(CheckpointCorrupt) as info:
            await agent.recover("run-9", make_test_ctx(store=store))
        assert str(info.value) == (
            "checkpoint of run 'run-9' under key 'checkpoint:run-9:clerk' is corrupt: it is a "
            "pickle, written by an agentkit before the JSON store format; pickled stores are no "
            "longer read (see the changelog in README.md). It was left as it is; delete the key "
            "(or restore it from a backup) to start over"
        )
        assert info.value.run_id == "run-9"
        assert not isinstance(info.value, RunError)
    assert _raw(path, "versioned", "checkpoint:run-9:clerk") == b"\x80\x05trunc"


async def test_memory_store_refuses_an_unstorable_record_and_keeps_nothing() -> None:
    store = InMemoryStore()

    async def factory() -> Any:
        return {"receipt": Opaque()}

    with pytest.raises(NotStorable):
        await store.get_or_set("k", factory)
    with pytest.raises(NotStorable):
        await store.set("k", Opaque())
    with pytest.raises(NotStorable):
        await store.append("log", Opaque())
    assert await store.get("k") is None
    assert await store.list("log") == ()


async def test_memory_store_hands_back_copies_like_a_durable_store() -> None:
    store = InMemoryStore()
    value = {"items": [1]}
    await store.set("k", value)
    value["items"].append(2)
    first = await store.get("k")
    assert first == {"items": [1]}
    first["items"].append(3)
    assert await store.get("k") == {"items": [1]}


@pytest.mark.parametrize("depth", [50, 150, 300, 450, 700])
def test_what_dumps_writes_loads_reads_back_however_deep(depth: int) -> None:
    # A checkpoint that was written but cannot be read would strand its run: every depth
    # is either stored and read back, or refused as NotStorable before anything is written.
    for make in (lambda v: [v], lambda v: {"k": v}, lambda v: (v,), lambda v: FrozenDict(k=v)):
        value: Any = "leaf"
        for _ in range(depth):
            value = make(value)
        try:
            text = dumps(value)
        except NotStorable as exc:
            assert "nested more than" in str(exc)
            continue
        assert loads(text, key="k") == value
