"""Errors of stored state: a write that lost a race, a key another worker holds, a
session another run appended to, a stored value that does not decode or cannot be kept.

They sit under :class:`~agentkit.core.contracts.errors.AgentkitError` like every agentkit
error (the hierarchy is drawn in :mod:`agentkit.core.contracts.errors`).
"""

from __future__ import annotations

from agentkit.core.contracts._error_root import AgentkitError

__all__ = [
    "CheckpointCorrupt",
    "NotStorable",
    "SessionBusy",
    "SingleFlightLost",
    "SingleFlightTimeout",
    "VersionConflict",
]


class VersionConflict(AgentkitError):
    """A versioned write lost a race: the stored version moved on since it was read."""

    def __init__(self, key: str, expected: int, actual: int) -> None:
        self.key = key
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"write to {key!r} refused: expected version {expected}, found {actual}; "
            "another worker has written since this one read"
        )


class SingleFlightTimeout(AgentkitError, TimeoutError):
    """A ``get_or_set`` waited its bound for another worker's factory to finish, and that
    worker still holds the key (its work is slow, or it is unreachable but not proven
    dead); nothing ran here."""

    def __init__(self, key: str, waited: float, owner: str) -> None:
        self.key = key
        self.waited = waited
        self.owner = owner
        super().__init__(
            f"get_or_set({key!r}) waited {waited} s for the factory of {owner!r}, which "
            "still holds the key; raise the store's claim_wait= if such work takes "
            "longer, or retry later"
        )


class SingleFlightLost(AgentkitError):
    """A ``get_or_set`` producer's claim on its key was taken over while its factory ran
    (another worker judged it dead: its lease lapsed unrenewed), so the value it made was
    not stored."""

    def __init__(self, key: str, owner: str | None) -> None:
        self.key = key
        self.owner = owner
        taken = "removed" if owner is None else f"taken over by {owner!r}"
        super().__init__(
            f"get_or_set({key!r}): this worker's claim on the key was {taken} while its "
            "factory ran, so the factory's value was not stored; the work may have been "
            "done twice"
        )


class SessionBusy(AgentkitError):
    """A run finished a turn of a session, but another run appended a turn to that
    session after this one read its history, so this turn was not appended.

    Each turn is computed from the history it read; appending it after a turn the model
    never saw would record a conversation that did not happen. ``result`` holds the
    finished run's :class:`AgentResult` (its tool calls did run), so the caller can show
    it, or run the task again on the session as it now stands.
    """

    def __init__(self, session_id: str, scope: str, run_id: str, result: object = None) -> None:
        self.session_id = session_id
        self.scope = scope
        self.run_id = run_id
        self.result = result
        super().__init__(
            f"session {session_id!r} of scope {scope!r} is busy: another run appended a turn "
            f"while run {run_id!r} was working, so this run's turn was not appended. Its "
            "result is in exc.result; run the task again to continue from the session as "
            "it now stands, and send one turn of a session at a time"
        )


class CheckpointCorrupt(AgentkitError, ValueError):
    """A value read from a store is not one agentkit wrote: garbage, truncated, empty,
    of another format version, or naming a type agentkit does not know.

    The stored row is left exactly as it was; nothing is imported or executed while
    reading it. ``run_id`` is set when the value is a run's checkpoint.
    """

    def __init__(self, key: str, reason: str, *, run_id: str | None = None) -> None:
        self.key = key
        self.reason = reason
        self.run_id = run_id
        what = f"checkpoint of run {run_id!r}" if run_id is not None else "stored value"
        super().__init__(
            f"{what} under key {key!r} is corrupt: {reason}. It was left as it is; delete "
            "the key (or restore it from a backup) to start over"
        )

    def for_run(self, run_id: str) -> CheckpointCorrupt:
        """The same error, naming the run whose checkpoint it is."""
        return CheckpointCorrupt(self.key, self.reason, run_id=run_id)


class NotStorable(AgentkitError, TypeError):
    """A value a store was asked to keep is not storable data.

    Stores hold versioned JSON (see :mod:`agentkit.state.codec`), never pickles, so only
    plain data and registered types can be kept. ``path`` locates the offending part
    (``"$.result[2]"``) and ``type_name`` names its type; ``context``, when set, opens
    the message with what it means for the caller.
    """

    def __init__(self, type_name: str, path: str = "$", *, context: str = "") -> None:
        self.type_name = type_name
        self.path = path
        self.context = context
        super().__init__(
            f"{context}cannot store {path}: type {type_name} is not storable. Stores keep "
            "JSON data: None, bool, int, float, str, bytes, bytearray, list, tuple, dict, set, "
            "frozenset, datetime, date, time, timedelta, Decimal, UUID and agentkit's own "
            "values (Message, ToolCall, Usage, media, ...). Return plain data from the tool, "
            "or register the type with agentkit.state.codec.register(...)"
        )
