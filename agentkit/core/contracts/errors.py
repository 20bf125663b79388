"""The error hierarchy, branched by when an error is settled and who can fix it.

::

    AgentkitError
    ├── ToolDefinitionError (ValueError)   definition: raised at import, you fix it
    ├── ModelCallError                     model: becomes a repair turn, the model fixes it
    │   ├── ToolArgumentError (ValueError)   bad arguments, before the body runs
    │   ├── ToolNotFoundError (LookupError)  a tool name that is not registered
    │   ├── OutputCoercionError (ValueError) an answer that misses Agent(output=...)
    │   └── EgressRefused (ValueError)       a URL argument aimed somewhere forbidden
    ├── ToolShapeError (ValueError)        tool: a bad value after the body ran
    ├── ToolTimeout (TimeoutError)         tool: ran past its timeout and was given up on
    ├── RunError                           run: the run cannot go on as asked
    │   ├── RunCancelled
    │   ├── DepthLimitExceeded
    │   ├── BudgetExceeded
    │   ├── UnpricedModel
    │   └── RunNotResumable
    │       └── RunTakenOver
    ├── HumanInputRequired                 a tool needs a person's answer: the run suspends
    ├── ProviderError                      a model provider failed (transient or not)
    │   ├── UnsupportedSetting (ValueError)  a ModelSettings field it cannot honour
    │   ├── UnsupportedMedia (ValueError)    a media part it cannot take, or too big
    │   └── UnsupportedSchema (ValueError)   a tool schema it cannot express
    ├── VersionConflict                    state: another writer got there first
    ├── SessionBusy                        state: another run appended to the session
    ├── CheckpointCorrupt (ValueError)     state: a stored value does not decode
    └── NotStorable (TypeError)            state: a value a store cannot hold

Every class renders its message from typed fields in ``__init__``, so callers match on
fields (``exc.unexpected``) rather than on text. Whether a failure is worth retrying is
decided by type, in one place: :func:`is_transient`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentkit.core.contracts._quote import cut, quote_names

_MAX_REASON = 500  # characters of one reason an error message carries


def _cut(text: str) -> str:
    return cut(text, _MAX_REASON)


def _quote_text(text: str) -> str:
    return repr(cut(text, 200))


class AgentkitError(Exception):
    """Root of every error agentkit raises on purpose."""


class ToolDefinitionError(AgentkitError, ValueError):
    """A tool is wired wrongly; raised when it is defined or registered, before any run."""


class ModelCallError(AgentkitError):
    """The model authored a call that cannot run; the fix is a repair turn."""


class ToolArgumentError(ModelCallError, ValueError):
    """The model's arguments for a tool were missing, unexpected or invalid.

    Raised before the tool body runs, with every problem collected so one repair turn
    can fix them all.
    """

    def __init__(
        self,
        tool: str,
        *,
        missing: Sequence[str] = (),
        unexpected: Sequence[str] = (),
        invalid: Sequence[tuple[str, str]] = (),
        accepted: Sequence[str] = (),
        call_id: str | None = None,
    ) -> None:
        self.tool = tool
        self.missing = tuple(missing)
        self.unexpected = tuple(unexpected)
        self.invalid = tuple(invalid)
        self.accepted = tuple(accepted)
        self.call_id = call_id
        problems = []
        if self.missing:
            problems.append(f"missing required argument(s) {list(self.missing)}")
        if self.unexpected:
            problems.append(f"unexpected argument(s) {quote_names(self.unexpected)}")
        if self.invalid:
            details = "; ".join(f"{name}: {_cut(reason)}" for name, reason in self.invalid)
            problems.append(f"invalid argument(s): {details}")
        super().__init__(
            f"tool {tool!r} call rejected: {'; '.join(problems)}. "
            f"Accepted arguments: {list(self.accepted)}"
        )


class ToolNotFoundError(ModelCallError, LookupError):
    """The model asked for a tool name that is not registered."""

    def __init__(self, name: str, available: Sequence[str]) -> None:
        self.name = name
        self.available = tuple(available)
        super().__init__(
            f"no tool named {cut(name, 100)!r}. Available tools: {list(self.available)}"
        )


class OutputCoercionError(ModelCallError, ValueError):
    """The model's final answer did not parse into ``Agent(output=...)``, even after a
    repair turn that told it what was wrong."""

    def __init__(self, agent: str, expected: str, reason: str, raw: str) -> None:
        self.agent = agent
        self.expected = expected
        self.reason = reason
        self.raw = raw
        super().__init__(
            f"agent {agent!r}: the model's answer is not a valid {expected} after a repair "
            f"turn: {reason}"
        )


class ToolShapeError(AgentkitError, ValueError):
    """A tool returned a value that does not match its declared output schema."""

    def __init__(self, tool: str, raw: object, expected: str, reason: str = "") -> None:
        self.tool = tool
        self.raw = raw
        self.expected = expected
        self.reason = reason
        super().__init__(f"tool {tool!r} returned value not matching schema {expected!r}")


class RunError(AgentkitError):
    """The run cannot continue as asked (cancelled, too deep, over budget).

    ``stop_reason`` is what an agent run that stops on this error reports.
    """

    stop_reason = "error"


class RunCancelled(RunError):
    """The run's cancellation token was set; raised at the next safe point."""

    stop_reason = "cancelled"

    def __init__(self, reason: str = "cancelled") -> None:
        self.reason = reason
        super().__init__(f"run cancelled: {reason}")


