"""The demo ``agentkit demo`` runs: a support agent looks an order up, waits for a human
before it refunds, and answers.

Without a model it is scripted and offline: FakeLLM plays the model from ``_SCRIPT``
below. With ``--model SPEC`` (or ``$AGENTKIT_MODEL``) the same agent, tools and chains
run against that model, and the demo approves each gated call itself once it has
printed it. Either way the context comes from ``make_ctx``, so every tool call goes
through the production chain, and the audit log it wrote is printed at the end.

The first part of a run is streamed (``agent.stream``); ``agent.resume`` has no stream,
so what happened after an approval is printed from the transcript it returns.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentkit._examples import EXAMPLE_SPECS
from agentkit.agents import (
    Agent,
    AgentResult,
    FinalEvent,
    StepEvent,
    TextDeltaEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from agentkit.agents.cognition import ReActCognition
from agentkit.core.assembly import make_ctx
from agentkit.core.contracts.errors import AgentkitError
from agentkit.core.contracts.ports import LLM
from agentkit.core.contracts.types import Message, ToolCall
from agentkit.core.policies import DEFAULT_PRICES, Budget
from agentkit.core.runtime import RunContext
from agentkit.core.testing import FakeLLM, Turn
from agentkit.tools import tool

__all__ = ["run_demo", "support_agent"]

_ORDERS: Mapping[str, Mapping[str, Any]] = {
    "A-1042": {"item": "espresso machine", "paid_usd": 129.0, "status": "delivered"},
    "A-1043": {"item": "milk frother", "paid_usd": 24.5, "status": "in transit"},
}


@tool(side_effecting=False, idempotent=True)
async def lookup_order(order_id: str) -> dict[str, Any]:
    """Look up a customer order by its id (e.g. A-1042): the item, what the customer
    paid in US dollars, and its delivery status."""
    order = _ORDERS.get(order_id.strip().upper())
    if order is None:
        raise LookupError(f"no order {order_id!r}; known orders: {sorted(_ORDERS)}")
    return {"order_id": order_id, **order}


@tool(side_effecting=True, requires_approval=True)
async def issue_refund(order_id: str, amount_usd: float, reason: str) -> str:
    """Refund money for an order to the customer's original payment method. Moves real
    money, so a human approves every call; never refund more than the customer paid."""
    return f"refund RF-{order_id} of ${amount_usd:.2f} issued to the original payment method"


_TASK = "Order A-1042 arrived broken. Please refund it in full."
_PROMPT = (
    "You are a customer-support agent. Look an order up before acting on it, refund at "
    "most what the customer paid, and finish with one or two sentences for the customer."
)
_SCRIPT = (
    Turn(
        "Let me look that order up first.",
        (ToolCall("call_1", "lookup_order", {"order_id": "A-1042"}),),
    ),
    Turn(
        "It was delivered and the customer paid $129.00, so I will refund all of it.",
        (
            ToolCall(
                "call_2",
                "issue_refund",
                {"order_id": "A-1042", "amount_usd": 129.0, "reason": "arrived broken"},
            ),
        ),
    ),
    Turn(
        "Refunded $129.00 for order A-1042 (refund RF-A-1042). Sorry it arrived broken!"
    ),
)
_BUDGET_USD = 0.50


def support_agent(model: str = "fake") -> Agent:
    """The demo's support agent on ``model``: it looks orders up and refunds them, each
    refund waiting for a human (evals and examples use it as the demo does)."""
    return Agent(
        "support",
        model,
        _PROMPT,
        cognition=ReActCognition(tools=[lookup_order, issue_refund], max_iterations=8),
    )


def _say(label: str, text: str) -> None:
    lines = text.strip().splitlines() or [""]
    print(f"{label:<8}{lines[0]}")
    for line in lines[1:]:
        print(f"{'':<8}{line}")


def _describe_call(call: ToolCall) -> str:
    arguments = ", ".join(f"{name}={value!r}" for name, value in call.arguments.items())
    return f"{call.name}({arguments})  [{call.id}]"


def _replay(messages: Sequence[Message]) -> None:
    """Print transcript messages the way the streamed part is printed."""
    for message in messages:
        if message.role == "tool":
            _say("error" if message.is_error else "result", message.content)
        elif message.role == "assistant":
            if message.content:
                _say("model", message.content)
            for call in message.tool_calls:
                _say("call", _describe_call(call))


async def _stream(agent: Agent, ctx: RunContext) -> AgentResult:
    """Start the run and print each step as it happens; returns the result."""
    text: list[str] = []

    def flush() -> None:
        if text:
            _say("model", "".join(text))
            text.clear()

    async for event in agent.stream(_TASK, ctx):
        if isinstance(event, TextDeltaEvent):
            text.append(event.text)
        elif isinstance(event, ToolCallEvent):
            flush()
            _say("call", _describe_call(event.call))
        elif isinstance(event, StepEvent):
            flush()
        elif isinstance(event, ToolResultEvent):
            _say("error" if event.is_error else "result", event.content)
        elif isinstance(event, FinalEvent):
            return event.result
    raise RuntimeError("agent.stream ended without a FinalEvent")


async def _approve(
    agent: Agent, ctx: RunContext, result: AgentResult, *, scripted: bool
) -> AgentResult:
    """Approve every held call of a suspended run, resume it, print what followed."""
    suspended = result.suspended
    if suspended is None:
        raise RuntimeError(f"a {result.stop_reason} run has nothing to approve")
    _say("PAUSED", f"run {suspended.run_id} is {suspended.reason}; nothing of this turn ran")
    for call in suspended.pending:
        _say("held", f"{call.id} {call.name} {dict(call.arguments)!r}")
    kind = type(suspended.pending[0].arguments).__name__
    _say("", f"arguments are frozen ({kind}): what is approved is exactly what runs")
    decisions = {call.id: "approve" for call in suspended.pending}
    who = "the demo (a human, in real use)" if scripted else "the demo, automatically (--model)"
    _say("approve", f"by {who}: agent.resume(run_id, {decisions!r}, ctx)")
    resumed = await agent.resume(suspended.run_id, decisions, ctx)
    _replay(resumed.messages[len(result.messages):])
    return resumed


async def _demo(llm: LLM, model: str, *, scripted: bool, store: str | None = None) -> int:
    # meter() refuses a model it has no price for under a money ceiling, so a model the
    # table does not know (a local one, say) runs under the call ceiling alone.
    priced = scripted or DEFAULT_PRICES.price(model) is not None
    budget = Budget(max_cost_usd=_BUDGET_USD if priced else None, max_calls=30)
    if store is None:
        ctx = make_ctx(llm, budget=budget)
        return await _told(model, ctx, budget, scripted=scripted, priced=priced)
    # Kept in a store the console opens: the run (its registry record and checkpoints)
    # and its trace, recorded as a served run's is.
    from agentkit.cli.serve import open_store
    from agentkit.core.runtime.context import new_run_id
    from agentkit.state.traces import TraceRecorder, save_trace

    opened = open_store(store)
    run_id = new_run_id()
    recorder = TraceRecorder(run_id)
    ctx = make_ctx(llm, budget=budget, store=opened, correlation_id=run_id, tracer=recorder)
    try:
        status = await _told(model, ctx, budget, scripted=scripted, priced=priced)
        await save_trace(opened, recorder.trace())
    finally:
        closed = getattr(opened, "close", None)
        if closed is not None and asyncio.iscoroutine(done := closed()):
            await done
    print()
    print(f"agentkit demo: run {run_id} is kept in {store}; open it in the console:")
    print(f"  {_command()} serve agentkit.demo --store {store}")
    print("  then http://127.0.0.1:8000/ in a browser")
    return status


async def _told(model: str, ctx: RunContext, budget: Budget, *, scripted: bool,
                priced: bool) -> int:
    """Run the demo on ``ctx`` and print what happened; the exit status."""
    agent = support_agent(model)
    if scripted:
        print("agentkit demo: SCRIPTED and offline. No model is called: FakeLLM plays the")
        print("model from the script in agentkit/demo.py. With a real model:")
        print(f"  {_pip()} install {_extra('anthropic')}")
        print(f"  ANTHROPIC_API_KEY=... {_command()} demo --model {EXAMPLE_SPECS['anthropic']}")
    else:
        print(f"agentkit demo: live, against {model!r}. Gated calls are approved")
        print("automatically once printed (a real deployment would ask a human).")
    print()
    _say("task", _TASK)
    _say("tools", ", ".join(
        f"{t.name} ({'side-effecting' if t.side_effecting else 'read-only'}"
        f"{', requires approval' if t.requires_approval else ''})"
        for t in (lookup_order, issue_refund)
    ))
    chain = " > ".join(repr(mw).split("(", 1)[0] for mw in ctx.invoker.tool_middleware)
    _say("chain", f"{chain}  (make_ctx's default tool chain)")
    print()

    result = await _stream(agent, ctx)
    while result.stop_reason == "suspended":
        result = await _approve(agent, ctx, result, scripted=scripted)

    print()
    usage = result.usage
    money = f"of a ${_BUDGET_USD:.2f} budget" if priced else "(no price known for this model)"
    _say("final", f"{result.stop_reason} after {result.steps} model calls; "
                  f"{usage.input_tokens} input + {usage.output_tokens} output tokens; "
                  f"${budget.spent_usd:.4f} {money}")
    _say("cache", f"{usage.cache_read_tokens} prompt tokens read from the provider's cache, "
                  f"{usage.cache_write_tokens} written to it")
    if "error" in result.evals:
        _say("", f"stopped by {result.evals['error']}")
    for record in await ctx.store.list("audit"):
        _say("audit", f"{record.tool:<13} {record.decision:<9} [{record.call_id}]")
    return 0 if result.stop_reason == "complete" else 1


def _command() -> str:
    """How this command was run, so the banner's advice works where the user is: the
    ``agentkit`` on PATH, ``.venv/bin/agentkit`` after ``make demo``, or ``python -m``."""
    argv0 = sys.argv[0] if sys.argv else ""
    if Path(argv0).name == "__main__.py" or not argv0:
        return "python -m agentkit"
    here = Path(argv0).resolve()
    on_path = shutil.which("agentkit")
    if on_path is not None and Path(on_path).resolve() == here:
        return "agentkit"
    return _relative(here)


def _pip() -> str:
    """The pip of the environment agentkit runs in."""
    pip = Path(sys.executable).with_name("pip")
    on_path = shutil.which("pip")
    if on_path is not None and Path(on_path).resolve() == pip.resolve():
        return "pip"
    return _relative(pip) if pip.exists() else f"{_relative(Path(sys.executable))} -m pip"


def _relative(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _extra(name: str) -> str:
    """The install argument for an extra: the working tree when agentkit runs from a
    clone (an editable install), the package index otherwise."""
    root = _clone()
    if root is None:
        return f"'agentkit-framework[{name}]'"
    where = "." if root == Path.cwd() else _relative(root)
    return f"-e '{where}[{name}]'"


def _clone() -> Path | None:
    """The repository agentkit runs from, when it is a clone rather than an install."""
    root = Path(__file__).resolve().parents[1]
    if (root / "pyproject.toml").is_file() and (root / "agentkit" / "demo.py").is_file():
        return root
    return None


def _live_llm(spec: str) -> tuple[LLM, str]:
    """The provider's LLM for ``spec`` and the model id to give the Agent."""
    # Imported here: the offline demo needs no provider module at all.
    from agentkit.providers import llm_for, parse_model_spec

    llm: LLM = llm_for(spec)
    model: str = parse_model_spec(spec).model
    return llm, model


