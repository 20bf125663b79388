"""Sessions: conversations kept in a store, keyed by the tenant's scope and a session id.

A session is a row per turn: ``session-turn:<n>:<scope key>:<session id>`` for the n-th
turn (n = 1, 2, ...), a :class:`SessionRecord` holding that turn's messages and the
checkpoint key of the run that made it. Each row is written once, a compare-and-set over
"never written" (version 0), so of two runs that read the same n-1 turns exactly one
appends turn n; the other gets :class:`SessionBusy` rather than recording a turn after
one its model never saw. The session's version is the number of its last row. A run
with ``session=`` reads the rows once when it starts and writes one row when it
completes, so what a turn writes does not grow with the conversation.

``session:<scope key>:<session id>`` is the layout before turn rows: one record holding
the whole conversation, rewritten on every append. It is still read (its messages come
before the rows) but never written again, except to erase it. A run started before the
change still appends over that record's version: its turn becomes row 1 only while
that version is current (see ``legacy`` in :func:`append_turn`).

``session-open:<n>:<scope key>:<session id>`` is a log of the checkpoint keys of the
runs that read n-1 turns and so would append row n. A run that finds such a checkpoint
complete but its row missing (its worker died between its final checkpoint and the
append) appends that turn first; see :mod:`agentkit.agents.conversation`.

``session-summary:<n>:<scope key>:<session id>`` holds a :class:`SessionSummary`: a
summary of the conversation's first ``n`` turns (cut at user messages) that a
``Summarize`` history policy wrote, once, so that every later run reads it instead of
asking a model again. The turn rows stay as they were: the full history is still there.

The scope's list of session ids is ``sessions:<scope key>``, written only when a session
is created or deleted.

Media in a turn's messages are stored once, as content-addressed blobs the row refers
to (:mod:`agentkit.state.media_refs`); reading puts the bytes back.

Deleting a session erases its rows, its summaries, the old record and the checkpoints
of its turns
(the versions stay, holding nothing), writes an empty row (no turn) at the next number
so a run that read the session before cannot write the conversation back, and takes it
off the scope's list.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentkit.core.contracts.ports import Store
from agentkit.core.contracts.state_errors import CheckpointCorrupt, SessionBusy, VersionConflict
from agentkit.core.contracts.types import Message, Scope
from agentkit.state.media_refs import by_reference, by_value

__all__ = [
    "SessionRecord",
    "SessionSummary",
    "append_turn",
    "delete_session",
    "list_sessions",
    "load_session",
    "load_summaries",
    "open_log",
    "read_session",
    "store_summary",
]

_MAX_ID = 200
_FIRST_PAGE = 16
_MAX_PAGE = 512


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """A conversation, or one turn's row of it: its messages and the runs that made its
    turns. A row with no turn marks where the session was deleted."""

    messages: tuple[Message, ...] = ()
    """Every message of its completed turns, oldest first (no system prompt)."""
    turns: tuple[str, ...] = ()
    """Per completed turn, the checkpoint key of its run (``"<run id>:<agent>"``)."""


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """A summary of a session's first ``turns`` turns, written once."""

    turns: int
    """How many turns (each starting at a user message) it stands for."""
    message: Message
    """The message that takes their place in what a model is sent."""


def _check_id(session_id: object) -> str:
    if not isinstance(session_id, str) or not session_id or len(session_id) > _MAX_ID:
        raise ValueError(
            f"a session id must be a non-empty string of at most {_MAX_ID} characters, "
            f"got {session_id!r}"
        )
    try:
        session_id.encode("utf-8")
    except UnicodeEncodeError as exc:
        # A lone surrogate cannot be stored as text by any store; say so here, naming
        # the id, rather than letting the driver fail with its own encoding error.
        raise ValueError(
            f"a session id must be text that UTF-8 can encode, got {session_id!r}: it holds "
            f"a lone surrogate (U+{ord(session_id[exc.start]):04X} at index {exc.start}); "
            "use an id of whole characters"
        ) from None
    return session_id


def _key(scope: Scope, session_id: str) -> str:
    return f"session:{scope.key()}:{_check_id(session_id)}"


