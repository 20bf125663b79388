"""The test suite's throwaway PostgreSQL server cleans up after a run that was killed:
the server dies with its owner, and the next start removes what was left."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import postgres_server

SCRIPT = Path(__file__).with_name("postgres_server.py")


def _postmaster_pid(folder: Path) -> int:
    return int((folder / "data" / "postmaster.pid").read_text().split()[0])


def _gone(pid: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        # A zombie still answers signal 0; it is gone once its state says so.
        try:
            if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
                return True
        except OSError:
            return True
        time.sleep(0.02)
    return False


def test_a_server_whose_owner_is_killed_stops_and_is_swept_away() -> None:
    owner = subprocess.Popen(
        [sys.executable, str(SCRIPT)], stdout=subprocess.PIPE, text=True
    )
    assert owner.stdout is not None
    dsn = owner.stdout.readline().strip()
    folder = Path(dsn.rpartition("host=")[2])
    server_pid = _postmaster_pid(folder)

    owner.send_signal(signal.SIGKILL)  # no cleanup code runs in the owner
    owner.wait(timeout=30)

    assert _gone(server_pid, within=30)
    assert folder.exists()  # nobody removed it yet
    postgres_server.sweep_stale()
    assert not folder.exists()