class DepthLimitExceeded(RunError):
    """A nested run (an agent called as a tool) would go deeper than allowed."""

    def __init__(self, depth: int, max_depth: int) -> None:
        self.depth = depth
        self.max_depth = max_depth
        super().__init__(
            f"nested run refused: depth {depth} would exceed the maximum of {max_depth}. "
            "Raise max_depth on the context if the nesting is deliberate."
        )


class EgressRefused(ModelCallError, ValueError):
    """A tool's URL argument points where the egress policy forbids; the tool did not run."""

    def __init__(self, tool: str, argument: str, url: str, reason: str) -> None:
        self.tool = tool
        self.argument = argument
        self.url = url
        self.reason = reason
        super().__init__(
            f"tool {tool!r} call refused: argument {argument!r} = {_quote_text(url)} is not "
            f"allowed: {_cut(reason)}"
        )


class BudgetExceeded(RunError):
    """A call would cross one of the run's budget ceilings; it was refused and the run stops."""

    stop_reason = "budget_exceeded"

    def __init__(self, limit: str, ceiling: float, would_be: float, what: str) -> None:
        self.limit = limit
        self.ceiling = ceiling
        self.would_be = would_be
        self.what = what
        super().__init__(
            f"budget exceeded: {what} refused: {limit} would reach {would_be:g} over the "
            f"ceiling of {ceiling:g}"
        )


class UnpricedModel(RunError):
    """A run with a money ceiling asked a model whose price is unknown: refused, since
    its cost could not be held to the ceiling."""

    stop_reason = "budget_exceeded"

    def __init__(self, model: str) -> None:
        self.model = model
        super().__init__(
            f"model call to {model!r} refused: the run has a cost ceiling but no price is "
            "known for this model; add one with meter(prices=DEFAULT_PRICES.with_prices("
            f"{{{model!r}: ModelPrice(input=..., output=...)}}))"
        )


class ProviderError(AgentkitError):
    """A model provider's failure, with the provider's own message kept.

    ``transient`` is True for rate limits, overload, timeouts, connection failures and
    5xx answers: worth retrying. Authentication, permission, bad-request and
    context-length errors are permanent. ``request_id`` is the provider's id for the
    request, when its reply carried one (quote it to the provider's support);
    ``retry_after`` is the wait in seconds the provider asked for, which ``retry()``
    honours.
    """

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        transient: bool,
        status: int | None = None,
        kind: str = "error",
        request_id: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        self.provider = provider
        self.transient = transient
        self.status = status
        self.kind = kind
        self.request_id = request_id
        self.retry_after = retry_after
        super().__init__(message)


class UnsupportedSetting(ProviderError, ValueError):
    """A provider cannot honour a :class:`ModelSettings` field, so it refuses the request
    before sending it rather than dropping the setting silently."""

    def __init__(self, provider: str, setting: str, reason: str) -> None:
        self.setting = setting
        self.reason = reason
        super().__init__(
            f"{provider} cannot honour ModelSettings.{setting}: {reason}. Remove it from "
            "the agent's or the run's settings, or use a provider that supports it",
            provider=provider,
            transient=False,
            kind="unsupported_setting",
        )