def _fail(spec: str, error: BaseException) -> int:
    detail = str(error).strip().splitlines()
    if isinstance(error, AgentkitError | ValueError | ImportError) and detail:
        reason = detail[0]  # ours, or a bad spec or a missing extra: it says it all
    else:
        reason = f"{type(error).__name__}: {detail[0]}" if detail else type(error).__name__
    if isinstance(error, ImportError) and _clone() is not None:
        # The message names the package index; a clone installs its own tree instead.
        extra = spec.partition(":")[0]
        extra = {"vertex": "google"}.get(extra, extra)  # Vertex AI comes with the Gemini SDK
        reason += f" (in this clone: {_pip()} install {_extra(extra)})"
    print(f"agentkit demo: model {spec!r} failed: {reason}", file=sys.stderr)
    return 2


def run_demo(model: str | None = None, store: str | None = None) -> int:
    """Run the demo and return the exit status: scripted and offline without ``model``
    (or ``$AGENTKIT_MODEL``), against that model otherwise. With ``store`` (a
    ``--store`` URL, ``sqlite:///demo.db``) the run and its trace are kept there, for
    ``agentkit serve agentkit.demo --store URL`` to show in the console.

    A model that cannot be set up or fails mid-run is one line on stderr and status 2.
    """
    spec = model or os.environ.get("AGENTKIT_MODEL") or None
    if spec is None:
        return asyncio.run(_demo(FakeLLM.script(_SCRIPT), "fake", scripted=True, store=store))
    try:
        llm, model_id = _live_llm(spec)
        return asyncio.run(_demo(llm, model_id, scripted=False, store=store))
    except BrokenPipeError:
        raise  # stdout's reader left; the command line ends quietly
    except Exception as error:
        return _fail(spec, error)


agents = [support_agent()]
"""What ``agentkit serve agentkit.demo`` serves, to show the demo's runs in the console."""


def context() -> RunContext:
    """The served demo's context: the scripted model, so serving it needs no API key."""
    return make_ctx(FakeLLM.script(_SCRIPT))


if __name__ == "__main__":
    sys.exit(run_demo())
