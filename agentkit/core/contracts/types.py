"""Frozen value types that cross the seams: scopes, messages, tool calls, chat requests.

Values are immutable so that what was sent, approved and recorded stays what it was.
Argument objects are frozen deeply (see :mod:`agentkit.core.contracts.frozen`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, Protocol, runtime_checkable

from agentkit.core.contracts._slot_init import slot_init
from agentkit.core.contracts.frozen import FrozenDict, freeze_arguments
from agentkit.core.contracts.media import Media
from agentkit.core.contracts.reasoning import Reasoning, ReasoningDelta, ReasoningPart
from agentkit.core.contracts.settings import NO_SETTINGS as _NO_SETTINGS
from agentkit.core.contracts.settings import ModelSettings, ToolChoice
from agentkit.core.contracts.traits import ToolTraits, traits_of

__all__ = [
    "NO_USAGE",
    "Autonomy",
    "ChatRequest",
    "FinishReason",
    "LLMResult",
    "Message",
    "ModelSettings",
    "Reasoning",
    "ReasoningDelta",
    "ReasoningPart",
    "Role",
    "Scope",
    "StreamEvent",
    "TextDelta",
    "Tool",
    "ToolCall",
    "ToolCallDelta",
    "ToolChoice",
    "ToolContext",
    "ToolRequest",
    "ToolSchema",
    "Usage",
    "Waiting",
]

def _frozen_object(arguments: Any, owner: str) -> FrozenDict[str, Any]:
    if type(arguments) is not FrozenDict and not isinstance(arguments, Mapping):
        raise TypeError(
            f"{owner}.arguments must be a mapping of argument names to values (a JSON "
            f"object), got {type(arguments).__name__}"
        )
    return freeze_arguments(arguments)


Role = Literal["system", "user", "assistant", "tool"]
FinishReason = Literal["stop", "tool_calls", "length", "content_filter", "error", "other"]


class Autonomy(StrEnum):
    """How much a run may do without a human: the tier ``should_gate`` reads."""

    AUTO = "auto"
    """Only tools that declare ``requires_approval=True`` pause."""
    GATED = "gated"
    """Side-effecting tools pause too."""
    MANUAL = "manual"
    """Every tool call pauses."""


@dataclass(frozen=True, slots=True)
class Scope:
    """The tenant a run acts for; idempotency and caches never cross it."""

    org_id: int | str
    """The organisation."""
    domain_id: int | str
    """The domain (workspace, project) inside the organisation."""

    def __post_init__(self) -> None:
        # key() joins the two ids with ':' and every cache and idempotency key embeds
        # it, so an id holding ':' could make two tenants' keys collide.
        for label, value in (("org_id", self.org_id), ("domain_id", self.domain_id)):
            if isinstance(value, bool) or not isinstance(value, int | str):
                raise TypeError(f"Scope.{label} must be an int or a str, got {value!r}")
            if isinstance(value, str) and (not value or ":" in value):
                raise ValueError(
                    f"Scope.{label} must be a non-empty string without ':', got {value!r}"
                )

    def key(self) -> str:
        """A stable string form, e.g. ``"org7:dom1"``; distinct scopes have distinct keys.

        An int id and a string id are written as they are (``Scope("acme", "support")``
        is ``"orgacme:domsupport"``), except a string that spells an int's decimal form,
        which would share that int's key: it is marked with ``#`` (``Scope("1", "2")``
        is ``"org#1:dom#2"``, another tenant than ``Scope(1, 2)``), and a string that
        starts with ``#`` gets a second one, so no string id can spell another's key.
        """
        return _scope_key(self.org_id, self.domain_id)


_INT_TEXT = re.compile(r"0|-?[1-9][0-9]*")
"""What ``str()`` of an int looks like: the strings a key could confuse with one."""


@functools.lru_cache(maxsize=1024, typed=True)
def _scope_key(org_id: int | str, domain_id: int | str) -> str:
    # Every tool call's audit record and idempotency key embeds it: made once per tenant.
    return f"org{_key_part(org_id)}:dom{_key_part(domain_id)}"


def _key_part(value: int | str) -> str:
    if isinstance(value, str) and (value.startswith("#") or _INT_TEXT.fullmatch(value)):
        return "#" + value
    return str(value)


@slot_init
@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens (and, when known, money) a call or a run consumed."""

    input_tokens: int = 0
    """Prompt tokens billed at the full rate."""
    output_tokens: int = 0
    """Generated tokens."""
    cache_read_tokens: int = 0
    """Prompt tokens served from the provider's cache."""
    cache_write_tokens: int = 0
    """Prompt tokens written to the provider's cache."""
    cost_usd: float = 0.0
    """Price of the call in US dollars, when a price is known."""
    requests: int = 0
    """Model requests made."""
    reasoning_tokens: int = 0
    """Tokens the model spent thinking, billed as output but not counted in
    ``output_tokens``; 0 where the provider does not report them apart (Anthropic counts
    thinking in ``output_tokens``)."""
    unpriced_models: tuple[str, ...] = field(default=(), kw_only=True)
    """Models called here whose price was unknown: their tokens are counted, their cost
    is not, so while this is non-empty ``cost_usd`` is only a lower bound."""

    def __add__(self, other: Usage) -> Usage:
        # Adding nothing gives the value itself: frozen, so shared rather than rebuilt.
        if other is NO_USAGE:
            return self
        if self is NO_USAGE:
            return other
        unpriced = self.unpriced_models
        if other.unpriced_models:
            unpriced = tuple(dict.fromkeys((*unpriced, *other.unpriced_models)))
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            cost_usd=self.cost_usd + other.cost_usd,
            requests=self.requests + other.requests,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            unpriced_models=unpriced,
        )

    @property
    def total_tokens(self) -> int:
        """Every token counted, cached or not."""
        return (
            self.input_tokens
            + self.output_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
            + self.reasoning_tokens
        )


