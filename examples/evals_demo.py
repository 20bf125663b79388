"""An eval of the demo agent (``agentkit demo``), offline: three cases, scripted models.

Run it from a clone: ``.venv/bin/python examples/evals_demo.py``. The agent is the
demo's own (``agentkit.demo.support_agent``), on ``make_ctx``'s production chains; a
FakeLLM per case plays the model. The refund case must stop for a person (the demo's
refund tool requires approval), so it is scored with ``Suspended`` instead of by its
answer. The exit status is 0 when every case passes, as ``agentkit eval`` gives.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator, Sequence

from agentkit import make_ctx
from agentkit.core.contracts.types import ToolCall
from agentkit.core.runtime import RunContext
from agentkit.core.testing import FakeLLM, Turn
from agentkit.demo import support_agent
from agentkit.evals import (
    Case,
    Contains,
    Dataset,
    EvalContext,
    MaxSteps,
    Score,
    SideEffectsAtMost,
    Suspended,
    ToolTrajectory,
)


def lookup(order_id: str) -> Turn:
    return Turn(tool_calls=(ToolCall("c1", "lookup_order", {"order_id": order_id}),))


SCRIPTS: Sequence[Sequence[Turn]] = (
    (lookup("A-1042"),
     Turn(tool_calls=(ToolCall("c2", "issue_refund", {
         "order_id": "A-1042", "amount_usd": 129.0, "reason": "arrived broken"}),))),
    (lookup("A-1043"), Turn("Your milk frother (A-1043) is in transit.")),
    (lookup("Z-9"), Turn("I could not find order Z-9; please check the id.")),
)


def answered_or_waiting(ctx: EvalContext) -> Score:
    """A refund must wait for a person; anything else must answer with what is expected."""
    if ctx.metadata.get("needs_approval"):
        return Suspended("approval")(ctx)
    return Contains()(ctx)


dataset = Dataset(
    [
        Case("Order A-1042 arrived broken. Please refund it in full.", id="refund",
             metadata={"needs_approval": True}),
        Case("Where is my order A-1043?", id="status", expected="in transit"),
        Case("Where is my order Z-9?", id="unknown", expected="could not find"),
    ],
    evaluators=[answered_or_waiting, ToolTrajectory(["lookup_order"], mode="in_order"),
                SideEffectsAtMost(0), MaxSteps(3)],
    name="demo-support",
)


def contexts() -> Iterator[RunContext]:
    for script in SCRIPTS:
        yield make_ctx(FakeLLM.script(script))


async def main() -> int:
    made = contexts()
    report = await dataset.evaluate(support_agent(), lambda: next(made), max_concurrency=1,
                                    progress=False)
    report.print(timings=False)
    return 0 if report.passed else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
