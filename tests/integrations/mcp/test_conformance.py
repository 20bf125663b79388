"""The official MCP conformance suite's server scenarios against `agentkit mcp serve --http`.

One server process, one suite process (``--suite all``, every scenario in a row, about
ten seconds); each scenario's ``checks.json`` is read back and judged here, so a failing
scenario fails the test naming the scenario, the check and the suite's own message.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

TOOLS = Path(__file__).with_name("conformance_tools.py")

APPLICABLE = {
    "server-initialize", "ping", "tools-list", "logging-set-level",
    "tools-call-simple-text", "tools-call-image", "tools-call-audio",
    "tools-call-embedded-resource", "tools-call-mixed-content", "tools-call-with-logging",
    "tools-call-error", "tools-call-with-progress", "tools-call-sampling",
    "tools-call-elicitation", "elicitation-sep1034-defaults", "elicitation-sep1330-enums",
    "json-schema-2020-12", "server-sse-multiple-streams", "dns-rebinding-protection",
}
"""Scenarios a tools-only server must pass (docs/mcp-serve.md lists them)."""

NOT_APPLICABLE = {
    # agentkit serves tools; resources, prompts and completions are not served.
    "completion-complete", "resources-list", "resources-read-text", "resources-read-binary",
    "resources-templates-read", "resources-subscribe", "resources-unsubscribe",
    "prompts-list", "prompts-get-simple", "prompts-get-with-args",
    "prompts-get-embedded-resource", "prompts-get-with-image",
    # Resuming a cut SSE stream needs an event store kept by the server; none is kept.
    "server-sse-polling",
}

_RESULT_DIR = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d\d-\d\dT[\d-]+Z$")


def _checks(results: Path) -> dict[str, list[dict[str, object]]]:
    found: dict[str, list[dict[str, object]]] = {}
    for directory in sorted(results.iterdir()):
        match = _RESULT_DIR.match(directory.name)
        assert match, f"unexpected result folder {directory.name!r}"
        found[match["scenario"]] = json.loads((directory / "checks.json").read_text())
    return found


def _problems(scenario: str, checks: list[dict[str, object]]) -> list[str]:
    failed = [
        f"{scenario}: {check['id']} {check['status']}: {check.get('errorMessage')}"
        for check in checks
        if check["status"] not in ("SUCCESS", "INFO", "WARNING")
    ]
    if not failed and not any(check["status"] == "SUCCESS" for check in checks):
        failed.append(f"{scenario}: no check succeeded: {checks}")
    return failed


def test_conformance_server_scenarios_pass_against_agentkit_mcp_serve(
    node_tools: Any, http_server: Callable[[Sequence[str]], str], tmp_path: Path
) -> None:
    url = http_server([sys.executable, "-m", "agentkit", "mcp", "serve", str(TOOLS),
                       "--http", "127.0.0.1:{port}"])
    results = tmp_path / "results"
    suite = subprocess.run(
        [str(node_tools.bin("conformance")), "server", "--url", url, "--suite", "all",
         "-o", str(results)],
        env=node_tools.env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    checks = _checks(results)

    assert set(checks) == APPLICABLE | NOT_APPLICABLE, (
        "the suite's scenarios changed; sort the new ones into APPLICABLE or NOT_APPLICABLE "
        f"(and docs/mcp-serve.md): {sorted(set(checks) ^ (APPLICABLE | NOT_APPLICABLE))}\n"
        f"{suite.stdout[-2000:]}{suite.stderr[-2000:]}"
    )
    problems = [p for scenario in sorted(APPLICABLE) for p in _problems(scenario,
                                                                        checks[scenario])]
    assert problems == [], "\n".join(problems)
