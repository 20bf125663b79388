"""Every Python example in docs/ runs, and prints what the page says it prints.

A ```python block runs on its own in a fresh interpreter; when an ```output block
follows it, its stdout must match that block exactly, line for line, trailing spaces
included (a reader copying the output cannot see them). An example that reads
``DATABASE_URL`` gets the session's PostgreSQL server there.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
_BLOCK = re.compile(r"```python\n(?P<code>.*?)```\s*(?:```output\n(?P<out>.*?)```)?", re.DOTALL)


def _examples() -> list[tuple[str, str, str | None]]:
    found = []
    for page in sorted(DOCS.glob("*.md")):
        for index, match in enumerate(_BLOCK.finditer(page.read_text(encoding="utf-8"))):
            found.append((f"{page.name}#{index + 1}", match["code"], match["out"]))
    return found


def _lines(text: str) -> list[str]:
    return text.strip("\n").splitlines()


EXAMPLES = _examples()


@pytest.mark.parametrize(("name", "code", "expected"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_doc_example_runs(
    name: str, code: str, expected: str | None, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    env = None
    if "DATABASE_URL" in code:  # a Postgres example: give it the session's server
        env = {**os.environ, "DATABASE_URL": request.getfixturevalue("postgres_dsn")}
    # faulthandler: a crash of a native extension (one Temporal example died once with
    # SIGSEGV on a loaded machine, not seen again) shows every thread's stack in stderr.
    result = subprocess.run(
        [sys.executable, "-X", "faulthandler", "-c", code], capture_output=True, text=True,
        timeout=120,
        cwd=tmp_path, check=False, env=env,
    )
    assert result.returncode == 0, f"{name} failed:\n{result.stderr}"
    if expected is not None:
        assert _lines(result.stdout) == _lines(expected), name


def test_docs_have_examples() -> None:
    assert len(EXAMPLES) >= 1
