"""Sessions: conversations kept in a store, keyed by the tenant's scope and a session id.

A session is one versioned record, ``session:<scope key>:<session id>``, holding every
message of the conversation and, per turn, the checkpoint key of the run that made it.
A run with ``session=`` reads the record once when it starts and writes it once when it
completes, a compare-and-set over the version it read: if another run appended a turn
in between, the write is refused with :class:`SessionBusy` rather than recording a turn
after one its model never saw. The scope's list of session ids is a second record,
``sessions:<scope key>``, written only when a session is created or deleted.

Deleting a session overwrites its record and the checkpoints of its turns with nothing
(the versions stay, so a run still holding the old version cannot write the
conversation back), and takes it off the scope's list.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentkit.core.contracts.errors import CheckpointCorrupt, SessionBusy, VersionConflict
from agentkit.core.contracts.ports import Store
from agentkit.core.contracts.types import Message, Scope

__all__ = [
    "SessionRecord",
    "append_turn",
    "delete_session",
    "list_sessions",
    "load_session",
    "read_session",
]

_MAX_ID = 200


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """A conversation as stored: its messages and the runs that made its turns."""

    messages: tuple[Message, ...] = ()
    """Every message of every completed turn, oldest first (no system prompt)."""
    turns: tuple[str, ...] = ()
    """Per completed turn, the checkpoint key of its run (``"<run id>:<agent>"``)."""


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


def _index_key(scope: Scope) -> str:
    return f"sessions:{scope.key()}"


def _record(value: object, key: str) -> SessionRecord:
    if value is None:
        return SessionRecord()
    if not isinstance(value, SessionRecord):
        raise CheckpointCorrupt(key, f"expected a session record, found a {type(value).__name__}")
    return value


async def load_session(store: Store, scope: Scope, session_id: str) -> tuple[SessionRecord, int]:
    """The session's record (empty when new) and its version: one store read."""
    key = _key(scope, session_id)
    value, version = await store.get_versioned(key)
    return _record(value, key), version


async def append_turn(
    store: Store,
    scope: Scope,
    session_id: str,
    *,
    version: int,
    messages: Sequence[Message],
    turn: str,
    run_id: str,
    loaded: SessionRecord | None = None,
    result: object = None,
) -> int:
    """Append one completed turn over the ``version`` its run read; the new version.

    ``loaded`` is the record the run read at that version, when the run still has it
    (a run resumed in another process has not, and the record is read again). Raises
    :class:`SessionBusy`, carrying ``result``, when another turn was appended since;
    appending the same ``turn`` again (a retried commit) is a no-op.
    """
    key = _key(scope, session_id)
    if loaded is None:
        stored, current = await store.get_versioned(key)
        if current != version:
            return await _settle_conflict(store, scope, session_id, messages, turn, run_id,
                                          result)
        loaded = _record(stored, key)
    if not loaded.turns:  # a new session, or one deleted and started again
        await _index_change(store, scope, add=session_id)
    updated = SessionRecord((*loaded.messages, *messages), (*loaded.turns, turn))
    try:
        return await store.set_versioned(key, updated, expected_version=version)
    except VersionConflict:
        return await _settle_conflict(store, scope, session_id, messages, turn, run_id,
                                      result)


async def _settle_conflict(
    store: Store,
    scope: Scope,
    session_id: str,
    messages: Sequence[Message],
    turn: str,
    run_id: str,
    result: object,
) -> int:
    record, current = await load_session(store, scope, session_id)
    tail = tuple(messages)
    if record.turns[-1:] == (turn,) and record.messages[len(record.messages) - len(tail) :] == tail:
        return current  # this very turn is the last one appended (a retried commit)
    raise SessionBusy(session_id, scope.key(), run_id, result)


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


async def delete_session(store: Store, scope: Scope, session_id: str) -> bool:
    """Erase the session: its messages, the checkpoints of its turns' runs, its place
    on the scope's list. True when there was something to erase.

    The session's versions are kept (holding nothing), so a run that read the session
    before the delete cannot write the conversation back: it gets :class:`SessionBusy`.
    """
    key = _key(scope, session_id)
    while True:
        record, version = await load_session(store, scope, session_id)
        if version == 0 or (not record.messages and not record.turns):
            await _index_change(store, scope, remove=session_id)
            return False
        try:
            await store.set_versioned(key, None, expected_version=version)
            break
        except VersionConflict:
            continue  # a turn was appended meanwhile: erase that too
    for turn in record.turns:
        checkpoint = f"checkpoint:{turn}"
        while True:
            state, at = await store.get_versioned(checkpoint)
            if state is None:
                break
            try:
                await store.set_versioned(checkpoint, None, expected_version=at)
                break
            except VersionConflict:
                continue
    await _index_change(store, scope, remove=session_id)
    return True