def _row_key(scope: Scope, session_id: str, n: int) -> str:
    # The number comes before the id: ids may hold ":" and digits, numbers never ":".
    return f"session-turn:{n}:{scope.key()}:{_check_id(session_id)}"


def open_log(scope: Scope, session_id: str, n: int) -> str:
    """The log of the checkpoint keys of runs that would append row ``n``."""
    return f"session-open:{n}:{scope.key()}:{_check_id(session_id)}"


def _summary_key(scope: Scope, session_id: str, turns: int) -> str:
    return f"session-summary:{turns}:{scope.key()}:{_check_id(session_id)}"


async def load_summaries(
    store: Store, scope: Scope, session_id: str, turns: Sequence[int]
) -> dict[int, SessionSummary]:
    """The stored summaries of the first ``n`` turns, for each ``n`` of ``turns`` that has
    one, in one round trip."""
    keys = [_summary_key(scope, session_id, n) for n in turns]
    found: dict[int, SessionSummary] = {}
    for n, key, (value, _) in zip(turns, keys, await store.get_versioned_many(keys),
                                  strict=True):
        if value is None:
            continue
        if not isinstance(value, SessionSummary) or value.turns != n:
            raise CheckpointCorrupt(key, f"expected a summary of {n} turns, found {value!r:.80}")
        found[n] = value
    return found


async def store_summary(
    store: Store, scope: Scope, session_id: str, summary: SessionSummary
) -> SessionSummary:
    """Keep ``summary`` unless one of as many turns is there already; the one kept.

    Written once, a compare-and-set over "never written", so two runs that summarised
    the same turns at once agree on one summary from then on. A number erased by
    :func:`delete_session` is never written again (a run that read the conversation
    before the delete must not put a summary of it back): a summary for it is returned
    unstored, and computed again by the next run until the conversation outgrows it."""
    key = _summary_key(scope, session_id, summary.turns)
    try:
        await store.set_versioned(key, summary, expected_version=0)
    except VersionConflict:
        kept = await load_summaries(store, scope, session_id, (summary.turns,))
        return kept.get(summary.turns, summary)
    return summary


def _index_key(scope: Scope) -> str:
    return f"sessions:{scope.key()}"


def _record(value: object, key: str) -> SessionRecord:
    if value is None:
        return SessionRecord()
    if not isinstance(value, SessionRecord):
        raise CheckpointCorrupt(key, f"expected a session record, found a {type(value).__name__}")
    return value


async def load_session(
    store: Store, scope: Scope, session_id: str, *, upto: int | None = None
) -> tuple[SessionRecord, int]:
    """The session's turns (empty when new) and its version, the number of its last row.

    With ``upto``, only rows up to that number: the history a run that read version
    ``upto`` started from. The rows are read a page at a time, pages doubling, so a long
    conversation costs a few round trips, not one per turn.
    """
    head = _key(scope, session_id)
    keys = [head]  # the old whole-session record comes with the first page of rows
    messages: list[Message] = []
    turns: list[str] = []
    n, page = 0, _FIRST_PAGE
    while True:
        end = n + page if upto is None else min(n + page, upto)
        keys.extend(_row_key(scope, session_id, i) for i in range(n + 1, end + 1))
        for key, (value, written) in zip(keys, await store.get_versioned_many(keys),
                                         strict=True):
            if key != head:
                if written == 0:
                    return await _whole(store, messages, turns), n
                n += 1
            record = _record(value, key)  # None: an erased turn; no turns: a deletion mark
            messages.extend(record.messages)
            turns.extend(record.turns)
        if upto is not None and n >= upto:
            return await _whole(store, messages, turns), n
        keys, page = [], min(page * 2, _MAX_PAGE)


async def _whole(store: Store, messages: list[Message], turns: list[str]) -> SessionRecord:
    """The record of ``messages`` with their media read back from their blobs."""
    return SessionRecord(await by_value(store, tuple(messages)), tuple(turns))


