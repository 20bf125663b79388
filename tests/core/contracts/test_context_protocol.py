"""The seams name the Context Protocol, and tools the ToolContext Protocol, both in
contracts: RunContext satisfies them, so contracts need not import the runtime."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

USE = """\
from collections.abc import AsyncIterator, Mapping
from typing import Any

from agentkit.core.contracts.ports import LLM, Context, Tool, ToolContext
from agentkit.core.contracts.types import ChatRequest, LLMResult, StreamEvent, ToolSchema
from agentkit.core.testing import make_test_ctx


class Echo:
    name = "echo"
    description = "Echo the arguments back to the caller, unchanged."
    schema: ToolSchema | None = None
    output_schema: Any = None
    side_effecting = False
    requires_approval = False

    async def run(self, args: Mapping[str, Any], ctx: ToolContext | None) -> Any:
        return dict(args)


class Model:
    async def chat(self, request: ChatRequest, ctx: Context) -> LLMResult:
        return LLMResult(content="hi")

    async def stream(self, request: ChatRequest, ctx: Context) -> AsyncIterator[StreamEvent]:
        yield LLMResult(content="hi")


ctx = make_test_ctx()
seam: Context = ctx
tool_ctx: ToolContext = ctx
tool: Tool = Echo()
llm: LLM = Model()
child: Context = ctx.child()
"""


def test_a_run_context_is_the_context_the_seams_and_tools_name(tmp_path: Path) -> None:
    (tmp_path / "use.py").write_text(USE)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"),
         "--no-error-summary", "--hide-error-context", str(tmp_path / "use.py")],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert (result.stdout, result.returncode) == ("", 0)
