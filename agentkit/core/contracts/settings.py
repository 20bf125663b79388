"""ModelSettings: how the model should answer, as one value a request carries.

Re-exported by :mod:`agentkit.core.contracts.types`, where the spec names it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentkit.core.contracts.frozen import FrozenDict, freeze_arguments
from agentkit.core.contracts.reasoning import Reasoning

__all__ = ["NO_SETTINGS", "ModelSettings", "ToolChoice"]

ToolChoice = str
"""``"auto"`` (the model decides), ``"none"`` (no tool calls), ``"required"`` (at least
one tool call) or the name of the one tool the model must call."""

_NUMBER = (int, float)


def _check_number(name: str, value: Any, low: float, high: float | None) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, _NUMBER) or not (
        low <= value and (high is None or value <= high)
    ):
        bounds = f"from {low} to {high}" if high is not None else f"of at least {low}"
        raise ValueError(f"ModelSettings.{name} must be a number {bounds}, got {value!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelSettings:
    """How the model should answer: sampling, length, stop sequences and tool use.

    Every field defaults to None, meaning "not set": the provider's own default
    applies. ``Agent(settings=...)`` gives an agent's defaults, ``run(settings=...)``
    overrides them field by field for one run (see :meth:`merged`). A provider that
    cannot honour a set field refuses the request with :class:`UnsupportedSetting`
    rather than dropping it.
    """

    temperature: float | None = None
    """Sampling temperature (0 is the most deterministic)."""
    max_tokens: int | None = None
    """An upper bound on generated tokens."""
    top_p: float | None = None
    """Nucleus sampling: only tokens within this much probability mass (0 to 1)."""
    stop: Sequence[str] | None = None
    """Sequences that end the answer when generated; a single string is one sequence.
    Kept as a tuple."""
    tool_choice: ToolChoice | None = None
    """``"auto"``, ``"none"``, ``"required"`` or a tool's name."""
    parallel_tool_calls: bool | None = None
    """False asks the model for at most one tool call per turn."""
    seed: int | None = None
    """A seed for providers that sample reproducibly."""
    reasoning: Reasoning | None = None
    """Think before answering (:class:`Reasoning`); refused by a provider or model that
    cannot."""
    extra: Mapping[str, Any] = field(default_factory=FrozenDict)
    """Provider-specific request fields, sent as they are (e.g. ``{"top_k": 40}``)."""

    def __post_init__(self) -> None:
        _check_number("temperature", self.temperature, 0, None)
        _check_number("top_p", self.top_p, 0, 1)
        if self.max_tokens is not None and (
            isinstance(self.max_tokens, bool)
            or not isinstance(self.max_tokens, int)
            or self.max_tokens < 1
        ):
            raise ValueError(
                f"ModelSettings.max_tokens must be a positive int, got {self.max_tokens!r}"
            )
        stop = self.stop
        if isinstance(stop, str):
            stop = (stop,)
        if stop is not None:
            if not isinstance(stop, tuple | list) or not all(
                isinstance(s, str) and s for s in stop
            ):
                raise ValueError(
                    "ModelSettings.stop must be a non-empty string or a sequence of them, "
                    f"got {self.stop!r}"
                )
            object.__setattr__(self, "stop", tuple(stop))
        choice = self.tool_choice
        if choice is not None and (not isinstance(choice, str) or not choice):
            raise ValueError(
                "ModelSettings.tool_choice must be 'auto', 'none', 'required' or a tool "
                f"name, got {choice!r}"
            )
        if self.parallel_tool_calls is not None and not isinstance(
            self.parallel_tool_calls, bool
        ):
            raise ValueError(
                "ModelSettings.parallel_tool_calls must be True, False or None, "
                f"got {self.parallel_tool_calls!r}"
            )
        seed = self.seed
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise ValueError(f"ModelSettings.seed must be an int, got {self.seed!r}")
        if self.reasoning is not None and not isinstance(self.reasoning, Reasoning):
            raise ValueError(
                "ModelSettings.reasoning must be a Reasoning(effort=..., budget_tokens=..., "
                f"summary=...) or None, got {self.reasoning!r}"
            )
        if not isinstance(self.extra, Mapping) or not all(isinstance(k, str) for k in self.extra):
            raise ValueError(
                "ModelSettings.extra must be a mapping of request field names to values, "
                f"got {self.extra!r}"
            )
        object.__setattr__(self, "extra", freeze_arguments(self.extra))

    def merged(self, overrides: ModelSettings | None) -> ModelSettings:
        """These settings with every field ``overrides`` sets taking its place
        (``extra`` merges key by key)."""
        if overrides is None or not overrides.is_set():
            return self
        if not self.is_set():
            return overrides
        return ModelSettings(
            temperature=_pick(overrides.temperature, self.temperature),
            max_tokens=_pick(overrides.max_tokens, self.max_tokens),
            top_p=_pick(overrides.top_p, self.top_p),
            stop=_pick(overrides.stop, self.stop),
            tool_choice=_pick(overrides.tool_choice, self.tool_choice),
            parallel_tool_calls=_pick(overrides.parallel_tool_calls, self.parallel_tool_calls),
            seed=_pick(overrides.seed, self.seed),
            reasoning=_pick(overrides.reasoning, self.reasoning),
            extra={**self.extra, **overrides.extra},
        )

    def is_set(self) -> bool:
        """True when any field is set."""
        return self is not NO_SETTINGS and (
            self.temperature is not None
            or self.max_tokens is not None
            or self.top_p is not None
            or self.stop is not None
            or self.tool_choice is not None
            or self.parallel_tool_calls is not None
            or self.seed is not None
            or self.reasoning is not None
            or bool(self.extra)
        )


def _pick(first: Any, second: Any) -> Any:
    return second if first is None else first


NO_SETTINGS = ModelSettings()
"""The settings of a request that sets none (shared, so telling it apart is cheap)."""
