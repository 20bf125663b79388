"""Without the ``temporal`` extra, the import error says what to install."""

from __future__ import annotations

import subprocess
import sys

import pytest

BLOCK_TEMPORALIO = """
import sys

import pytest
sys.modules["temporalio"] = None  # as if the extra were not installed
try:
    import agentkit.integrations.temporal
except ImportError as exc:
    print(exc)
"""


def test_missing_sdk_names_the_extra() -> None:
    out = subprocess.run(
        [sys.executable, "-c", BLOCK_TEMPORALIO], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == (
        "agentkit.integrations.temporal needs the Temporal Python SDK: "
        'pip install "agentkit-framework[temporal]"'
    )


def test_core_does_not_import_temporalio() -> None:
    code = "import agentkit, sys; print('temporalio' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == "False"


def test_run_options_refuse_what_cannot_schedule() -> None:
    from agentkit.integrations.temporal import RunOptions

    with pytest.raises(ValueError) as caught:
        RunOptions(heartbeat_timeout=0)
    assert str(caught.value) == (
        "RunOptions.heartbeat_timeout must be a positive number of seconds, got 0"
    )
    with pytest.raises(ValueError) as caught:
        RunOptions(continue_as_new_after=0)
    assert str(caught.value) == (
        "RunOptions.continue_as_new_after must be an int of at least 1, got 0"
    )
