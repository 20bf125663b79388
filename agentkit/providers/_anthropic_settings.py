"""ModelSettings on the Messages API: sampling, tool choice, thinking, structured output."""

from __future__ import annotations

import functools
from typing import Any

from agentkit.core.contracts.errors import UnsupportedSetting
from agentkit.core.contracts.types import ChatRequest
from agentkit.providers._model_families import (
    ANTHROPIC_NO_STRUCTURED_OUTPUT,
    ANTHROPIC_NO_THINKING,
)
from agentkit.providers._settings import extra_fields, tool_choice
from agentkit.providers._strict import strict_schema

__all__ = ["DEFAULT_MAX_TOKENS", "apply_settings"]

DEFAULT_MAX_TOKENS = 4096
"""Anthropic requires ``max_tokens``; this is sent when the request sets none."""

# Sampling fields the Messages API (as its SDK defines it) does not take.
_NO_SUCH_PARAMETER = ("temperature", "top_p", "seed")


def apply_settings(params: dict[str, Any], request: ChatRequest, provider: str) -> None:
    """The request's settings and output schema as Messages API fields (``params``,
    changed in place); what the API cannot take is :class:`UnsupportedSetting`."""
    _structured_output(params, request)
    settings = request.settings
    for name in _NO_SUCH_PARAMETER:
        if getattr(settings, name) is not None:
            raise UnsupportedSetting(
                provider,
                name,
                f"the Messages API has no {name} parameter; if your model still accepts "
                f"one, send it as ModelSettings(extra={{{name!r}: ...}})",
            )
    if settings.stop:
        params["stop_sequences"] = list(settings.stop)
    choice = tool_choice(request, provider)
    parallel = settings.parallel_tool_calls
    if choice is not None or (parallel is not None and request.tools):
        wire: dict[str, Any] = {"type": "auto"}
        if choice == "none":
            wire = {"type": "none"}
        elif choice == "required":
            wire = {"type": "any"}
        elif choice not in (None, "auto"):
            wire = {"type": "tool", "name": choice}
        if parallel is not None and wire["type"] != "none":
            wire["disable_parallel_tool_use"] = not parallel
        params["tool_choice"] = wire
    if settings.reasoning is not None:
        _thinking(params, request, choice, provider)
    if settings.extra:
        params["extra_body"] = extra_fields(settings.extra, params, provider)




@functools.cache
def _sdk_takes_output_config() -> bool:
    """True when the installed SDK has the ``output_config`` request field."""
    try:
        from anthropic.types import message_create_params
    except ImportError:
        return False
    return "output_config" in message_create_params.MessageCreateParamsBase.__annotations__


def _structured_output(params: dict[str, Any], request: ChatRequest) -> None:
    """``Agent(output=...)``'s schema as ``output_config.format``, where the model, the
    SDK and the schema allow it; elsewhere agentkit's validation and repair turn alone
    hold the answer to the schema (they apply either way)."""
    model = params["model"]
    if request.output_schema is None or model.startswith(ANTHROPIC_NO_STRUCTURED_OUTPUT):
        return
    schema = strict_schema(request.output_schema)
    if schema is not None and _sdk_takes_output_config():
        params["output_config"] = {"format": {"type": "json_schema", "schema": schema}}


# Thinking budgets for Reasoning(effort=...) without budget_tokens: the API's minimum,
# then four and sixteen times it (Anthropic's guide suggests starting small and raising).
_BUDGETS = {"low": 1024, "medium": 4096, "high": 16384}
_MIN_BUDGET = 1024


def _thinking(params: dict[str, Any], request: ChatRequest, choice: str | None,
              provider: str) -> None:
    reasoning = request.settings.reasoning
    assert reasoning is not None
    model = params["model"]
    if model.startswith(ANTHROPIC_NO_THINKING):
        raise UnsupportedSetting(
            provider, "reasoning",
            f"{model} has no extended thinking (Claude 3.7 Sonnet and later models have it)",
        )
    budget = reasoning.budget_tokens or _BUDGETS[reasoning.effort]
    if budget < _MIN_BUDGET:
        raise UnsupportedSetting(
            provider, "reasoning",
            f"budget_tokens={budget} is below the Messages API's minimum thinking budget "
            f"of {_MIN_BUDGET} tokens",
        )
    if request.max_tokens is None:
        params["max_tokens"] = budget + DEFAULT_MAX_TOKENS  # the budget counts in max_tokens
    elif request.max_tokens <= budget:
        raise UnsupportedSetting(
            provider, "reasoning",
            f"a thinking budget of {budget} tokens must be less than max_tokens "
            f"({request.max_tokens}); raise max_tokens or lower Reasoning.budget_tokens",
        )
    if choice not in (None, "auto", "none"):
        raise UnsupportedSetting(
            provider, "tool_choice",
            f"{choice!r} forces a tool call, which the Messages API refuses while thinking "
            "is on; use 'auto' or 'none', or leave ModelSettings.reasoning unset",
        )
    thinking: dict[str, Any] = {"type": "enabled", "budget_tokens": budget}
    if reasoning.summary:
        thinking["display"] = "summarized"
    params["thinking"] = thinking
