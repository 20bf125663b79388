"""as_tool: anything with ``async run(task, ctx)`` (an Agent, a Workflow) as a tool."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Protocol

from agentkit.core.contracts.errors import ToolDefinitionError
from agentkit.core.runtime.context import RunContext
from agentkit.tools.declarations.adapt import thaw
from agentkit.tools.function_tool import FunctionTool

__all__ = ["Runnable", "as_tool", "render_result"]


class Runnable(Protocol):
    """Something an outer agent can delegate a task to."""

    async def run(self, task: str, ctx: RunContext) -> Any:
        """Carry out ``task``."""
        ...


def render_result(result: Any) -> str:
    """The default renderer: an agent result's string output; a workflow result's
    terminal outputs as ``key: value`` lines; otherwise ``str(result)``.

    A structured output is rendered as JSON, and a sub-run that stopped without an
    answer says so (and why) rather than dumping its whole result.
    """
    output = getattr(result, "output", None)
    if isinstance(output, str):
        return output
    terminal = getattr(result, "terminal_outputs", None)
    if isinstance(terminal, Mapping):
        return "\n".join(f"{key}: {value}" for key, value in terminal.items())
    stop_reason = getattr(result, "stop_reason", None)
    if output is not None:
        return json.dumps(thaw(output), ensure_ascii=False, default=_plain)
    if isinstance(stop_reason, str) and stop_reason != "complete":
        return f"The delegated run stopped without an answer (stop reason: {stop_reason})."
    return str(result)


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    return str(value)


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

    An Agent or Workflow runs as a delegated run (its ``run_delegated``): when it
    suspends for a person, the calling run suspends too, and resuming that run continues
    the sub-run (see :mod:`agentkit.agents.nested`).
    """

    async def delegate(
        task: Annotated[str, "the sub-task / goal to run"], ctx: RunContext
    ) -> str:
        delegated = getattr(runnable, "run_delegated", None)
        if callable(delegated):
            # Agents and workflows: a sub-run that must wait for a person suspends the
            # calling run too, and continues on its resume.
            return render(await delegated(task, ctx.child()))
        return render(await runnable.run(task, ctx.child()))

    text = description if description is not None else getattr(runnable, "description", None)
    if text is None:
        raise ToolDefinitionError(
            f"as_tool {name!r}: pass description= saying what the delegate does; the model "
            f"chooses tools by their descriptions, and {runnable!r} has none of its own"
        )
    made = FunctionTool(
        delegate,
        name=name,
        description=text,
        side_effecting=side_effecting,
        idempotent=idempotent,
        requires_approval=requires_approval,
        output_schema=None,
    )
    # Named, so a run can check what it delegates to before it starts (the model specs
    # of agents beneath it, say).
    made.delegate = runnable
    return made
