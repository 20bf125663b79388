"""examples/evals_demo.py: an eval of the demo agent runs offline and prints its report."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "evals_demo.py"


def test_the_evals_demo_passes_offline_and_prints_the_report(tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True,
                         cwd=tmp_path, timeout=120, check=False,
                         env={"PATH": "/usr/bin:/bin"})
    assert (run.returncode, run.stderr) == (0, "")
    assert run.stdout.splitlines() == [
        "eval 'demo-support': 3 case(s) x 1 repeat(s)",
        "",
        "case     run  result  answered_or_waiting  ToolTrajectory  SideEffectsAtMost  "
        "MaxSteps  cost",
        "refund   1    pass    pass                 pass            pass               "
        "pass      $0.0000",
        "status   1    pass    pass                 pass            pass               "
        "pass      $0.0000",
        "unknown  1    pass    pass                 pass            pass               "
        "pass      $0.0000",
        "",
        "evaluator            pass rate  mean  stdev",
        "answered_or_waiting  100%       1.00  0.00",
        "ToolTrajectory       100%       1.00  0.00",
        "SideEffectsAtMost    100%       1.00  0.00",
        "MaxSteps             100%       2.00  0.00",
        "",
        "passed 3 of 3 (100%); agent cost $0.0000, judge cost $0.0000",
    ]
