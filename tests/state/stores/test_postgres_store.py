"""PostgresStore beyond the shared contract: its schema and migrations, expiry cleanup,
closing, a producer killed while it holds a key, and the missing-driver message."""

from __future__ import annotations

import asyncio
import hashlib
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path

import asyncpg
import pytest

from agentkit import SingleFlightLost, SingleFlightTimeout
from agentkit.state.stores.postgres import MIGRATIONS, PostgresStore, connection_url


async def test_first_use_creates_the_schema_and_records_its_version(
    postgres_dsn: str, postgres_schema: str
) -> None:
    async with PostgresStore(postgres_dsn, schema=postgres_schema) as store:
        await store.set("k", 1)
    connection = await asyncpg.connect(postgres_dsn)
    try:
        versions = await connection.fetch(
            f"SELECT version FROM {postgres_schema}.schema_version ORDER BY version"
        )
        tables = await connection.fetch(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = $1 "
            "ORDER BY table_name",
            postgres_schema,
        )
    finally:
        await connection.close()
    assert [r[0] for r in versions] == [m[0] for m in MIGRATIONS] == [1, 2, 3, 4]
    assert [r[0] for r in tables] == [
        "claims", "kv", "logs", "memory_files", "runs", "schema_version", "versioned",
    ]


async def test_many_stores_opening_one_new_schema_at_once_all_succeed(
    postgres_dsn: str, postgres_schema: str
) -> None:
    stores = [PostgresStore(postgres_dsn, schema=postgres_schema, pool_size=1) for _ in range(6)]
    try:
        await asyncio.gather(*(s.set(f"k{i}", i) for i, s in enumerate(stores)))
        assert [await stores[0].get(f"k{i}") for i in range(6)] == list(range(6))
    finally:
        for store in stores:
            await store.close()


async def test_a_schema_from_a_newer_release_is_refused_untouched(
    postgres_dsn: str, postgres_schema: str
) -> None:
    async with PostgresStore(postgres_dsn, schema=postgres_schema) as store:
        await store.set("k", "kept")
    connection = await asyncpg.connect(postgres_dsn)
    try:
        await connection.execute(
            f"INSERT INTO {postgres_schema}.schema_version (version) VALUES (99)"
        )
    finally:
        await connection.close()
    newer = PostgresStore(postgres_dsn, schema=postgres_schema)
    with pytest.raises(RuntimeError) as info:
        await newer.get("k")
    assert str(info.value) == (
        f"schema {postgres_schema!r} is at version 99, made by a newer agentkit; this "
        "release knows versions up to 4: upgrade agentkit on this worker"
    )
    await newer.close()


