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
    ├── InvalidDecision (ValueError)       a decision that does not fit what the run waits for
    ├── WaitsForPerson                     a call waits for a person: an outcome, not a failure
    │   └── HumanInputRequired               a tool needs a person's answer: the run suspends
    ├── ProviderError                      a model provider failed (transient or not)
    │   ├── UnsupportedSetting (ValueError)  a ModelSettings field it cannot honour
    │   ├── UnsupportedMedia (ValueError)    a media part it cannot take, or too big
    │   └── UnsupportedSchema (ValueError)   a tool schema it cannot express
    └── state (in :mod:`agentkit.core.contracts.state_errors`)
        ├── VersionConflict                  another writer got there first
        ├── SingleFlightTimeout (TimeoutError) another worker still holds the key
        ├── SingleFlightLost                 this worker's claim was taken over
        ├── SessionBusy                      another run appended to the session
        ├── CheckpointCorrupt (ValueError)   a stored value does not decode
        └── NotStorable (TypeError)          a value a store cannot hold

Every class renders its message from typed fields in ``__init__``, so callers match on
fields (``exc.unexpected``) rather than on text. Whether a failure is worth retrying is
decided by type, in one place: :func:`is_transient`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentkit.core.contracts._error_root import AgentkitError as AgentkitError
from agentkit.core.contracts._quote import cut, cut_reason, quote_names, quote_text

# The state errors live in their own module and are importable from here as well.
from agentkit.core.contracts.state_errors import CheckpointCorrupt as CheckpointCorrupt
from agentkit.core.contracts.state_errors import NotStorable as NotStorable
from agentkit.core.contracts.state_errors import SessionBusy as SessionBusy
from agentkit.core.contracts.state_errors import SingleFlightLost as SingleFlightLost
from agentkit.core.contracts.state_errors import SingleFlightTimeout as SingleFlightTimeout
from agentkit.core.contracts.state_errors import VersionConflict as VersionConflict


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
        self, tool: str, *, missing: Sequence[str] = (), unexpected: Sequence[str] = (),
        invalid: Sequence[tuple[str, str]] = (), accepted: Sequence[str] = (),
        call_id: str | None = None,
    ) -> None:
        self.tool, self.missing, self.unexpected = tool, tuple(missing), tuple(unexpected)
        self.invalid, self.accepted, self.call_id = tuple(invalid), tuple(accepted), call_id
        problems = []
        if self.missing:
            problems.append(f"missing required argument(s) {list(self.missing)}")
        if self.unexpected:
            problems.append(f"unexpected argument(s) {quote_names(self.unexpected)}")
        if self.invalid:
            details = "; ".join(f"{name}: {cut_reason(reason)}" for name, reason in self.invalid)
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
        self.agent, self.expected, self.reason, self.raw = agent, expected, reason, raw
        super().__init__(
            f"agent {agent!r}: the model's answer is not a valid {expected} after a repair "
            f"turn: {reason}"
        )


class ToolShapeError(AgentkitError, ValueError):
    """A tool returned a value that does not match its declared output schema."""

    def __init__(self, tool: str, raw: object, expected: str, reason: str = "") -> None:
        self.tool, self.raw, self.expected, self.reason = tool, raw, expected, reason
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
            f"tool {tool!r} call refused: argument {argument!r} = {quote_text(url)} is not "
            f"allowed: {cut_reason(reason)}"
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


class UnservedModel(ProviderError, LookupError):
    """An agent's model names a provider its context neither holds nor can build, or
    names none where the context holds several: refused before the run starts.

    ``available`` lists the providers the context holds (built or given).
    """

    def __init__(
        self, model: str, reason: str, *, available: tuple[str, ...], run_id: str | None = None
    ) -> None:
        self.model = model
        self.reason = reason
        self.available = available
        self.run_id = run_id
        where = f"run {run_id}: " if run_id else ""
        super().__init__(f"{where}model {model!r} {reason}", provider="routing",
                         transient=False, kind="unserved_model")


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
            f"{cut_reason(reason)}. Simplify the tool's parameters, or use a provider that "
            "accepts the construct",
            provider=provider,
            transient=False,
            kind="unsupported_schema",
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


class InvalidDecision(AgentkitError, ValueError):
    """A resume's decisions do not fit what the run waits for; nothing changed. ``pending``
    maps each waiting id to what it waits for; ``unknown`` (ids not pending), ``invalid``,
    ``accepted`` and ``waits`` (by id) say what was wrong and what each call accepts."""

    def __init__(
        self, run_id: str, *, pending: Mapping[str, str], unknown: Sequence[str] = (),
        invalid: Mapping[str, Any] | None = None, accepted: Mapping[str, str] | None = None,
        waits: Mapping[str, str] | None = None, workflow: str | None = None,
    ) -> None:
        self.run_id, self.pending, self.unknown = run_id, dict(pending), tuple(unknown)
        self.invalid, self.accepted = dict(invalid or {}), dict(accepted or {})
        self.waits, self.workflow = dict(waits or {}), workflow
        super().__init__(self._render())

    def _render(self) -> str:
        gates = [i for i, kind in self.pending.items() if kind == "gate"]
        bad_gates = {i: d for i, d in self.invalid.items() if i in gates}
        if self.workflow is not None and (self.unknown or bad_gates):
            paths = [i for i in self.pending if i not in gates]
            also = f" and calls waiting in agent steps {paths} to their decisions" if paths else ""
            return (
                f"workflow {self.workflow!r}: decisions must map pending gates {gates} to "
                f"'approve' or 'reject'{also}; unknown gates {list(self.unknown)}, "
                f"invalid values {bad_gates}"
            )
        if self.unknown:
            return (
                f"run {self.run_id!r}: decisions name call id(s) {list(self.unknown)} that "
                f"are not pending; pending calls: {sorted(self.pending)}"
            )
        call_id, decision = next(iter(self.invalid.items()))
        return (
            f"run {self.run_id!r}: call {call_id!r} {self.waits.get(call_id, 'waits')}; its "
            f"decision must be {self.accepted.get(call_id, '?')}, got {decision!r}"
        )


class WaitsForPerson(AgentkitError):
    """A tool call cannot finish before a person decides or answers (``waiting`` says
    what for); the tool chain passes it up as a ``Waiting`` outcome, never a failure."""

    waiting: str = "a person"


class HumanInputRequired(WaitsForPerson):
    """A tool, mid-call, needs a person's answer (an MCP server's elicitation).

    Inside an agent loop the run suspends (``awaiting_input``) with the question in
    ``Suspended.questions``; resuming re-runs the call with the answer at hand. Raised
    outside an agent loop, it tells the caller what was asked.
    """

    def __init__(
        self, tool: str, message: str, schema: Mapping[str, Any] | None = None, source: str = ""
    ) -> None:
        self.tool, self.message, self.schema, self.source = tool, message, schema, source
        origin = f" (asked by {source})" if source else ""
        self.waiting = f"elicitation: {message}"
        super().__init__(f"tool {tool!r} needs a person's answer{origin}: {message}")


