"""as_tool: anything with ``async run(task, ctx)`` (an Agent, a Workflow) as a tool."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Annotated, Any, Protocol

from agentkit.core.runtime.context import RunContext
from agentkit.tools.function_tool import FunctionTool

__all__ = ["Runnable", "as_tool", "render_result"]


class Runnable(Protocol):
    """Something an outer agent can delegate a task to."""

    async def run(self, task: str, ctx: RunContext) -> Any:
        """Carry out ``task``."""
        ...


def render_result(result: Any) -> str:
    """The default renderer: an agent result's string output; a workflow result's
    terminal outputs as ``key: value`` lines; otherwise ``str(result)``."""
    output = getattr(result, "output", None)
    if isinstance(output, str):
        return output
    terminal = getattr(result, "terminal_outputs", None)
    if isinstance(terminal, Mapping):
        return "\n".join(f"{key}: {value}" for key, value in terminal.items())
    return str(result)


def as_tool(
    runnable: Runnable,
    *,
    name: str,
    description: str | None = None,
    side_effecting: bool,
    idempotent: bool = False,
    requires_approval: bool = False,
    render: Callable[[Any], str] = render_result,
) -> FunctionTool:
    """Wrap ``runnable`` as a tool taking one ``task`` string.

    The sub-run executes on ``ctx.child()``: same run id, budget and cancellation, one
    level deeper (refused past the context's ``max_depth``). Its result is rendered to
    text with ``render``. ``side_effecting`` is required, as for ``@tool``: a sub-agent
    that can act on the world makes its delegation a side effect too.
    """

    async def delegate(
        task: Annotated[str, "the sub-task / goal to run"], ctx: RunContext
    ) -> str:
        return render(await runnable.run(task, ctx.child()))

    text = description if description is not None else getattr(runnable, "description", None)
    return FunctionTool(
        delegate,
        name=name,
        description=text,
        side_effecting=side_effecting,
        idempotent=idempotent,
        requires_approval=requires_approval,
        output_schema=None,
    )
