"""Real MCP servers for the tests: scripts written to tmp_path, run with sys.executable.

Every server is a subprocess that is stopped when its test ends, and every wait is
bounded: readiness is polled with a deadline, never slept on.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

SDK_SERVER = '''
"""A small MCP server written with the official SDK (MCPServer, ex-FastMCP)."""
import base64
import os
import sys
from pathlib import Path

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ImageContent, TextContent, ToolAnnotations

server = MCPServer("weather")
EFFECTS = Path(os.environ.get("EFFECTS_FILE", os.devnull))
COUNTS = {"lookups": 0}


@server.tool(annotations=ToolAnnotations(read_only_hint=True, idempotent_hint=True))
def forecast(city: str, days: int = 1) -> str:
    """Return a short weather forecast for a city over the next few days."""
    return f"{city}: sunny for {days} day(s)"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def lookups() -> int:
    """Count how many times this tool has been called on this server."""
    COUNTS["lookups"] += 1
    return COUNTS["lookups"]


@server.tool(annotations=ToolAnnotations(read_only_hint=False, idempotent_hint=True))
def set_alert(city: str, level: str) -> dict[str, str]:
    """Set the weather alert level for a city and return the new alert."""
    with EFFECTS.open("a") as effects:
        effects.write(f"alert {city} {level}\\n")
    return {"city": city, "level": level}


@server.tool()
def radar(city: str) -> list[TextContent | ImageContent]:
    """Return the rain radar image for a city, with a caption."""
    png = base64.b64encode(b"\\x89PNG" + bytes(96)).decode()
    return [TextContent(text=f"Radar for {city}"), ImageContent(data=png, mime_type="image/png")]


@server.tool()
def broken(city: str) -> str:
    """Fail on purpose, the way a misconfigured upstream service would."""
    raise ToolError(f"upstream weather service refused {city}")


@server.tool()
async def slow(seconds: float) -> str:
    """Wait for a number of seconds, then say so; records its start and a cancellation."""
    with EFFECTS.open("a") as effects:
        effects.write("started\\n")
    try:
        await anyio.sleep(seconds)
    except BaseException:
        with EFFECTS.open("a") as effects:
            effects.write("cancelled\\n")
        raise
    return "done waiting"


@server.tool()
def crash() -> str:
    """Exit the server process abruptly, mid-call, the way a crash would."""
    os._exit(3)


@server.resource("notes://coffee", description="How the team takes its coffee")
def coffee() -> str:
    return "Espresso for Ana, a flat white with oat milk for Rui."


@server.resource("notes://deploys", description="Deployment checklist")
def deploys() -> str:
    return "Deploys happen on Tuesdays after the coffee break; freeze on Fridays."


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
'''

AGENTKIT_TOOLS = '''
"""agentkit tools, to be served over MCP."""
import os
from dataclasses import dataclass
from pathlib import Path

from agentkit.tools import tool

EFFECTS = Path(os.environ.get("EFFECTS_FILE", os.devnull))
print("this line goes to stderr, not into the protocol")


@dataclass
class Quote:
    symbol: str
    price: float


@tool(side_effecting=False, idempotent=True)
def city_population(city: str) -> int:
    """Look up the most recent census population for a named city."""
    return {"lisbon": 545_000, "porto": 231_000}.get(city.lower(), 0)


@tool(side_effecting=True)
def send_email(to: str, body: str) -> str:
    """Send one email to a single recipient and return the provider message id."""
    with EFFECTS.open("a") as effects:
        effects.write(f"email {to}\\n")
    return f"queued for {to}"


@tool(side_effecting=True, requires_approval=True)
def refund(order_id: str, amount_usd: float) -> str:
    """Issue a refund against a customer order and return the confirmation id."""
    with EFFECTS.open("a") as effects:
        effects.write(f"refund {order_id}\\n")
    return f"refunded {amount_usd} on {order_id}"


@tool(side_effecting=False, idempotent=True)
def get_quote(symbol: str) -> Quote:
    """Return the latest traded price for a stock ticker symbol."""
    return Quote(symbol=symbol, price=12.5)
'''


def _write(directory: Path, name: str, source: str) -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(source).lstrip(), encoding="utf-8")
    return path


@pytest.fixture
def script(tmp_path: Path) -> Callable[[str, str], Path]:
    """Write a script into tmp_path: ``script("name.py", source)`` returns its path."""
    return lambda name, source: _write(tmp_path, name, source)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes], deadline: float = 20.0) -> None:
    """Return once something accepts connections on 127.0.0.1:port (uvicorn binds only
    after the app's startup); fail if the process exits or the deadline passes."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if process.poll() is not None:
            raise AssertionError(f"server exited with {process.returncode} before listening")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"nothing listened on 127.0.0.1:{port} within {deadline}s")


@pytest.fixture
def effects(tmp_path: Path) -> Path:
    """A file the servers' side-effecting tools append one line to per real effect."""
    path = tmp_path / "effects.log"
    path.touch()
    return path


@pytest.fixture
def sdk_server(tmp_path: Path) -> list[str]:
    """The command line of the official-SDK server, over stdio."""
    return [sys.executable, str(_write(tmp_path, "weather_server.py", SDK_SERVER))]


@pytest.fixture
def agentkit_tools(tmp_path: Path) -> Path:
    """A module of @tool functions, for `agentkit mcp serve`."""
    return _write(tmp_path, "shop_tools.py", AGENTKIT_TOOLS)


@pytest.fixture
def http_server(effects: Path) -> Iterator[Callable[[Sequence[str]], str]]:
    """Start an HTTP MCP server subprocess and return its URL. ``{port}`` in an argument
    is replaced by a free port (appended when no argument has it). Every server started
    is stopped at the end of the test."""
    started: list[subprocess.Popen[bytes]] = []

    def start(command: Sequence[str]) -> str:
        port = free_port()
        argv = [arg.replace("{port}", str(port)) for arg in command]
        if argv == list(command):
            argv.append(str(port))
        process = subprocess.Popen(
            argv,
            env={**os.environ, "EFFECTS_FILE": str(effects)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        started.append(process)
        wait_for_port(port, process)
        return f"http://127.0.0.1:{port}/mcp"

    yield start
    for process in started:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
