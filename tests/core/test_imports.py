"""The core is standard-library only at import time: optional extras load lazily."""

from __future__ import annotations

import json
import subprocess
import sys

OPTIONAL_EXTRAS = ("pydantic", "attr", "attrs", "anthropic", "openai", "mcp", "opentelemetry")

_PROBE = """
import json, sys
before = set(sys.modules)
import agentkit.tools, agentkit.core.testing
new = sorted({m.split(".")[0] for m in set(sys.modules) - before})
every = sorted({m.split(".")[0] for m in sys.modules})
print(json.dumps({"new": new, "every": every}))
"""


def test_importing_the_tools_and_testing_api_loads_no_third_party_module() -> None:
    result = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    modules = json.loads(result.stdout)
    loaded = modules["new"]

    assert "agentkit" in loaded
    assert [name for name in modules["every"] if name in OPTIONAL_EXTRAS] == []
    outside_stdlib = [
        name for name in loaded if name != "agentkit" and name not in sys.stdlib_module_names
    ]
    assert outside_stdlib == []