async def test_an_older_schema_is_migrated_forward_keeping_its_rows(
    postgres_dsn: str, postgres_schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with PostgresStore(postgres_dsn, schema=postgres_schema) as store:
        await store.set("k", "kept")
    later = (
        *MIGRATIONS,
        (5, ("ALTER TABLE {s}.kv ADD COLUMN note text",)),
    )
    monkeypatch.setattr("agentkit.state.stores.postgres.MIGRATIONS", later)
    async with PostgresStore(postgres_dsn, schema=postgres_schema) as store:
        assert await store.get("k") == "kept"
    connection = await asyncpg.connect(postgres_dsn)
    try:
        versions = await connection.fetch(
            f"SELECT version FROM {postgres_schema}.schema_version ORDER BY version"
        )
        columns = await connection.fetch(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = $1 "
            "AND table_name = 'kv' ORDER BY ordinal_position",
            postgres_schema,
        )
    finally:
        await connection.close()
    assert [r[0] for r in versions] == [1, 2, 3, 4, 5]
    assert [r[0] for r in columns] == ["key", "value", "expires", "note"]


@pytest.mark.parametrize("schema", ["Agentkit", "a-b", "1abc", "x;drop", "", "a" * 64])
def test_a_schema_that_is_not_a_plain_identifier_is_refused(schema: str) -> None:
    with pytest.raises(ValueError) as info:
        PostgresStore("postgresql://localhost/db", schema=schema)
    assert str(info.value) == (
        "PostgresStore(schema=...) must be a lower-case SQL identifier (letters, digits "
        f"and '_', not starting with a digit, at most 63), got {schema!r}"
    )


@pytest.mark.parametrize("size", [0, -1, True, 2.5])
def test_a_pool_size_that_is_not_a_positive_integer_is_refused(size: object) -> None:
    with pytest.raises(ValueError) as info:
        PostgresStore("postgresql://localhost/db", pool_size=size)  # type: ignore[arg-type]
    assert str(info.value) == (
        f"PostgresStore(pool_size=...) must be a positive integer, got {size!r}"
    )


def test_the_repr_hides_the_password() -> None:
    store = PostgresStore("postgresql://worker:s3cret@db.internal:5432/agents")
    assert repr(store) == (
        "PostgresStore('postgresql://worker:***@db.internal:5432/agents', schema='agentkit')"
    )
    keywords = PostgresStore("host=db user=worker password=s3cret dbname=agents", schema="x")
    assert repr(keywords) == (
        "PostgresStore('host=db user=worker password=*** dbname=agents', schema='x')"
    )


async def test_vacuum_deletes_expired_rows_and_keeps_live_ones(
    postgres_dsn: str, postgres_schema: str
) -> None:
    async with PostgresStore(postgres_dsn, schema=postgres_schema) as store:
        for i in range(30):
            await store.set(f"gone{i}", i, ttl=1e-9)
        await store.set("live", "yes", ttl=3600)
        await store.set("forever", "yes")
        assert await store.vacuum() == 30
        assert await store.vacuum() == 0
        assert await store.get("live") == "yes"
        assert await store.get("forever") == "yes"


async def test_writes_sweep_expired_rows_without_a_vacuum_call(
    postgres_dsn: str, postgres_schema: str
) -> None:
    async with PostgresStore(postgres_dsn, schema=postgres_schema) as store:
        for i in range(300):  # more than one sweep interval of writes
            await store.set(f"k{i}", i, ttl=1e-9)
        connection = await asyncpg.connect(postgres_dsn)
        try:
            left = await connection.fetchval(f"SELECT count(*) FROM {postgres_schema}.kv")
        finally:
            await connection.close()
        assert left < 300
        assert await store.vacuum() == left


async def test_a_closed_store_says_it_is_closed(postgres_dsn: str, postgres_schema: str) -> None:
    store = PostgresStore("postgresql://u:pw@127.0.0.1:1/db", schema=postgres_schema)
    await store.close()
    await store.close()  # closing twice is harmless
    message = (
        f"PostgresStore('postgresql://u:***@127.0.0.1:1/db', schema={postgres_schema!r}) "
        "is closed"
    )
    for operation in (store.get("k"), store.set("k", 1), store.list("log")):
        with pytest.raises(RuntimeError) as info:
            await operation
        assert str(info.value) == message


async def test_a_server_that_cannot_be_reached_is_a_connection_error_naming_it() -> None:
    store = PostgresStore("postgresql://worker:s3cret@127.0.0.1:1/agents")
    with pytest.raises(ConnectionError) as info:
        await store.get("k")
    message = str(info.value)
    assert message.startswith(
        "PostgresStore('postgresql://worker:***@127.0.0.1:1/agents', schema='agentkit') "
        "could not connect: "
    )
    assert message.endswith(
        ". Check that the server is up and that the connection string names its host, "
        "port, database and user"
    )
    assert "s3cret" not in message
    await store.close()


_DIES_HOLDING_A_KEY = """
import asyncio, os, sys
from agentkit.state.stores.postgres import PostgresStore

async def main():
    store = PostgresStore(sys.argv[1], schema=sys.argv[2])

    async def factory():
        print("holding", flush=True)
        await asyncio.sleep(3600)  # killed here, with the key's lock held

    await store.get_or_set("charge:order-1", factory)

asyncio.run(main())
"""


async def test_a_producer_killed_mid_factory_releases_the_key_at_once(
    postgres_dsn: str, postgres_schema: str, tmp_path: Path
) -> None:
    script = tmp_path / "dies.py"
    script.write_text(_DIES_HOLDING_A_KEY)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(script), postgres_dsn, postgres_schema,
        stdout=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    assert await asyncio.wait_for(proc.stdout.readline(), 60) == b"holding\n"
    async with PostgresStore(postgres_dsn, schema=postgres_schema) as store:
        waiter = asyncio.create_task(
            store.get_or_set("charge:order-1", _made("charged"))
        )
        await asyncio.sleep(0.2)
        assert not waiter.done()  # the live producer holds the key
        proc.kill()  # kill -9: no cleanup code runs in the producer
        await proc.wait()
        assert await asyncio.wait_for(waiter, 10) == ("charged", True)


def _made(value: str) -> Callable[[], Awaitable[str]]:
    async def factory() -> str:
        return value

    return factory


def test_a_missing_driver_names_the_extra_to_install() -> None:
    probe = (
        "import sys; sys.modules['asyncpg'] = None\n"
        "from agentkit.state.stores.postgres import PostgresStore\n"
        "try:\n"
        "    PostgresStore('postgresql://localhost/db')\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert result.stdout == (
        "PostgresStore needs the asyncpg driver, which is not installed: "
        'pip install "agentkit-framework[postgres]"\n'
    )


def test_the_stores_package_exports_postgres_store_lazily() -> None:
    from agentkit.state import stores

    assert "PostgresStore" in stores.__all__
    assert stores.PostgresStore is PostgresStore


# -- single flight under pressure ---------------------------------------------------------

DEADLINE = 20.0
"""Seconds a test may wait on an event before it fails instead of hanging."""


def _named(dsn: str, name: str) -> str:
    """``dsn`` with an ``application_name``, so a test can find that store's backends."""
    return f"{dsn}{'&' if '?' in dsn else '?'}application_name={name}"


async def _terminate(dsn: str, name: str) -> int:
    """End every server session of the store connected as ``name``, as a failover or an
    ``idle_session_timeout`` would; how many there were."""
    admin = await asyncpg.connect(dsn)
    try:
        return int(await admin.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE application_name = $1", name,
        ))
    finally:
        await admin.close()