NO_USAGE = Usage()
"""No usage: what a run has spent before its first call (one value, shared)."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call the model asked for; its arguments are frozen on construction."""

    id: str
    """The provider's call id; a tool result answers it by this id."""
    name: str
    """The advertised tool name."""
    arguments: Mapping[str, Any] = field(default_factory=FrozenDict)
    """The JSON object the model sent, deeply frozen."""
    arguments_error: str | None = field(default=None, kw_only=True)
    """Set when the model's arguments were not a JSON object (``arguments`` is then
    empty): the call is refused with this reason and the model gets a repair turn."""
    provider_state: Mapping[str, Mapping[str, Any]] = field(
        default_factory=FrozenDict, kw_only=True
    )
    """Provider name to that provider's opaque state for this call, sent back with the
    call and only to that provider (OpenAI's ``fc_`` item id, Gemini's
    ``thought_signature``). Deeply frozen."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "arguments", _frozen_object(self.arguments, "ToolCall"))
        state = self.provider_state
        if not isinstance(state, Mapping) or not all(
            isinstance(k, str) and isinstance(v, Mapping) for k, v in state.items()
        ):
            raise TypeError(
                "ToolCall.provider_state must map provider names to JSON objects, got "
                f"{state!r}"
            )
        object.__setattr__(self, "provider_state", freeze_arguments(state))


@dataclass(frozen=True, slots=True)
class ToolSchema:
    """What the model is shown of a tool: name, description and a JSON Schema."""

    name: str
    """The advertised name."""
    description: str
    """The model-facing description."""
    parameters: Mapping[str, Any]
    """A JSON Schema object for the arguments. Treat it as read-only."""
    native: Mapping[str, Mapping[str, Any]] = field(default_factory=FrozenDict, kw_only=True)
    """Provider name to the provider's own declaration of this tool, used instead of the
    JSON Schema when talking to that provider (e.g. Anthropic's built-in memory tool:
    ``{"anthropic": {"type": "memory_20250818", "name": "memory"}}``)."""


class ToolContext(Protocol):
    """What a tool's ``run()`` is given of the run it serves: who is running and the
    run's reporting; :class:`~agentkit.core.runtime.RunContext` satisfies it.

    The services of a run (model, store, invoker) are the seams' context,
    :class:`~agentkit.core.contracts.ports.Context`; a tool that needs them is handed the
    whole context at run time (``@tool`` passes it to a ``ctx`` parameter). Declared here,
    beside :class:`ToolRequest`, so that the request can name its tool without the values
    importing the seams."""

    correlation_id: str
    """The run id."""
    scope: Scope
    """The tenant the run acts for."""
    autonomy: Autonomy
    """The run's approval policy."""
    depth: int
    """How deeply the run is nested (0 at the top)."""

    def emit(self, kind: str, /, **data: Any) -> None:
        """Send one observation; never raises."""
        ...

    async def progress(
        self, done: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report how far the running tool call has got."""
        ...

    async def log(self, level: str, message: str, /, **data: Any) -> None:
        """Log a line from the running tool call."""
        ...

    def check_cancelled(self) -> None:
        """Raise ``RunCancelled`` if the run was asked to stop."""
        ...


@runtime_checkable
class Tool(Protocol):
    """Anything with these attributes and ``async def run(args, ctx)`` is a tool."""

    name: str
    description: str
    schema: ToolSchema | None
    output_schema: Any
    side_effecting: bool
    requires_approval: bool

    async def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
        """Execute the tool with the model's (frozen) arguments."""
        ...


@slot_init
@dataclass(frozen=True, slots=True)
class ToolRequest:
    """A tool invocation on its way through the invoker's middleware chain.

    The tool object is the declaration of record: middlewares read its :attr:`traits`,
    and ``side_effecting`` from the request *or* the tool, since many call sites leave
    the request's flag at its default.
    """

    name: str
    """The tool name, as the model called it."""
    arguments: Mapping[str, Any] = field(default_factory=FrozenDict)
    """The call's arguments, deeply frozen on construction."""
    tool: Tool | None = None
    """The tool that will run; the terminal of the chain calls ``tool.run``."""
    side_effecting: bool = False
    """Set by a caller that knows the call changes the world; OR-ed with the tool's flag."""
    call_id: str | None = field(default=None, kw_only=True)
    """The model's call id, when the call came from a model."""
    key_step: bool = field(default=False, kw_only=True)
    """A step that changes the world (copied from ``side_effecting`` by the agent loop)."""
    timeout: float | None = field(default=None, kw_only=True)
    """The run's default seconds for a call (``Agent(tool_timeout=)``), applied when the
    tool declares no ``traits.timeout`` of its own."""
    meta: dict[str, Any] = field(default_factory=dict, kw_only=True, compare=False)
    """Per-call signals between middlewares, e.g. ``meta["idempotency"] = "replayed"``."""
    traits: ToolTraits = field(init=False, repr=False, compare=False)
    """The tool's declarations (:func:`~agentkit.core.contracts.traits.traits_of`), read
    once here for every middleware; a request without a tool declares nothing."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "arguments", _frozen_object(self.arguments, "ToolRequest"))
        tool = self.tool
        object.__setattr__(self, "traits", _NO_TOOL if tool is None else traits_of(tool))

    @property
    def is_side_effecting(self) -> bool:
        """True when the request or the tool declares a side effect."""
        return self.side_effecting or self.traits.side_effecting


_NO_TOOL = ToolTraits(side_effecting=False)


@dataclass(frozen=True, slots=True)
class Waiting:
    """What a tool call returns through the tool chain when it waits for a person (a
    question mid-call, a delegated sub-run that suspended): an outcome, not an error.

    The chain's terminal makes it from a :class:`~agentkit.core.contracts.errors.WaitsForPerson`
    the tool raised; middlewares pass it up (``audit()`` records ``suspended``,
    ``tracing()`` ends its span with ``agentkit.waiting``, nothing caches it), and
    ``Invoker.invoke_tool`` raises the error again for callers outside an agent loop.
    """

    what: str
    """What the call waits for, in a few words (the ``agentkit.waiting`` attribute)."""
    cause: BaseException = field(compare=False, repr=False)
    """The :class:`~agentkit.core.contracts.errors.WaitsForPerson` the tool raised."""


@slot_init
@dataclass(frozen=True, slots=True)
class Message:
    """One message of a conversation."""

    role: Role
    """Who speaks: ``system``, ``user``, ``assistant`` or ``tool``."""
    content: str = ""
    """The text."""
    tool_calls: tuple[ToolCall, ...] = ()
    """Tool calls an assistant message asks for."""
    tool_call_id: str | None = None
    """For a ``tool`` message: the call it answers."""
    name: str | None = None
    """For a ``tool`` message: the tool that answered."""
    is_error: bool = False
    """For a ``tool`` message: the result reports a failure."""
    attachments: tuple[Media, ...] = ()
    """Media that go with the text (an image a tool returned, say). Providers that accept
    media render them natively; others show each one's ``describe()`` line."""
    reasoning: tuple[ReasoningPart, ...] = field(default=(), kw_only=True)
    """For an ``assistant`` message: what the model thought before answering, each part
    tagged with its provider, sent back only to that provider."""

    def __post_init__(self) -> None:
        if self.attachments:
            _media_seen[0] = True
        if self.reasoning:
            _check_reasoning(self.reasoning, "Message")
            object.__setattr__(self, "reasoning", tuple(self.reasoning))


_media_seen: list[bool] = [False]
"""True once this process has built a :class:`Message` with attachments (every way of
making one runs ``__post_init__``: the constructor, ``dataclasses.replace``, the store
codec); never set back."""


def media_in_messages() -> bool:
    """Whether any message with attachments was built in this process. Until one was,
    no value can hold media in its messages, so a store that keeps media by reference
    (``agentkit.state.media_refs``) has nothing to look for in a checkpoint."""
    return _media_seen[0]


def _check_reasoning(parts: Any, owner: str) -> None:
    if not isinstance(parts, tuple | list) or not all(
        isinstance(p, ReasoningPart) for p in parts
    ):
        raise TypeError(
            f"{owner}.reasoning must be a tuple of ReasoningPart, got {parts!r}"
        )


@slot_init
@dataclass(frozen=True, slots=True)
class ChatRequest:
    """One model call: the conversation so far and the tools on offer."""

    model: str
    """The model id, e.g. ``"claude-sonnet-4-6"``; ``"fake"`` for FakeLLM."""
    messages: tuple[Message, ...]
    """The conversation, oldest first, without the system prompt."""
    system: str = ""
    """The system prompt."""
    tools: tuple[ToolSchema, ...] = ()
    """The tools advertised to the model, in a stable order."""
    settings: ModelSettings = field(default_factory=lambda: _NO_SETTINGS)
    """Sampling and tool-use settings; a provider refuses one it cannot honour."""
    output_schema: Mapping[str, Any] | None = None
    """A JSON Schema the answer must follow, for structured output."""
    meta: Mapping[str, Any] = field(default_factory=FrozenDict)
    """Provider-specific extras, passed through untouched."""
    agent: str = field(default="", kw_only=True)
    """The agent making the call, when there is one; providers that route prompt caches
    by a key (OpenAI's ``prompt_cache_key``) derive it from this and the run's scope."""
    stable_system: int | None = field(default=None, kw_only=True)
    """How many leading characters of ``system`` are the same for every run of the agent
    (the rest, such as recalled memory, belongs to this run); None: all of them.
    Providers that cache prompts end the cached system prefix there."""

    @property
    def max_tokens(self) -> int | None:
        """``settings.max_tokens``: the upper bound on generated tokens, if set."""
        return self.settings.max_tokens

    @property
    def temperature(self) -> float | None:
        """``settings.temperature``: the sampling temperature, if set."""
        return self.settings.temperature


@slot_init
@dataclass(frozen=True, slots=True)
class LLMResult:
    """The model's answer to one :class:`ChatRequest`."""

    content: str = ""
    """The text the model produced."""
    tool_calls: tuple[ToolCall, ...] = ()
    """Tool calls the model asked for."""
    usage: Usage = field(default_factory=Usage)
    """Tokens and cost of the call."""
    finish_reason: FinishReason = "stop"
    """Why the model stopped."""
    model: str = ""
    """The model that answered, as the provider reports it."""
    reasoning: tuple[ReasoningPart, ...] = field(default=(), kw_only=True)
    """What the model thought, in the provider's order; carried into :attr:`message`."""
    provider_details: Mapping[str, Any] = field(default_factory=FrozenDict, kw_only=True)
    """What the provider said beyond the fields above, in its own words: e.g. Gemini's
    finish reason as sent (``{"finish_reason": "RECITATION"}``) when ``finish_reason``
    is a coarser ``content_filter``."""

    @property
    def message(self) -> Message:
        """The answer as an assistant message for the transcript, reasoning included."""
        return Message(role="assistant", content=self.content, tool_calls=self.tool_calls,
                       reasoning=self.reasoning)


@dataclass(frozen=True, slots=True)
class TextDelta:
    """A piece of streamed model text."""

    text: str
    """The new text."""
    kind: Literal["text"] = "text"


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A piece of a streamed tool call; ``arguments_json`` fragments concatenate."""

    index: int
    """Which call of the turn this piece belongs to."""
    id: str | None = None
    """The call id, on the first piece."""
    name: str | None = None
    """The tool name, on the first piece."""
    arguments_json: str = ""
    """A fragment of the arguments' JSON text."""
    kind: Literal["tool_call"] = "tool_call"


StreamEvent = TextDelta | ToolCallDelta | ReasoningDelta | LLMResult
"""What a streaming model call yields: deltas, then the complete :class:`LLMResult`."""
