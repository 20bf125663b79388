"""A run's events as the data of Server-Sent Events."""

from __future__ import annotations

from agentkit.agents import ReasoningDeltaEvent, TextDeltaEvent
from agentkit.serve.wire import event_data


def test_reasoning_deltas_go_out_as_their_own_kind_beside_text_deltas() -> None:
    assert [event_data(ReasoningDeltaEvent("Census first.")),
            event_data(TextDeltaEvent("About 545,000."))] == [
        {"kind": "reasoning_delta", "text": "Census first."},
        {"kind": "text_delta", "text": "About 545,000."},
    ]