async def test_nested_get_or_set_never_waits_on_a_connection_its_callers_hold(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """Two runs of five parallel delegations, single flight at both levels."""
    effects: list[str] = []

    def body(key: str) -> Callable[[], Awaitable[str]]:
        async def inner() -> str:
            effects.append(key)
            return f"done {key}"

        return inner

    async with PostgresStore(postgres_dsn, schema=postgres_schema) as store:

        def delegation(key: str) -> Callable[[], Awaitable[str]]:
            async def outer() -> str:
                value, _ = await store.get_or_set(f"{key}/refund", body(f"{key}/refund"))
                return f"sub-run said {value}"

            return outer

        async with asyncio.timeout(DEADLINE):
            results = await asyncio.gather(*(
                store.get_or_set(f"run{r}/c{i}", delegation(f"run{r}/c{i}"))
                for r in range(2) for i in range(5)
            ))
    assert results == [
        (f"sub-run said done run{r}/c{i}/refund", True) for r in range(2) for i in range(5)
    ]
    assert sorted(effects) == sorted(f"run{r}/c{i}/refund" for r in range(2) for i in range(5))


async def test_the_claim_outlives_the_producers_connections(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """The server ending the producer's sessions does not start a second producer."""
    name = f"producer_{postgres_schema}"
    effects: list[str] = []
    started, release = asyncio.Event(), asyncio.Event()

    async def charge() -> str:
        started.set()
        await release.wait()
        effects.append("producer")
        return "charged once"

    async def charge_again() -> str:
        effects.append("waiter")
        return "charged twice"

    async with (
        PostgresStore(_named(postgres_dsn, name), schema=postgres_schema) as producer,
        PostgresStore(postgres_dsn, schema=postgres_schema) as other,
    ):
        async with asyncio.timeout(DEADLINE):
            first = asyncio.create_task(producer.get_or_set("charge:order-1", charge))
            await started.wait()
            waiter = asyncio.create_task(other.get_or_set("charge:order-1", charge_again))
            await asyncio.sleep(0.2)  # the waiter is waiting for the claim
            assert await _terminate(postgres_dsn, name) >= 1
            await asyncio.sleep(0.3)  # time for a second producer to start, if one could
            assert effects == []
            release.set()
            assert await first == ("charged once", True)
            assert await waiter == ("charged once", False)
    assert effects == ["producer"]


@pytest.mark.parametrize(
    ("statement", "what"),
    [
        ("UPDATE {s}.claims SET owner = 'another worker'", "taken over by 'another worker'"),
        ("DELETE FROM {s}.claims", "removed"),
    ],
)
async def test_a_producer_whose_claim_was_taken_over_stores_nothing_and_says_why(
    postgres_dsn: str, postgres_schema: str, statement: str, what: str
) -> None:
    started, release = asyncio.Event(), asyncio.Event()

    async def charge() -> str:
        started.set()
        await release.wait()
        return "charged"

    async with PostgresStore(postgres_dsn, schema=postgres_schema) as store:
        async with asyncio.timeout(DEADLINE):
            producer = asyncio.create_task(store.get_or_set("charge:order-1", charge))
            await started.wait()
            admin = await asyncpg.connect(postgres_dsn)
            try:  # as a worker that judged this one dead would
                await admin.execute(statement.format(s=postgres_schema))
            finally:
                await admin.close()
            release.set()
            with pytest.raises(SingleFlightLost) as info:
                await producer
        assert info.value.key == "charge:order-1"
        assert str(info.value) == (
            f"get_or_set('charge:order-1'): this worker's claim on the key was {what} while "
            "its factory ran, so the factory's value was not stored; the work may have been "
            "done twice"
        )
        assert await store.get("charge:order-1") is None


async def test_a_waiter_past_claim_wait_gets_a_typed_error_naming_the_holder(
    postgres_dsn: str, postgres_schema: str
) -> None:
    started, release = asyncio.Event(), asyncio.Event()

    async def slow() -> str:
        started.set()
        await release.wait()
        return "done"

    async with (
        PostgresStore(postgres_dsn, schema=postgres_schema) as producer,
        PostgresStore(postgres_dsn, schema=postgres_schema, claim_wait=0.3) as impatient,
    ):
        async with asyncio.timeout(DEADLINE):
            first = asyncio.create_task(producer.get_or_set("k", slow))
            await started.wait()
            admin = await asyncpg.connect(postgres_dsn)
            try:
                holder = await admin.fetchval(f"SELECT owner FROM {postgres_schema}.claims")
            finally:
                await admin.close()
            with pytest.raises(SingleFlightTimeout) as info:
                await impatient.get_or_set("k", _made("never"))
            release.set()
            assert await first == ("done", True)
    assert (info.value.key, info.value.waited, info.value.owner) == ("k", 0.3, holder)
    assert str(info.value) == (
        f"get_or_set('k') waited 0.3 s for the factory of {holder!r}, which still holds "
        "the key; raise the store's claim_wait= if such work takes longer, or retry later"
    )


async def test_a_statement_timeout_does_not_cut_a_waiters_wait(
    postgres_dsn: str, postgres_schema: str
) -> None:
    started, release = asyncio.Event(), asyncio.Event()

    async def slow() -> str:
        started.set()
        await release.wait()
        return "done"

    # asyncpg sends a URL's unknown parameters as settings of the session.
    timed = _named(postgres_dsn, "timed").replace("application_name=", "statement_timeout=100&"
                                                  "application_name=")
    async with (
        PostgresStore(postgres_dsn, schema=postgres_schema) as producer,
        PostgresStore(timed, schema=postgres_schema) as waiter_store,
    ):
        async with asyncio.timeout(DEADLINE):
            first = asyncio.create_task(producer.get_or_set("k", slow))
            await started.wait()
            waiter = asyncio.create_task(waiter_store.get_or_set("k", _made("never")))
            await asyncio.sleep(0.4)  # past the 100 ms statement_timeout
            release.set()
            assert await first == ("done", True)
            assert await waiter == ("done", False)


# -- connection strings and keys ----------------------------------------------------------


async def test_a_keyword_connection_string_connects(
    postgres_dsn: str, postgres_schema: str
) -> None:
    from urllib.parse import parse_qs, urlsplit

    url = urlsplit(postgres_dsn)
    words = {"user": url.username or "", "dbname": url.path.lstrip("/")}
    words.update({k: v[-1] for k, v in parse_qs(url.query).items()})
    if url.hostname:
        words["host"] = url.hostname
    if url.port:
        words["port"] = str(url.port)
    keywords = " ".join(f"{k}='{v}'" for k, v in words.items())
    async with PostgresStore(keywords, schema=postgres_schema) as store:
        await store.set("k", "via keywords")
        assert await store.get("k") == "via keywords"


@pytest.mark.parametrize(
    "text",
    ["host=db dbname='my db' password='it\\'s'", "host = db  port=5433 user=u"],
)
def test_keyword_connection_strings_become_urls(text: str) -> None:
    expected = {
        "host=db dbname='my db' password='it\\'s'":
            "postgresql://?host=db&dbname=my+db&password=it%27s",
        "host = db  port=5433 user=u": "postgresql://?host=db&port=5433&user=u",
    }[text]
    assert connection_url(text) == expected


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("host=db dbname", "host=db dbname"),
        ("host='db", "host='db"),
        ("=x", "=x"),
        ("password='s3 cret' dbname", "password=*** dbname"),
    ],
)
def test_a_malformed_keyword_connection_string_is_refused_without_its_password(
    text: str, shown: str
) -> None:
    with pytest.raises(ValueError) as info:
        PostgresStore(text)
    assert str(info.value) == (
        f"PostgresStore(dsn=...) is neither a postgresql:// URL nor a libpq keyword string "
        f"(key=value pairs, values with spaces in single quotes): {shown!r}"
    )


