"""A newcomer's first command: `make demo` in a fresh clone installs quietly and runs
the demo, whose banner says how to run the command from there."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_make_demo_in_a_fresh_clone_is_quiet_and_names_the_working_command(
    tmp_path: Path,
) -> None:
    clone = tmp_path / "agentkit"
    clone.mkdir()
    for name in ("Makefile", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, clone / name)
    shutil.copytree(ROOT / "agentkit", clone / "agentkit",
                    ignore=shutil.ignore_patterns("__pycache__"))
    result = subprocess.run(
        ["make", "demo", f"PYTHON={sys.base_prefix}/bin/python3"], cwd=clone,
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "Editable installation" not in result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stdout.splitlines()
    start = lines.index(
        "agentkit demo: SCRIPTED and offline. No model is called: FakeLLM plays the"
    )
    assert lines[start:start + 5] == [
        "agentkit demo: SCRIPTED and offline. No model is called: FakeLLM plays the",
        "model from the script in agentkit/demo.py. With a real model:",
        "  .venv/bin/pip install -e '.[anthropic]'",
        "  ANTHROPIC_API_KEY=... .venv/bin/agentkit demo --model anthropic:claude-sonnet-4-6",
        "",
    ]
