"""The same two-turn run on the OpenAI Agents SDK's Temporal integration
(``temporalio-openai-agents``): the model call an activity of the plugin, the
``forecast`` tool an activity (``activity_as_tool``), a scripted model that decides
from its input, so any worker can take any step."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from agents import Agent, Runner
from agents.items import ModelResponse
from temporalio import activity, workflow
from temporalio.openai_agents import ModelActivityParameters, OpenAIAgentsPlugin
from temporalio.openai_agents import workflow as agents_workflow
from temporalio.openai_agents.testing import ResponseBuilders, TestModel, TestModelProvider

WORKFLOW = "bench.openai_run"


@activity.defn(name="bench.openai_forecast")
async def forecast(city: str) -> str:
    """Return today's weather forecast for a city."""
    return f"{city}: sunny"


class _TwoTurns(TestModel):
    def __init__(self) -> None:
        super().__init__(lambda: ResponseBuilders.output_message(""))

    async def get_response(self, system_instructions: str | None, input: Any,
                           *args: Any, **kwargs: Any) -> ModelResponse:
        items = input if isinstance(input, list) else []
        results = [i for i in items if isinstance(i, dict)
                   and i.get("type") == "function_call_output"]
        if not results:
            return ResponseBuilders.tool_call('{"city": "Lisbon"}', "forecast", call_id="c1")
        return ResponseBuilders.output_message(str(results[0]["output"]))


def plugin() -> OpenAIAgentsPlugin:
    return OpenAIAgentsPlugin(
        model_params=ModelActivityParameters(start_to_close_timeout=timedelta(seconds=60)),
        model_provider=TestModelProvider(_TwoTurns()),
    )


@workflow.defn(name=WORKFLOW)
class OpenAIRun:
    @workflow.run
    async def run(self, task: str) -> str:
        agent: Agent[None] = Agent(
            name="bench", instructions="You report the weather.",
            tools=[agents_workflow.activity_as_tool(
                forecast, start_to_close_timeout=timedelta(seconds=60))],
        )
        result = await Runner.run(agent, task)
        return str(result.final_output)