# A model-chosen call id of 4,000 characters, in digits of no pattern (the server would
# compress a repeated one below the index limit).
LONG = "".join(hashlib.sha256(str(i).encode()).hexdigest() for i in range(63))[:4000]
KEYS = [
    "nul \x00 inside",
    "nul \x00 inside but longer",
    "a lone surrogate \ud800",
    "call:" + LONG,
    "call:" + LONG[:-1] + "!",
    "\x01sha256:looks like a hashed key",
    "plain",
]


async def test_any_string_is_a_key_and_distinct_keys_stay_distinct(
    postgres_dsn: str, postgres_schema: str
) -> None:
    async with PostgresStore(postgres_dsn, schema=postgres_schema) as store:
        for n, key in enumerate(KEYS):
            await store.set(key, n)
            assert await store.get_or_set(key + "/once", _made(f"once {n}")) == (f"once {n}", True)
            await store.append(key, n)
            assert await store.set_versioned(key, n, expected_version=0) == 1
        for n, key in enumerate(KEYS):
            assert await store.get(key) == n
            assert await store.get_or_set(key + "/once", _made("again")) == (f"once {n}", False)
            assert await store.list(key) == (n,)
            assert await store.get_versioned(key) == (n, 1)
        assert await store.delete(KEYS[0]) is True
        assert await store.get(KEYS[1]) == 1


