"""``agentkit demo --model google:...`` and ``vertex:...``: it runs with credentials, and
says which variable is missing without them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .conftest import WireServer
from .fake_gemini import answer, bodies, events, usage

_HIDDEN = {"AGENTKIT_MODEL", "CLOUDSDK_CONFIG", "GEMINI_API_KEY", "GOOGLE_API_KEY",
           "GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL", "GOOGLE_CLOUD_PROJECT",
           "GOOGLE_CLOUD_LOCATION",
           "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_APPLICATION_CREDENTIALS"}


def _demo(spec: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in _HIDDEN}
    return subprocess.run(
        [sys.executable, "-m", "agentkit", "demo", "--model", spec], capture_output=True,
        text=True, timeout=60, env={**clean, **env}, check=False,
    )


def test_the_demo_without_a_key_names_the_variables_in_one_line() -> None:
    result = _demo("google:gemini-2.5-flash")
    assert (result.returncode, result.stdout, result.stderr) == (2, "", (
        "agentkit demo: model 'google:gemini-2.5-flash' failed: google: no credentials: set "
        "GEMINI_API_KEY (or GOOGLE_API_KEY) or pass GeminiLLM(api_key=...)\n"
    ))


def test_the_demo_runs_against_gemini_with_a_key(wire: WireServer) -> None:
    wire.reply(events(answer([{"text": "No refund needed."}], "STOP", usage(12, 3))))
    result = _demo("google:gemini-2.5-flash", GEMINI_API_KEY="test-key",
                   GOOGLE_GEMINI_BASE_URL=wire.url)
    assert (result.returncode, result.stderr) == (0, "")
    assert "final   complete after 1 model calls; 12 input + 3 output tokens" in result.stdout
    assert [r.path for r in wire.requests] == [
        "/v1/models/gemini-2.5-flash:streamGenerateContent?alt=sse"]
    assert wire.requests[0].headers["x-goog-api-key"] == "test-key"
    bodies(wire)


def test_the_demo_on_vertex_without_a_login_says_how_to_log_in(tmp_path: Path) -> None:
    # HOME elsewhere: no gcloud application-default file to find; not on Google Cloud.
    result = _demo("vertex:gemini-2.5-pro", GOOGLE_CLOUD_PROJECT="acme", HOME=str(tmp_path),
                   NO_GCE_CHECK="true")
    assert (result.returncode, result.stdout, result.stderr) == (2, "", (
        "agentkit demo: model 'vertex:gemini-2.5-pro' failed: vertex: no credentials: Vertex "
        "AI found no Application Default Credentials: run `gcloud auth application-default "
        "login`, set GOOGLE_APPLICATION_CREDENTIALS, or pass GeminiLLM(credentials=...)\n"
    ))
