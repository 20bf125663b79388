"""Every module of agentkit/ can be read in one sitting: none is over 500 lines
(STYLE.md: split at about 500)."""

from __future__ import annotations

from pathlib import Path

import agentkit

ROOT = Path(agentkit.__file__).parent
LIMIT = 500


def test_no_module_of_agentkit_is_over_500_lines() -> None:
    sizes = {
        str(path.relative_to(ROOT.parent)): len(path.read_text(encoding="utf-8").splitlines())
        for path in ROOT.rglob("*.py")
    }
    assert {name: lines for name, lines in sizes.items() if lines > LIMIT} == {}


def test_the_agent_is_a_face_of_at_most_250_lines() -> None:
    """Issue 21: what is not the face (the lifecycle, decisions, option checks) lives in
    the module that owns it."""
    lines = len((ROOT / "agents" / "agent.py").read_text(encoding="utf-8").splitlines())
    assert lines <= 250, f"agentkit/agents/agent.py has {lines} lines"
