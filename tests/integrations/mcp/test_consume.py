"""Using the tools of a real MCP server (written with the official SDK) from agentkit."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from agentkit.agents import Agent, Suspended
from agentkit.agents.cognition import ReActCognition
from agentkit.core.contracts.errors import RunCancelled
from agentkit.core.contracts.media import Image
from agentkit.core.contracts.types import ToolCall, ToolRequest
from agentkit.core.policies import memoize
from agentkit.core.testing import FakeLLM, Turn, make_test_ctx
from agentkit.integrations.mcp import (
    MCPConnectionError,
    MCPResources,
    MCPTimeoutError,
    MCPTool,
    MCPToolError,
    connect_http,
    connect_stdio,
)
from agentkit.state.memory import MemoryItem, MemorySource
from agentkit.tools import Tool, ToolArgumentError, ToolRegistry, ToolTraits

LIMIT = 20  # seconds any one test may take


def by_name(tools: Sequence[MCPTool]) -> dict[str, MCPTool]:
    return {tool.name: tool for tool in tools}


async def wait_for_line(path: Path, line: str, deadline: float = 5.0) -> None:
    async with asyncio.timeout(deadline):
        while line not in path.read_text(encoding="utf-8").splitlines():
            await asyncio.sleep(0.02)


async def test_react_agent_uses_a_tool_of_an_sdk_server_over_stdio(
    sdk_server: list[str],
) -> None:
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "forecast", {"city": "Lisbon", "days": 2}),)),
        Turn(content="Sunny in Lisbon for the next two days."),
    ])
    async with asyncio.timeout(LIMIT), connect_stdio(sdk_server) as session:
        agent = Agent(
            name="forecaster",
            model="fake",
            prompt="You answer weather questions.",
            cognition=ReActCognition(tools=await session.list_tools()),
        )
        result = await agent.run("Weather in Lisbon?", make_test_ctx(llm=llm))

    assert result.output == "Sunny in Lisbon for the next two days."
    tool_message = result.messages[2]
    assert (tool_message.role, tool_message.content, tool_message.is_error) == (
        "tool", '{"result": "Lisbon: sunny for 2 day(s)"}', False
    )
    advertised = {schema.name for schema in llm.requests[0].tools}
    assert advertised == {"broken", "crash", "forecast", "lookups", "radar", "set_alert", "slow"}


async def test_tools_keep_the_servers_schema_and_description(sdk_server: list[str]) -> None:
    async with asyncio.timeout(LIMIT), connect_stdio(sdk_server, prefix="wx_") as session:
        tools = by_name(await session.list_tools())
        listed = {t.name: t for t in (await session.client.list_tools()).tools}

    forecast = tools["wx_forecast"]
    assert isinstance(forecast, Tool)
    assert forecast.remote_name == "forecast"
    assert forecast.server == "weather"
    assert forecast.description == listed["forecast"].description
    assert forecast.description == (
        "Return a short weather forecast for a city over the next few days."
    )
    assert forecast.schema is not None
    assert forecast.schema.name == "wx_forecast"
    assert dict(forecast.schema.parameters) == listed["forecast"].input_schema
    assert forecast.output_schema == listed["forecast"].output_schema
    assert forecast.requires_approval is False
    assert sorted(tools) == [
        "wx_broken", "wx_crash", "wx_forecast", "wx_lookups", "wx_radar", "wx_set_alert", "wx_slow"
    ]
    assert ToolRegistry.from_tools(tools.values()).names() == tuple(sorted(tools))


async def test_side_effects_fail_closed_unless_the_server_is_trusted(
    sdk_server: list[str],
) -> None:
    async with asyncio.timeout(LIMIT):
        async with connect_stdio(sdk_server) as session:
            untrusted = by_name(await session.list_tools())
        async with connect_stdio(sdk_server, trust_hints=True) as session:
            trusted = by_name(await session.list_tools())

    flags = {name: (t.side_effecting, t.idempotent) for name, t in untrusted.items()}
    assert flags == dict.fromkeys(untrusted, (True, False))
    assert {name: (t.side_effecting, t.idempotent) for name, t in trusted.items()} == {
        "forecast": (False, True),  # readOnlyHint and idempotentHint
        "lookups": (False, True),  # readOnlyHint: a read is safe to repeat
        "set_alert": (True, True),  # idempotentHint, but it writes
        "radar": (True, False),  # no annotations: the MCP defaults
        "broken": (True, False),
        "slow": (True, False),
        "crash": (True, False),
    }


async def test_an_mcp_tools_traits_hold_what_its_hints_allow(sdk_server: list[str]) -> None:
    async with asyncio.timeout(LIMIT):
        async with connect_stdio(sdk_server) as session:
            untrusted = by_name(await session.list_tools())
        async with connect_stdio(sdk_server, trust_hints=True) as session:
            trusted = by_name(await session.list_tools())

    assert untrusted["forecast"].traits == ToolTraits(side_effecting=True)
    assert trusted["forecast"].traits == ToolTraits(side_effecting=False, idempotent=True)
    assert trusted["set_alert"].traits == ToolTraits(side_effecting=True, idempotent=True)


async def test_gated_autonomy_pauses_an_untrusted_servers_read_only_tool(
    sdk_server: list[str],
) -> None:
    def script() -> FakeLLM:
        return FakeLLM.script([
            Turn(tool_calls=(ToolCall("c1", "forecast", {"city": "Porto"}),)),
            Turn(content="Sunny in Porto."),
        ])

    async with asyncio.timeout(LIMIT):
        async with connect_stdio(sdk_server) as session:
            agent = Agent(name="wx", model="fake", prompt="p",
                          cognition=ReActCognition(tools=await session.list_tools()))
            paused = await agent.run("Porto?", make_test_ctx(llm=script(), autonomy="gated"))
        async with connect_stdio(sdk_server, trust_hints=True) as session:
            agent = Agent(name="wx", model="fake", prompt="p",
                          cognition=ReActCognition(tools=await session.list_tools()))
            ran = await agent.run("Porto?", make_test_ctx(llm=script(), autonomy="gated"))

    suspended = paused.evals["suspended"]
    assert isinstance(suspended, Suspended)
    assert paused.stop_reason == "suspended"
    assert [(c.name, dict(c.arguments)) for c in suspended.pending] == [
        ("forecast", {"city": "Porto"})
    ]
    assert (ran.stop_reason, ran.output) == ("complete", "Sunny in Porto.")


async def test_memoize_never_caches_an_untrusted_servers_tool(sdk_server: list[str]) -> None:
    async def call_lookups_twice(trust: bool) -> list[object]:
        async with connect_stdio(sdk_server, trust_hints=trust) as session:
            lookups = by_name(await session.list_tools())["lookups"]
            ctx = make_test_ctx(tool_middleware=[memoize()])
            request = ToolRequest("lookups", {}, lookups)
            return [await ctx.invoker.invoke_tool(request, ctx) for _ in range(2)]

    async with asyncio.timeout(LIMIT):
        assert await call_lookups_twice(trust=False) == [{"result": 1}, {"result": 2}]
        assert await call_lookups_twice(trust=True) == [{"result": 1}, {"result": 1}]


async def test_bad_arguments_are_refused_before_anything_is_sent(
    sdk_server: list[str], effects: Path
) -> None:
    async with asyncio.timeout(LIMIT), connect_stdio(
        sdk_server, env={"EFFECTS_FILE": str(effects)}
    ) as session:
        tools = by_name(await session.list_tools())
        with pytest.raises(ToolArgumentError) as refused:
            await tools["set_alert"].run({"city": 7, "lvl": "red"}, make_test_ctx())
        with pytest.raises(ToolArgumentError) as wrong_type:
            await tools["forecast"].run({"city": "Lisbon", "days": "two"}, make_test_ctx())

    assert str(refused.value) == (
        "tool 'set_alert' call rejected: missing required argument(s) ['level']; unexpected "
        "argument(s) ['lvl']; invalid argument(s): city: expected a string, got integer 7. "
        "Accepted arguments: ['city', 'level']"
    )
    assert refused.value.missing == ("level",)
    assert refused.value.unexpected == ("lvl",)
    assert wrong_type.value.invalid == (("days", "expected an integer, got string 'two'"),)
    assert effects.read_text() == ""


async def test_an_argument_error_is_a_repair_turn_for_the_model(
    sdk_server: list[str], effects: Path
) -> None:
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "set_alert", {"city": "Faro"}),)),
        Turn(tool_calls=(ToolCall("c2", "set_alert", {"city": "Faro", "level": "amber"}),)),
        Turn(content="Amber alert set for Faro."),
    ])
    async with asyncio.timeout(LIMIT), connect_stdio(
        sdk_server, env={"EFFECTS_FILE": str(effects)}
    ) as session:
        agent = Agent(name="wx", model="fake", prompt="p",
                      cognition=ReActCognition(tools=await session.list_tools()))
        result = await agent.run("Alert Faro", make_test_ctx(llm=llm))

    repair = result.messages[2]
    assert repair.is_error
    assert repair.content == (
        "tool 'set_alert' call rejected: missing required argument(s) ['level']. "
        "Accepted arguments: ['city', 'level']"
    )
    assert result.messages[4].content == '{"city": "Faro", "level": "amber"}'
    assert result.output == "Amber alert set for Faro."
    assert effects.read_text().splitlines() == ["alert Faro amber"]


async def test_results_text_and_images_described_and_errors_raised(
    sdk_server: list[str],
) -> None:
    async with asyncio.timeout(LIMIT), connect_stdio(sdk_server) as session:
        tools = by_name(await session.list_tools())
        ctx = make_test_ctx()
        radar = await tools["radar"].run({"city": "Braga"}, ctx)
        alert = await tools["set_alert"].run({"city": "Braga", "level": "red"}, ctx)
        with pytest.raises(MCPToolError) as failed:
            await tools["broken"].run({"city": "Braga"}, ctx)

    assert radar == ["Radar for Braga", Image(b"\x89PNG" + bytes(96), "image/png")]
    assert alert == {"city": "Braga", "level": "red"}
    assert str(failed.value) == (
        "tool 'broken' on MCP server 'weather' reported an error: "
        "Error executing tool broken: upstream weather service refused Braga"
    )
    assert (failed.value.tool, failed.value.server) == ("broken", "weather")


async def test_cancelling_the_run_task_cancels_the_request_on_the_server(
    sdk_server: list[str], effects: Path
) -> None:
    async with asyncio.timeout(LIMIT), connect_stdio(
        sdk_server, env={"EFFECTS_FILE": str(effects)}
    ) as session:
        slow = by_name(await session.list_tools())["slow"]
        call = asyncio.ensure_future(slow.run({"seconds": 30}, make_test_ctx()))
        await wait_for_line(effects, "started")
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await wait_for_line(effects, "cancelled")
        assert await by_name(await session.list_tools())["forecast"].run(
            {"city": "Evora"}, make_test_ctx()
        ) == {"result": "Evora: sunny for 1 day(s)"}


async def test_cancelling_the_run_token_cancels_the_request_on_the_server(
    sdk_server: list[str], effects: Path
) -> None:
    async with asyncio.timeout(LIMIT), connect_stdio(
        sdk_server, env={"EFFECTS_FILE": str(effects)}
    ) as session:
        slow = by_name(await session.list_tools())["slow"]
        ctx = make_test_ctx()

        async def press_stop() -> None:
            await wait_for_line(effects, "started")
            ctx.cancel.cancel("user pressed stop")

        stopper = asyncio.ensure_future(press_stop())
        with pytest.raises(RunCancelled, match="user pressed stop"):
            await slow.run({"seconds": 30}, ctx)
        await stopper
        await wait_for_line(effects, "cancelled")


async def test_a_slow_call_times_out_with_a_clear_error(
    sdk_server: list[str], effects: Path
) -> None:
    async with asyncio.timeout(LIMIT), connect_stdio(
        sdk_server, env={"EFFECTS_FILE": str(effects)}, call_timeout=1.0
    ) as session:
        slow = by_name(await session.list_tools())["slow"]
        with pytest.raises(MCPTimeoutError) as timed_out:
            await slow.run({"seconds": 30}, make_test_ctx())
        await wait_for_line(effects, "cancelled")

    assert effects.read_text().splitlines() == ["started", "cancelled"]
    assert str(timed_out.value) == (
        "MCP server 'weather' did not answer the call to 'slow' within 1s, so the request "
        "was cancelled; whether it took effect is unknown. Raise call_timeout= on "
        "connect_stdio()/connect_http() if the tool is legitimately slow"
    )
    assert isinstance(timed_out.value, TimeoutError)


async def test_a_tool_timeout_cancels_the_call_on_the_server(
    sdk_server: list[str], effects: Path
) -> None:
    """Agent(tool_timeout=) stops an MCP call with the protocol's cancellation; the
    call may have acted (the server's tools are side-effecting unless trusted), so the
    model is told its outcome is unknown."""
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "slow", {"seconds": 30}),)),
        Turn(content="It did not finish."),
    ])
    async with asyncio.timeout(LIMIT), connect_stdio(
        sdk_server, env={"EFFECTS_FILE": str(effects)}
    ) as session:
        agent = Agent(name="a", model="fake", prompt="p", tool_timeout=0.5,
                      cognition=ReActCognition(tools=await session.list_tools()))
        result = await agent.run("go", make_test_ctx(llm=llm))
        await wait_for_line(effects, "cancelled")

    assert effects.read_text().splitlines() == ["started", "cancelled"]
    assert result.output == "It did not finish."
    assert result.messages[2].content.startswith(
        "The outcome of this call to 'slow' is unknown: it ran past its timeout of 0.5s and "
        "was stopped before it reported a result"
    )


async def test_a_server_that_dies_mid_run_is_a_tool_error_not_a_hang(
    sdk_server: list[str],
) -> None:
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "crash", {}),)),
        Turn(tool_calls=(ToolCall("c2", "forecast", {"city": "Beja"}),)),
        Turn(content="The weather service is down."),
    ])
    async with asyncio.timeout(LIMIT), connect_stdio(sdk_server) as session:
        agent = Agent(name="wx", model="fake", prompt="p",
                      cognition=ReActCognition(tools=await session.list_tools()))
        result = await agent.run("Beja?", make_test_ctx(llm=llm))

    crashed, after = result.messages[2], result.messages[4]
    assert crashed.is_error and after.is_error
    assert crashed.content == (
        "MCP server 'weather' closed the connection during the call to 'crash' (the server "
        "exited or the network dropped), so whether it took effect is unknown. Connect again "
        "to keep using the server"
    )
    assert after.content.startswith("MCP server 'weather' closed the connection")
    assert result.output == "The weather service is down."


async def test_a_command_that_cannot_start_is_a_connection_error() -> None:
    with pytest.raises(MCPConnectionError) as missing:
        async with asyncio.timeout(LIMIT), connect_stdio(["no-such-mcp-server-xyz"]):
            pass
    with pytest.raises(MCPConnectionError) as exits:
        async with asyncio.timeout(LIMIT), connect_stdio([sys.executable, "-c", "pass"]):
            pass

    assert str(missing.value).startswith(
        "could not connect to MCP server 'no-such-mcp-server-xyz': FileNotFoundError:"
    )
    assert str(exits.value) == (
        f"could not connect to MCP server '{sys.executable} -c pass': "
        "Connection closed (MCP error -32000)"
    )


async def test_a_server_that_never_answers_the_handshake_times_out() -> None:
    silent = [sys.executable, "-c", "import sys; sys.stdin.read()"]
    with pytest.raises(MCPTimeoutError) as timed_out:
        async with asyncio.timeout(LIMIT), connect_stdio(silent, name="silent", timeout=0.5):
            pass
    assert str(timed_out.value).startswith(
        "MCP server 'silent' did not answer the connection handshake within 0.5s"
    )


async def test_nothing_listening_at_the_url_is_a_connection_error() -> None:
    with pytest.raises(MCPConnectionError) as refused:
        async with asyncio.timeout(LIMIT), connect_http("http://127.0.0.1:9/mcp"):
            pass
    assert str(refused.value) == (
        "could not connect to MCP server 'http://127.0.0.1:9/mcp': "
        "ConnectError: All connection attempts failed"
    )


async def test_react_agent_uses_an_sdk_server_over_streamable_http(
    sdk_server: list[str], http_server: Callable[[Sequence[str]], str], effects: Path
) -> None:
    url = http_server([*sdk_server, "--http"])
    llm = FakeLLM.script([
        Turn(tool_calls=(ToolCall("c1", "set_alert", {"city": "Porto", "level": "red"}),)),
        Turn(tool_calls=(ToolCall("c2", "crash", {}),)),
        Turn(content="Red alert set; the service then went down."),
    ])
    async with asyncio.timeout(LIMIT), connect_http(url, headers={"X-Team": "wx"}) as session:
        agent = Agent(name="wx", model="fake", prompt="p",
                      cognition=ReActCognition(tools=await session.list_tools()))
        result = await agent.run("Alert Porto", make_test_ctx(llm=llm))

    assert result.messages[2].content == '{"city": "Porto", "level": "red"}'
    assert result.messages[4].is_error
    assert result.messages[4].content.startswith("MCP server 'weather' closed the connection")
    assert result.output == "Red alert set; the service then went down."
    assert effects.read_text().splitlines() == ["alert Porto red"]


async def test_a_servers_resources_are_a_memory_source(sdk_server: list[str]) -> None:
    async with asyncio.timeout(LIMIT), connect_stdio(sdk_server) as session:
        memory = MCPResources(session)
        assert isinstance(memory, MemorySource)
        items = await memory.query("Rui and coffee", 5, None)
        only_deploys = await MCPResources(session, uris=["notes://deploys"]).query(
            "coffee", 5, None
        )
        nothing = await memory.query("kubernetes", 5, None)

    assert items == (
        MemoryItem("Espresso for Ana, a flat white with oat milk for Rui.", "notes://coffee", 1.0),
        MemoryItem(
            "Deploys happen on Tuesdays after the coffee break; freeze on Fridays.",
            "notes://deploys",
            0.5,
        ),
    )
    assert [item.source for item in only_deploys] == ["notes://deploys"]
    assert nothing == ()


async def test_an_agent_recalls_from_a_servers_resources(sdk_server: list[str]) -> None:
    llm = FakeLLM.script([Turn(content="A flat white with oat milk.")])
    async with asyncio.timeout(LIMIT), connect_stdio(sdk_server) as session:
        agent = Agent(name="barista", model="fake", prompt="You make the team's coffee.",
                      memory=MCPResources(session, uris=["notes://coffee"]))
        result = await agent.run("What coffee does Rui drink?", make_test_ctx(llm=llm))

    assert result.output == "A flat white with oat milk."
    assert llm.requests[0].system.endswith(
        '<memory source="notes://coffee">\n'
        "Espresso for Ana, a flat white with oat milk for Rui.\n"
        "</memory>\n</memories>"
    )
