"""`from agentkit import Agent, tool` imports only what running an agent needs: beyond
asyncio (whose base_events imports ssl and socket, as for any asyncio program), no
platform, uuid or decimal, which the store codec and owner ids used to pull in."""

from __future__ import annotations

import subprocess
import sys

CODE = """\
import sys
import asyncio
before = set(sys.modules)
from agentkit import Agent, tool
added = set(sys.modules) - before
print(sorted(m for m in ("ssl", "platform", "uuid", "decimal", "socket") if m in added))
print("ssl" in before)
"""


def test_the_everyday_import_adds_no_platform_uuid_or_decimal() -> None:
    result = subprocess.run(
        [sys.executable, "-c", CODE], capture_output=True, text=True, check=True, timeout=120
    )
    assert result.stdout.split("\n") == ["[]", "True", ""]
