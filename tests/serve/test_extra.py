"""Without the ``serve`` extra, creating an app says what to install; tokens and
principals work without it."""

from __future__ import annotations

import subprocess
import sys

BLOCK_STARLETTE = """
import sys
sys.modules["starlette"] = None  # as if the extra were not installed
from agentkit.serve import Principal, create_app
print(Principal("ana").sees("org1:dom1"), "starlette" in sys.modules and
      sys.modules["starlette"] is not None)
try:
    create_app([], context=lambda: None)
except ImportError as exc:
    print(exc)
"""


def test_a_missing_extra_is_named_when_an_app_is_created() -> None:
    out = subprocess.run(
        [sys.executable, "-c", BLOCK_STARLETTE], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == [
        "True False",
        'agentkit.serve needs Starlette and uvicorn, which are not installed: pip install '
        '"agentkit-framework[serve]"',
    ]