class UnsupportedMedia(ProviderError, ValueError):
    """A provider (or its model) cannot take a media part of a message, or the part
    breaks a limit the provider documents, so the request is refused before it is sent
    rather than the part turned into a line of text."""

    def __init__(
        self,
        provider: str,
        media_type: str,
        accepted: str,
        *,
        where: str = "",
        limit: str | None = None,
    ) -> None:
        self.media_type = media_type
        self.accepted = accepted
        self.where = where
        self.limit = limit
        place = f" in {where}" if where else ""
        broken = f"{limit}; " if limit else ""
        super().__init__(
            f"{provider} cannot take {media_type}{place}: {broken}it accepts {accepted}",
            provider=provider,
            transient=False,
            kind="unsupported_media",
        )


class UnsupportedSchema(ProviderError, ValueError):
    """A provider cannot express a construct of a tool's JSON Schema, so the request is
    refused before it is sent rather than the tool declared with a looser schema."""

    def __init__(self, provider: str, tool: str, construct: str, reason: str) -> None:
        self.tool = tool
        self.construct = construct
        self.reason = reason
        super().__init__(
            f"{provider} cannot express tool {tool!r}'s parameter schema: {construct}: "
            f"{_cut(reason)}. Simplify the tool's parameters, or use a provider that "
            "accepts the construct",
            provider=provider,
            transient=False,
            kind="unsupported_schema",
        )


def is_transient(error: BaseException) -> bool:
    """True when ``error`` (or what caused it) is worth retrying.

    Timeouts (a tool's included), dropped connections and transient provider errors
    are; every error agentkit settles on purpose (definition, argument, shape, budget,
    egress, permanent provider errors) is not.
    """
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ProviderError):
            return current.transient
        if isinstance(current, ToolTimeout):
            return True
        if isinstance(current, AgentkitError):
            return False
        if isinstance(current, TimeoutError | ConnectionError):
            return True
        current = current.__cause__
    return False


class RunNotResumable(RunError):
    """``resume`` was asked to continue a run that is not waiting for a decision."""

    def __init__(self, run_id: str, reason: str) -> None:
        self.run_id = run_id
        self.reason = reason
        super().__init__(f"run {run_id!r} cannot be resumed: {reason}")


class RunTakenOver(RunNotResumable):
    """This worker lost its run: another worker took it over (``recover`` from a machine
    that could not tell this one was alive) and wrote a newer checkpoint. The worker
    stops at once, without writing anything more."""

    def __init__(self, run_id: str) -> None:
        super().__init__(
            run_id,
            "another worker took it over and saved a newer checkpoint; this worker stopped",
        )


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


class ToolTimeout(AgentkitError, TimeoutError):
    """A tool call ran past its timeout (``@tool(timeout=)``, ``Agent(tool_timeout=)``)
    and was given up on: an async tool was cancelled; a sync tool's thread cannot be
    stopped, so it runs on and its result is discarded. Transient: a read-only or
    idempotent call may be tried again; what a side-effecting one did is unknown."""

    def __init__(self, tool: str, call_id: str | None, seconds: float) -> None:
        self.tool = tool
        self.call_id = call_id
        self.seconds = seconds
        call = f" call {call_id!r}" if call_id else ""
        super().__init__(
            f"tool {tool!r}{call} did not finish within its timeout of {seconds:g}s and "
            "was stopped"
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


class HumanInputRequired(AgentkitError):
    """A tool, mid-call, needs a person's answer (an MCP server's elicitation).

    Inside an agent loop the run suspends (``awaiting_input``) with the question in
    ``Suspended.questions``; resuming re-runs the call with the answer at hand. Raised
    outside an agent loop, it tells the caller what was asked.
    """

    def __init__(
        self, tool: str, message: str, schema: Mapping[str, Any] | None = None, source: str = ""
    ) -> None:
        self.tool = tool
        self.message = message
        self.schema = schema
        self.source = source
        origin = f" (asked by {source})" if source else ""
        super().__init__(f"tool {tool!r} needs a person's answer{origin}: {message}")


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