async def append_turn(
    store: Store,
    scope: Scope,
    session_id: str,
    *,
    version: int,
    messages: Sequence[Message],
    turn: str,
    run_id: str,
    result: object = None,
    legacy: bool = False,
) -> int:
    """Append one completed turn over the ``version`` its run read; the new version.

    Writes row ``version + 1`` if no other turn took it. Raises :class:`SessionBusy`,
    carrying ``result``, when one did; appending the same ``turn`` again (a retried
    commit, or a recovered one) is a no-op. ``legacy``: ``version`` is that of the
    session's old whole-conversation record, as read by a run started before turn rows;
    its turn becomes row 1 while that record is still at that version. A ``version``
    that names no row is taken as such a version too.
    """
    n = version + 1
    if not legacy and n > 1:
        before_key = _row_key(scope, session_id, n - 1)
        before, written = await store.get_versioned(before_key)
        if written == 0:
            # No such row: the version was read from the old record (a Temporal run
            # started before turn rows passes it without saying so).
            legacy = True
        elif before is not None and not _record(before, before_key).turns:
            await _index_change(store, scope, add=session_id)  # the first turn after a delete
    if legacy:
        _, current = await store.get_versioned(_key(scope, session_id))
        if current != version:
            raise SessionBusy(session_id, scope.key(), run_id, result)
        n = 1
    if n == 1:
        await _index_change(store, scope, add=session_id)
    row_key = _row_key(scope, session_id, n)
    # The turn's media bytes go in once, as blobs; the row refers to them.
    stored = await by_reference(store, tuple(messages))
    try:
        await store.set_versioned(row_key, SessionRecord(stored, (turn,)), expected_version=0)
    except VersionConflict:
        row, _ = await store.get_versioned(row_key)
        if row is None or _record(row, row_key).turns != (turn,):
            raise SessionBusy(session_id, scope.key(), run_id, result) from None
        # else this very turn is already there: a retried or recovered commit
    return n


async def _index_change(store: Store, scope: Scope, *, add: str = "", remove: str = "") -> None:
    key = _index_key(scope)
    while True:
        value, version = await store.get_versioned(key)
        ids: tuple[str, ...] = tuple(value) if isinstance(value, tuple | list) else ()
        if add and add not in ids:
            changed = (*ids, add)
        elif remove and remove in ids:
            changed = tuple(i for i in ids if i != remove)
        else:
            return
        try:
            await store.set_versioned(key, changed, expected_version=version)
            return
        except VersionConflict:
            continue  # another session of the scope was created or deleted: redo


async def list_sessions(store: Store, scope: Scope) -> tuple[str, ...]:
    """The ids of the scope's sessions, oldest first."""
    value, _ = await store.get_versioned(_index_key(scope))
    return tuple(value) if isinstance(value, tuple | list) else ()


async def read_session(store: Store, scope: Scope, session_id: str) -> tuple[Message, ...]:
    """Every message of the session's completed turns, oldest first; () when none."""
    record, _ = await load_session(store, scope, session_id)
    return record.messages


async def _erase(store: Store, key: str) -> bool:
    """Overwrite ``key`` with nothing, keeping its version; True when it held something."""
    while True:
        value, version = await store.get_versioned(key)
        if value is None:
            return False
        try:
            await store.set_versioned(key, None, expected_version=version)
            return True
        except VersionConflict:
            continue


async def delete_session(store: Store, scope: Scope, session_id: str) -> bool:
    """Erase the session: its messages, the checkpoints of its turns' runs, its place
    on the scope's list. True when there was something to erase.

    The rows are kept (holding nothing), and an empty row marks the deletion at the next
    number, so a run that read the session before the delete cannot write the
    conversation back: it gets :class:`SessionBusy`.
    """
    erased = False
    while True:
        record, version = await load_session(store, scope, session_id)
        if not record.turns and not erased:
            await _index_change(store, scope, remove=session_id)
            return False
        erased = True
        await _erase(store, _key(scope, session_id))
        for n in range(1, version + 1):
            await _erase(store, _row_key(scope, session_id, n))
        for turn in record.turns:
            await _erase(store, f"checkpoint:{turn}")
        # A summary is numbered by turns cut at user messages: at most one per message.
        for n in range(1, sum(m.role == "user" for m in record.messages) + 1):
            await _erase(store, _summary_key(scope, session_id, n))
        try:
            await store.set_versioned(
                _row_key(scope, session_id, version + 1), SessionRecord(), expected_version=0
            )
            break
        except VersionConflict:
            continue  # a turn was appended meanwhile: erase that too
    await _index_change(store, scope, remove=session_id)
    return True