async def test_a_claim_whose_lease_lapsed_unrenewed_is_taken_over(
    postgres_dsn: str, postgres_schema: str
) -> None:
    """A producer on another host that stopped renewing is proven dead by its lease."""
    async with PostgresStore(postgres_dsn, schema=postgres_schema) as store:
        await store.get("warm-up")  # the tables exist
        admin = await asyncpg.connect(postgres_dsn)
        try:
            await admin.execute(
                f"INSERT INTO {postgres_schema}.claims VALUES "
                "('k', 'elsewhere|1|boot|1|gone', extract(epoch from clock_timestamp()) - 1)"
            )
        finally:
            await admin.close()
        assert await store.get_or_set("k", _made("made here")) == ("made here", True)


async def test_a_live_producer_renews_its_claim_past_the_lease(
    postgres_dsn: str, postgres_schema: str
) -> None:
    effects: list[str] = []
    started, release = asyncio.Event(), asyncio.Event()

    async def slow() -> str:
        started.set()
        await release.wait()
        effects.append("producer")
        return "once"

    async def again() -> str:
        effects.append("waiter")
        return "twice"

    async with (
        PostgresStore(postgres_dsn, schema=postgres_schema, claim_lease=0.3) as producer,
        PostgresStore(postgres_dsn, schema=postgres_schema, poll_interval=0.02) as other,
    ):
        async with asyncio.timeout(DEADLINE):
            first = asyncio.create_task(producer.get_or_set("k", slow))
            await started.wait()
            waiter = asyncio.create_task(other.get_or_set("k", again))
            await asyncio.sleep(1.0)  # three leases long
            assert effects == []
            release.set()
            assert await first == ("once", True)
            assert await waiter == ("once", False)


@pytest.mark.parametrize("option", ["claim_lease", "claim_wait", "poll_interval"])
@pytest.mark.parametrize("seconds", [0, -1, True, "5", float("nan")])
def test_single_flight_timings_must_be_positive_seconds(option: str, seconds: object) -> None:
    with pytest.raises(ValueError) as info:
        PostgresStore("postgresql://localhost/db", **{option: seconds})  # type: ignore[arg-type]
    assert str(info.value) == (
        f"PostgresStore({option}=...) must be a positive number of seconds, got {seconds!r}"
    )
