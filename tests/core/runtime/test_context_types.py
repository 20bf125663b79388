"""RunContext's budget and checkpointer are typed by the Protocols in ports, not Any."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

USE = """\
from typing import assert_type

from agentkit.core.contracts.ports import BudgetLedger, Checkpointer
from agentkit.core.policies import Budget
from agentkit.core.testing import make_test_ctx

ctx = make_test_ctx(budget=Budget(max_calls=2))
assert_type(ctx.budget, BudgetLedger | None)
assert_type(ctx.checkpointer, Checkpointer | None)
assert_type(ctx.for_run("r2").budget, BudgetLedger | None)
make_test_ctx(budget="ten dollars")
"""


def test_the_budget_and_checkpointer_are_typed_by_their_protocols(tmp_path: Path) -> None:
    (tmp_path / "use.py").write_text(USE)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"),
         "--no-error-summary", "--hide-error-context", str(tmp_path / "use.py")],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert [line.split(": ", 1)[1] for line in result.stdout.splitlines()] == [
        'error: Argument "budget" to "make_test_ctx" has incompatible type "str"; '
        'expected "BudgetLedger | None"  [arg-type]'
    ]
