"""The official MCP conformance suite's client scenarios, run against agentkit's client
(``conformance_client.py``: ``connect_http`` inside a FakeLLM-scripted agent)."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from node_tools import NodeTools

SCRIPT = Path(__file__).with_name("conformance_client.py")
SCENARIOS = (
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
    "auth/cross-app-access-complete-flow",
)
"""Every client scenario of @modelcontextprotocol/conformance 0.1.16 except two (see
docs/mcp-consume.md):

- sse-retry: the SDK's transport, and a timing check a loaded machine fails;
- auth/2025-03-26-oauth-metadata-backcompat: the scenario serves authorization server
  metadata at the resource's root well-known URL (no protected resource metadata)
  naming issuer ``<origin>/oauth``. On that legacy path the SDK's OAuthClientProvider
  expects the issuer to be the resource's origin (``_expected_issuer``, mcp 2.3.0
  ``mcp/client/auth/oauth2.py``) and ``validate_metadata_issuer``
  (``mcp/client/auth/utils.py``; SEP-2468 / RFC 8414 section 3.3) raises
  ``OAuthFlowError: Authorization server metadata issuer mismatch:
  http://localhost:PORT/oauth != http://localhost:PORT`` before any registration, so
  the SDK itself refuses the flow (on purpose: RFC 8414 says such metadata must not be
  used)."""


def run_scenario(node_tools: NodeTools, scenario: str, out: Path) -> tuple[str, str]:
    completed = subprocess.run(
        [str(node_tools.bin("conformance")), "client",
         "--command", f"{sys.executable} {SCRIPT}",
         "--scenario", scenario, "--timeout", "120000", "-o", str(out)],
        env=node_tools.env, capture_output=True, text=True, timeout=300, check=False,
    )
    report = completed.stdout + completed.stderr  # the suite reports on stderr
    passed = completed.returncode == 0 and "OVERALL: PASSED" in report
    return scenario, "passed" if passed else report[-3000:]


def test_the_conformance_suites_client_scenarios_pass(
    node_tools: NodeTools, tmp_path: Path
) -> None:
    with ThreadPoolExecutor(max_workers=4) as pool:
        verdicts = dict(pool.map(lambda s: run_scenario(node_tools, s, tmp_path), SCENARIOS))

    assert verdicts == dict.fromkeys(SCENARIOS, "passed")
