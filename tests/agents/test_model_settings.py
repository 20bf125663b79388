"""ModelSettings: frozen, checked on construction, merged field by field; the agent's
defaults and the run's overrides both reach the ChatRequest, and survive a resume."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from agentkit.agents import Agent, ModelSettings
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.types import ChatRequest, Message, ToolCall
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.state.codec import dumps, loads
from agentkit.state.stores import SQLiteStore
from agentkit.tools import tool


def test_settings_are_frozen_and_stop_is_kept_as_a_tuple() -> None:
    settings = ModelSettings(stop="###", extra={"top_k": [1, 2]})
    assert settings.stop == ("###",)
    assert settings.extra == {"top_k": (1, 2)}
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.temperature = 1.0  # type: ignore[misc]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"temperature": -0.1}, "ModelSettings.temperature must be a number of at least 0, "
                                "got -0.1"),
        ({"top_p": 1.5}, "ModelSettings.top_p must be a number from 0 to 1, got 1.5"),
        ({"max_tokens": 0}, "ModelSettings.max_tokens must be a positive int, got 0"),
        ({"stop": ["ok", ""]}, "ModelSettings.stop must be a non-empty string or a sequence "
                               "of them, got ['ok', '']"),
        ({"tool_choice": ""}, "ModelSettings.tool_choice must be 'auto', 'none', 'required' "
                              "or a tool name, got ''"),
        ({"parallel_tool_calls": "no"}, "ModelSettings.parallel_tool_calls must be True, "
                                        "False or None, got 'no'"),
        ({"seed": 1.5}, "ModelSettings.seed must be an int, got 1.5"),
        ({"extra": {1: 2}}, "ModelSettings.extra must be a mapping of request field names "
                            "to values, got {1: 2}"),
    ],
)
def test_bad_settings_are_refused_naming_what_is_accepted(
    kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError) as caught:
        ModelSettings(**kwargs)  # type: ignore[arg-type]
    assert str(caught.value) == message


def test_overrides_replace_only_the_fields_they_set() -> None:
    agent = ModelSettings(temperature=0.2, max_tokens=500, stop="END", extra={"a": 1, "b": 2})
    run = ModelSettings(temperature=0.9, seed=7, extra={"b": 3})
    assert agent.merged(run) == ModelSettings(
        temperature=0.9, max_tokens=500, stop=("END",), seed=7, extra={"a": 1, "b": 3}
    )
    assert agent.merged(None) is agent
    assert agent.merged(ModelSettings()) is agent


def test_chat_request_reads_max_tokens_and_temperature_from_its_settings() -> None:
    request = ChatRequest(
        model="m", messages=(), settings=ModelSettings(max_tokens=64, temperature=0.5)
    )
    assert (request.max_tokens, request.temperature) == (64, 0.5)
    assert (ChatRequest(model="m", messages=()).max_tokens, ChatRequest(
        model="m", messages=()).temperature) == (None, None)


def test_settings_round_trip_through_the_store_format() -> None:
    settings = ModelSettings(temperature=0.3, stop=("a", "b"), tool_choice="lookup",
                             parallel_tool_calls=False, extra={"top_k": 5})
    assert loads(dumps(settings), key="k") == settings


async def test_agent_defaults_and_run_overrides_reach_the_request() -> None:
    llm = FakeLLM.script([Turn("a"), Turn("b")])
    agent = Agent("tuned", "fake", "p", settings=ModelSettings(temperature=0.2, max_tokens=300))
    await agent.run("one", make_test_ctx(llm))
    await agent.run("two", make_test_ctx(llm), settings=ModelSettings(temperature=1.0, seed=3))
    assert [r.settings for r in llm.requests] == [
        ModelSettings(temperature=0.2, max_tokens=300),
        ModelSettings(temperature=1.0, max_tokens=300, seed=3),
    ]


@tool(side_effecting=True)
def refund(order_id: str) -> str:
    """Refund a customer order in full and return the refund receipt line."""
    return f"refunded {order_id}"


async def test_a_runs_settings_survive_suspension_and_a_resume_from_a_new_store_handle(
    tmp_path: Path,
) -> None:
    path = tmp_path / "runs.db"
    llm = FakeLLM.script([Turn(tool_calls=(ToolCall("c1", "refund", {"order_id": "A"}),)),
                          Turn("Refunded.")])
    agent = Agent("desk", "fake", "p", cognition=ReActCognition([refund]),
                  settings=ModelSettings(max_tokens=100))
    first = SQLiteStore(path)
    await agent.run("refund A", make_test_ctx(llm, store=first, autonomy="gated",
                                              correlation_id="r"),
                    settings=ModelSettings(temperature=0.0))
    first.close()
    second = SQLiteStore(path)
    try:
        result = await agent.resume("r", {"c1": "approve"},
                                    make_test_ctx(llm, store=second, autonomy="gated"),
                                    settings=ModelSettings(seed=9))
    finally:
        second.close()
    assert result.output == "Refunded."
    assert llm.requests[1].settings == ModelSettings(max_tokens=100, temperature=0.0, seed=9)
    assert llm.requests[1].messages[0] == Message("user", "refund A")


def test_agent_settings_must_be_model_settings() -> None:
    with pytest.raises(TypeError) as caught:
        Agent("a", "fake", "p", settings={"temperature": 0})  # type: ignore[arg-type]
    assert str(caught.value) == (
        "Agent(settings=...) takes a ModelSettings, got {'temperature': 0}"
    )


def test_the_agents_package_exports_settings_history_and_their_errors() -> None:
    import agentkit.agents as agents
    from agentkit.agents.history import HistoryPolicy
    from agentkit.core.contracts import errors, state_errors, types

    assert agents.ModelSettings is types.ModelSettings
    assert agents.HistoryPolicy is HistoryPolicy
    assert agents.SessionBusy is state_errors.SessionBusy
    assert agents.UnsupportedSetting is errors.UnsupportedSetting
    assert issubclass(errors.UnsupportedSetting, errors.ProviderError)
    assert issubclass(errors.UnsupportedSetting, ValueError)
