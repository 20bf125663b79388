"""The floor bench/temporal.py measures agentkit against: the same two-turn run as a
bare Temporal workflow with two activity types (a scripted model call and the
``forecast`` tool), plain JSON payloads, the SDK's default sandbox, and the client's
``execute_workflow`` (start, then wait for the workflow's result)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from temporalio import activity, workflow

WORKFLOW = "bench.bare_run"


@activity.defn(name="bench.bare_model")
async def model(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """First turn: one forecast call; second: the answer (decided from the transcript)."""
    results = [m for m in messages if m["role"] == "tool"]
    if not results:
        return {"role": "assistant", "content": "",
                "tool_calls": [{"id": "c1", "name": "forecast", "arguments": {"city": "Lisbon"}}]}
    return {"role": "assistant", "content": results[0]["content"]}


@activity.defn(name="bench.bare_tool")
async def forecast(city: str) -> str:
    return f"{city}: sunny"


@workflow.defn(name=WORKFLOW)
class BareRun:
    @workflow.run
    async def run(self, task: str) -> str:
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": "You report the weather."},
            {"role": "user", "content": task},
        ]
        timeout = timedelta(seconds=60)
        while True:
            answer = await workflow.execute_activity(model, messages,
                                                     start_to_close_timeout=timeout)
            messages.append(answer)
            if not answer.get("tool_calls"):
                return str(answer["content"])
            for call in answer["tool_calls"]:
                result = await workflow.execute_activity(
                    forecast, call["arguments"]["city"], start_to_close_timeout=timeout)
                messages.append({"role": "tool", "id": call["id"], "content": result})
